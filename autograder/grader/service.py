"""A class's check service: Check for learners whose machines do not hold the hidden tests.

Learners who receive notebooks through nbgrader's exchange have no ``course/`` folder, so their
lab cannot check locally. An instructor runs this service where the course is (the grading
machine, a JupyterHub's server) and points the learners' labs at it with two environment variables
of their kernels (``c.Spawner.environment`` on JupyterHub, or exported before ``jupyter lab``)::

    AUTOGRADER_CHECK_URL=http://grader.example:8765/check
    AUTOGRADER_CHECK_TOKEN=<the class's token>

The lab then sends the notebook (as saved, with the code last run laid over it) and the exercise;
the service checks it exactly as ``autograder check`` does, always in the grading sandbox, and
answers with the :class:`autograder.verdict.CheckResult` as JSON. Requests need the token (a
bearer token compared in constant time); a body over ``--max-mb`` is refused; at most ``--jobs``
checks run at once, the others wait.

Endpoints: ``POST /check`` (``{"notebook": {...}, "exercise": "evaluate", "sources": {...},
"order": [...]}``) and ``GET /health``.
"""

from __future__ import annotations

import hmac
import json
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from autograder.course import Course, CourseError
from autograder.grader.check import check_exercise_async
from autograder.grader.grade import DEFAULT_TIMEOUT, run_coroutine
from autograder.grader.sandbox import Isolation

__all__ = ["CheckService", "make_server"]


class CheckService:
    """What the HTTP handler calls: checks a posted notebook, a few at a time.

    Args:
        course: the course (with its hidden tests).
        token: the bearer token requests must carry.
        isolation: the sandbox (a service takes code from the network: never unconfined unless
            asked for).
        jobs: checks run at once. timeout: seconds per cell. max_bytes: the largest body.
    """

    def __init__(
        self,
        course: Course,
        token: str,
        isolation: Isolation,
        *,
        jobs: int = 1,
        timeout: float = DEFAULT_TIMEOUT,
        max_bytes: int = 32 * 2**20,
    ) -> None:
        if not token or len(token) < 16:
            raise ValueError(
                f"the service's token must be at least 16 characters, got {len(token or '')}"
            )
        self.course, self.token, self.isolation = course, token, isolation
        self.timeout, self.max_bytes = timeout, max_bytes
        self._slots = threading.BoundedSemaphore(max(1, jobs))

    def authorized(self, header: str | None) -> bool:
        given = (header or "").removeprefix("Bearer ").strip()
        return hmac.compare_digest(given.encode(), self.token.encode())

    def check(self, request: dict) -> dict:
        """The verdict for one request (plain data), or ``{"error": ...}`` for a bad one."""
        notebook, exercise = request.get("notebook"), request.get("exercise")
        if not isinstance(notebook, dict) or not isinstance(exercise, str) or not exercise:
            return {"error": "a request needs 'notebook' (the .ipynb as JSON) and 'exercise'"}
        sources = request.get("sources")
        order = request.get("order")
        if sources is not None and not (
            isinstance(sources, dict) and all(isinstance(v, str) for v in sources.values())
        ):
            return {"error": "'sources' must map cell ids to code"}
        try:
            name = self.course.chapter_of(notebook).released_name
        except CourseError as exc:
            return {"error": str(exc)}
        with self._slots, tempfile.TemporaryDirectory(prefix="check-service-") as folder:
            path = Path(folder) / name
            path.write_text(json.dumps(notebook), encoding="utf-8")
            result = run_coroutine(
                check_exercise_async(
                    path,
                    self.course,
                    exercise,
                    sources=sources,
                    order=order if isinstance(order, list) else None,
                    timeout=self.timeout,
                    isolation=self.isolation,
                )
            )
        data = result.to_dict()
        data["notebook"] = name  # not the service's temporary path
        return data


def make_server(service: CheckService, host: str, port: int) -> ThreadingHTTPServer:
    """An HTTP server answering ``POST /check`` and ``GET /health`` for ``service``."""

    class Handler(BaseHTTPRequestHandler):
        server_version = "autograder-check"

        def _reply(self, status: int, data: dict) -> None:
            body = json.dumps(data, ensure_ascii=False).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):  # noqa: N802 (http.server's name)
            if self.path == "/health":
                self._reply(200, {"ok": True})
            else:
                self._reply(404, {"error": f"no such endpoint {self.path!r}: POST /check"})

        def do_POST(self):  # noqa: N802
            if self.path != "/check":
                self._reply(404, {"error": f"no such endpoint {self.path!r}: POST /check"})
                return
            if not service.authorized(self.headers.get("Authorization")):
                self._reply(401, {"error": "missing or wrong token (Authorization: Bearer ...)"})
                return
            try:
                size = int(self.headers.get("Content-Length", "0"))
            except ValueError:
                size = -1
            if size <= 0 or size > service.max_bytes:
                self._reply(
                    413 if size > 0 else 411,
                    {"error": f"the body must be 1 to {service.max_bytes} bytes, got {size}"},
                )
                return
            try:
                request = json.loads(self.rfile.read(size))
                if not isinstance(request, dict):
                    raise ValueError("not a JSON object")
            except ValueError as exc:
                self._reply(400, {"error": f"bad request: {exc}"})
                return
            data = service.check(request)
            self._reply(400 if set(data) == {"error"} else 200, data)

        def log_message(self, format, *args):  # noqa: A002 (http.server's signature)
            pass  # one line per check is printed by the command, not per request here

    return ThreadingHTTPServer((host, port), Handler)
