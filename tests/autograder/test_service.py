"""The class's check service (autograder/grader/service.py) and the lab using it by URL."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request

import pytest

from autograder import inlab
from autograder.grader.sandbox import Isolation
from autograder.grader.service import CheckService, make_server

from .fixture_course import CORRECT, WRONG, cell_index, submission, write

TOKEN = "a-token-for-the-class-0123456789"


@pytest.fixture
def service(demo):
    course, _, _ = demo
    server = make_server(CheckService(course, TOKEN, Isolation("none")), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def _post(url, body: bytes, token=TOKEN):
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
    try:
        with urllib.request.urlopen(
            urllib.request.Request(url, data=body, headers=headers), timeout=120
        ) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_the_service_checks_a_posted_notebook(service, demo):
    _, _, stub = demo
    body = json.dumps({"notebook": submission(stub, WRONG), "exercise": "mean"}).encode()
    status, data = _post(f"{service}/check", body)
    assert status == 200 and data["points"] == 0 and data["notebook"] == "01-demo.ipynb", data
    assert "divided by the count" in data["failures"][0]


def test_the_service_refuses_what_it_should(service, demo):
    _, _, stub = demo
    good = json.dumps({"notebook": stub, "exercise": "add"}).encode()
    assert _post(f"{service}/check", good, token="wrong-token-wrong-token")[0] == 401
    status, data = _post(f"{service}/check", b"[1, 2]")
    assert status == 400 and "JSON object" in data["error"]
    status, data = _post(f"{service}/check", json.dumps({"exercise": "add"}).encode())
    assert status == 400 and "'notebook'" in data["error"]
    status, data = _post(f"{service}/nope", good)
    assert status == 404
    with pytest.raises(ValueError, match="at least 16"):
        CheckService(demo[0], "short", Isolation("none"))


def test_a_lab_without_the_hidden_tests_checks_through_the_service(
    service, demo, tmp_path, monkeypatch
):
    _, _, stub = demo
    saved = submission(stub, WRONG)
    path = write(tmp_path / "01-demo.ipynb", saved)
    monkeypatch.setenv("AUTOGRADER_CHECK_URL", f"{service}/check")
    monkeypatch.setenv("AUTOGRADER_CHECK_TOKEN", TOKEN)
    lab = inlab._Lab(None)
    lab.sources = {saved["cells"][cell_index(saved, "ch01_add")]["id"]: CORRECT["ch01_add"]}
    result = lab.run_check(str(path), "add")  # the code as last run, not as saved
    assert result.error is None and result.points == 2, result
    assert json.loads((tmp_path / "progress.json").read_text())["chapters"]["01-demo"]["add"]
    monkeypatch.setenv("AUTOGRADER_CHECK_TOKEN", "wrong-token-wrong-token")
    refused = lab.run_check(str(path), "add")
    assert refused.error and "token" in refused.error
