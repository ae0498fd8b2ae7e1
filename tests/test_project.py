"""The project's own files agree with each other."""

import os
import re
import subprocess
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]


def _pyproject_requirements():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        reqs += extra
    return reqs


def _environment_requirements():
    lines = (ROOT / "environment.yml").read_text().splitlines()
    start = lines.index("  - pip:")
    return [m.group(1) for ln in lines[start + 1 :] if (m := re.match(r"\s+- ([^#\s]+)", ln))]


def _names(reqs):
    return {re.split(r"[<>=!~ \[]", r, maxsplit=1)[0].lower(): r for r in reqs}


def test_environment_yml_lists_the_same_requirements_as_pyproject():
    assert _names(_environment_requirements()) == _names(_pyproject_requirements())


def test_environment_yml_python_matches_requires_python():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert f"python{project['requires-python']}" in (ROOT / "environment.yml").read_text()


def test_ci_runs_make_test():
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_make_test_installs_chromium_and_ci_requires_the_browser_tests():
    """`make test` installs the browser as it installs the sandbox, so CI runs what a newcomer runs."""
    makefile = (ROOT / "Makefile").read_text()
    browser = re.search(r"^browser:.*?(?=^\S)", makefile, re.M | re.S).group(0)
    assert "DEBIAN_PACKAGES,chromium fonts-liberation fonts-noto-cjk" in browser
    assert "apt-get install -y -q $(1)" in makefile
    test = re.search(r"^test:.*?(?=^\S)", makefile, re.M | re.S).group(0)
    assert "setup sandbox browser" in test
    run = (ROOT / ".ci" / "run").read_text()
    assert "export REQUIRE_BROWSER_TESTS=1" in run
    for text in (run, makefile):
        assert "playwright install" not in text  # it would download a browser: CI is offline


def test_the_oldest_environment_pins_the_floor_of_torch():
    """The Makefile's second environment tests exactly the torch floor pyproject claims."""
    makefile = (ROOT / "Makefile").read_text()
    oldest = re.search(r"^TORCH_OLDEST := (\S+)$", makefile, re.M).group(1)
    floor = _names(_pyproject_requirements())["torch"]
    assert floor == f"torch>={'.'.join(oldest.split('.')[:2])}", (floor, oldest)
    assert "test-oldest" in re.search(r"^test:.*?(?=^\S)", makefile, re.M | re.S).group(0)


def test_requirements_script_leaves_out_what_it_is_told():
    import subprocess
    import sys

    script = ROOT / ".ci" / "requirements.py"
    run = [sys.executable, str(script), "--extra", "dev"]
    without = ["--without", "torch", "torchvision"]
    lines = subprocess.run(run + without, capture_output=True, text=True, check=True).stdout.split()
    names = set(_names(lines))
    assert {"numpy", "tqdm", "pytest"} <= names
    # left out, or in an extra not asked for (onnx, course)
    assert not names & {"torch", "torchvision", "jupyterlab", "onnxruntime"}
    with_onnx = subprocess.run(
        run + ["--extra", "onnx"] + without, capture_output=True, text=True, check=True
    )
    assert "onnxruntime" in _names(with_onnx.stdout.split())


def _lab_command(*args: str, env_lang: str = "C.UTF-8") -> str:
    env = {**os.environ, "LANG": env_lang}
    done = subprocess.run(
        ["make", "-n", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


@pytest.mark.parametrize(
    ("args", "env_lang", "folder"),
    [
        (("lab",), "C.UTF-8", "notebooks"),
        (("lab",), "zh_CN.UTF-8", "notebooks"),  # a Chinese locale alone keeps `make lab` English
        (("lab", "LANG=zh"), "C.UTF-8", "notebooks-zh"),
        (("lab-zh",), "C.UTF-8", "notebooks-zh"),
    ],
)
def test_make_lab_opens_the_edition_asked_for(args, env_lang, folder):
    command = _lab_command(*args, env_lang=env_lang)
    edition = "en" if folder == "notebooks" else "zh"
    assert f"release --quiet --trust --lang {edition}" in command
    assert f"--ServerApp.root_dir={folder} " in command + " "


def test_the_chinese_readme_has_the_two_commands_and_every_chapter():
    text = (ROOT / "README.zh.md").read_text(encoding="utf-8")
    assert "make lab LANG=zh" in text and "make test" in text and "make lab-zh" in text
    chapters = sorted(p.name for p in (ROOT / "course" / "source").iterdir() if p.is_dir())
    rows = re.findall(r"^\| (\d+) — ", text, re.M)
    assert rows == [str(int(name[:2])) for name in chapters]
    for link in re.findall(r"\]\(([^)#]+)\)", text):
        assert (ROOT / link).exists(), link
    english = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "README.zh.md" in english  # each README points to the other
