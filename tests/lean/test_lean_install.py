"""companion installed as a library on its own: the built wheel in an environment with the core only.

The environment holds exactly the distributions the core needs (torch, numpy, tqdm and what they
require, taken from the installed packages: no network) and the wheel of this project installed
without its extras; tests/lean/lean_run.py then trains, resumes exactly, runs smoke_test and the
doctor, and checks that each extra's feature fails with one clear error.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from importlib.metadata import distribution
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
CORE = ("torch", "numpy", "tqdm")

pytestmark = pytest.mark.slow


def _closure(names) -> dict[str, object]:
    """The installed distributions ``names`` need, transitively (markers evaluated, no extras)."""
    env = default_environment()
    found, todo = {}, list(names)
    while todo:
        name = todo.pop()
        key = name.lower().replace("_", "-")
        if key in found:
            continue
        dist = distribution(name)
        found[key] = dist
        for line in dist.requires or []:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({**env, "extra": ""}):
                todo.append(req.name)
    return found


def _link_distribution(dist, site: Path) -> None:
    """Make a distribution importable in ``site`` as pip would have put it there (symlinks)."""
    tops = {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
    base = Path(dist.locate_file(""))
    for top in tops:
        target = site / top
        if not target.exists() and not target.is_symlink():
            target.symlink_to(base / top)


@pytest.fixture(scope="module")
def lean(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lean")
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
            "-w",
            str(tmp / "dist"),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp / "dist").glob("pytorch_in_practice-*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    core = _closure(CORE)
    for dist in core.values():
        _link_distribution(dist, site)
    env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("PYTHONPATH", None)
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--no-deps", "--quiet", str(wheel)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert installed.returncode == 0, installed.stderr
    return python, site, wheel, sorted(core), env


def test_the_wheel_needs_only_torch_numpy_and_tqdm_and_ships_the_digits(lean):
    python, site, wheel, core, env = lean
    listed = subprocess.run(  # the installed wheel's own metadata, read in the lean environment
        [
            str(python),
            "-c",
            "from importlib.metadata import requires; "
            "print('\\n'.join(requires('pytorch-in-practice')))",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout.splitlines()
    plain = sorted(Requirement(r).name for r in listed if Requirement(r).marker is None)
    assert plain == sorted(CORE)
    extras = {str(Requirement(r).marker) for r in listed if Requirement(r).marker is not None}
    for extra in ("onnx", "vision", "plots", "widgets", "course"):
        assert any(f'extra == "{extra}"' in m for m in extras), extra
    checked = subprocess.run(
        [str(python), "-m", "pip", "check"], capture_output=True, text=True, env=env
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr  # every core need is met
    assert (site / "companion" / "datasets" / "digits.npz").is_file()
    assert not (site / "sklearn").exists() and "scikit-learn" not in core


def test_core_features_work_and_each_extra_says_how_to_install_it(lean, tmp_path):
    python, site, *_, env = lean
    script = tmp_path / "lean_run.py"
    shutil.copy(ROOT / "tests" / "lean" / "lean_run.py", script)
    run = subprocess.run(
        [str(python), str(script), str(site)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**env, "MPLBACKEND": "Agg"},
        timeout=600,
    )
    print(run.stdout)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-5000:]
    for line in (
        "ok core only",
        "ok fit",
        "bit-exact",
        "ok smoke_test",
        "ok doctor",
        "'onnx' extra",
        "'plots' extra",
        "'vision' extra",
    ):
        assert line in run.stdout
