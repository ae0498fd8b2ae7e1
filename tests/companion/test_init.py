"""`import companion` stays light, and the public names resolve."""

import json
import subprocess
import sys

import companion

HEAVY = [
    "onnx",
    "onnxruntime",
    "onnxscript",
    "matplotlib",
    "ipywidgets",
    "torchvision",
    "sklearn",
    "IPython",
]


def test_import_does_not_pull_heavy_modules():
    code = (
        "import sys, json, torch; before = set(sys.modules); import companion; "
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_every_public_name_resolves():
    missing = [name for name in companion.__all__ if not hasattr(companion, name)]
    assert missing == []


def test_unknown_names_raise_attribute_error():
    try:
        companion.no_such_thing  # noqa: B018
    except AttributeError as err:
        assert "no_such_thing" in str(err)
    else:
        raise AssertionError("expected AttributeError")
