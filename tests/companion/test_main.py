"""Tests for companion/__main__.py: the command line (`python -m companion ...`)."""

import json
import subprocess
import sys

import pytest
import torch

from companion import env
from companion.__main__ import build_parser, main


def test_doctor_prints_the_report_and_exits_0_on_the_cpu(capsys):
    assert main(["doctor", "--size", "32"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PyTorch environment doctor")
    assert "[ OK ] cpu" in out and "0 FAIL" in out


def test_doctor_json(capsys):
    assert main(["doctor", "--json", "--no-matmul"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is True
    assert "torch" in [c["name"] for c in data["checks"]]
    assert all(c["section"] != "matmul" for c in data["checks"])


def test_doctor_exits_1_when_a_check_fails(monkeypatch, capsys):
    monkeypatch.setattr(env, "_nvidia_smi", lambda: ("470.82", "11.4", None))
    monkeypatch.setattr(torch.version, "cuda", "12.1")
    assert main(["doctor", "--no-matmul"]) == 1
    assert "[FAIL] driver" in capsys.readouterr().out


def test_diagnose_command_from_arguments_and_stdin(monkeypatch, capsys):
    assert main(["diagnose", "Torch", "not", "compiled", "with", "CUDA", "enabled"]) == 0
    assert "CPU-only build" in capsys.readouterr().out
    monkeypatch.setattr(sys, "stdin", __import__("io").StringIO("CUDA out of memory. Tried"))
    assert main(["diagnose", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["key"] == "out_of_memory"


def test_no_command_prints_help_and_exits_2(capsys):
    assert main([]) == 2
    out = capsys.readouterr().out
    assert "doctor" in out and "diagnose" in out and "examples:" in out


def test_help_describes_the_doctor(capsys):
    with pytest.raises(SystemExit) as info:
        main(["doctor", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "--json" in out and "Exit status" in out and "default: 512" in out


def test_bad_arguments_exit_2(capsys):
    for argv in (["doctor", "--size", "-1"], ["no-such-command"]):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2
    assert "positive integer" in capsys.readouterr().err


def test_parser_has_room_for_more_commands():
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command")
    assert set(commands.choices) == {"doctor", "diagnose"}


def test_python_dash_m_companion_doctor_runs():
    done = subprocess.run(
        [sys.executable, "-m", "companion", "doctor", "--size", "32"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Matmul on each device" in done.stdout


def _broken_torch(tmp_path, error: str) -> dict:
    """An environment whose `import torch` fails with ``error`` (a shadowing fake package)."""
    fake = tmp_path / "torch"
    fake.mkdir()
    (fake / "__init__.py").write_text(f"raise {error}\n")
    import os
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(repo)])}


@pytest.mark.parametrize(
    ("error", "key_words"),
    [
        (
            "OSError('libtorch_cuda.so: cannot open shared object file')",
            "fresh virtual environment",
        ),
        ("ModuleNotFoundError(\"No module named 'torch'\")", "Activate the project's environment"),
    ],
)
def test_doctor_and_diagnose_run_when_import_torch_fails(tmp_path, error, key_words):
    environ = _broken_torch(tmp_path, error)
    run = [sys.executable, "-m", "companion"]
    doctor = subprocess.run([*run, "doctor"], capture_output=True, text=True, env=environ)
    assert doctor.returncode == 1, doctor.stderr
    assert "Traceback" not in doctor.stderr
    assert "[FAIL] torch" in doctor.stdout and "import torch failed" in doctor.stdout
    assert key_words in doctor.stdout
    diagnose = subprocess.run(
        [*run, "diagnose", "CUDA out of memory"], capture_output=True, text=True, env=environ
    )
    assert diagnose.returncode == 0, diagnose.stderr
    assert "ran out of memory" in diagnose.stdout


def test_import_companion_with_broken_torch_explains_on_use(tmp_path):
    environ = _broken_torch(tmp_path, "OSError('libc10.so: undefined symbol')")
    code = "import companion\ntry:\n    companion.fit\nexcept ImportError as e:\n    print(e)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environ)
    assert out.returncode == 0, out.stderr
    assert "companion.fit needs PyTorch, and `import torch` failed: OSError" in out.stdout
    assert "python -m companion doctor" in out.stdout


def test_diagnose_reads_binary_bytes_on_stdin():
    data = b"\xff\xfe garbage \x80\x81 RuntimeError: CUDA out of memory. Tried\n"
    out = subprocess.run(
        [sys.executable, "-m", "companion", "diagnose"], input=data, capture_output=True
    )
    assert out.returncode == 0, out.stderr.decode()
    assert b"ran out of memory" in out.stdout
