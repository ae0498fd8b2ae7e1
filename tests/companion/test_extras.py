"""companion._extras: a feature whose extra is missing names the extra and the command."""

from __future__ import annotations

import json
import sys

import pytest

from companion._extras import MissingExtraError, need


def test_need_returns_the_module_when_it_is_there():
    assert need("json", "onnx", "anything") is json


def test_a_missing_package_names_the_feature_the_extra_and_the_command():
    with pytest.raises(MissingExtraError) as caught:
        need("no_such_package_here.sub", "plots", "History.plot")
    text = str(caught.value)
    assert text.startswith("History.plot needs no_such_package_here, which is not installed")
    assert "companion's 'plots' extra (matplotlib)" in text
    assert text.endswith("pip install 'pytorch-in-practice[plots]'")
    assert isinstance(caught.value, ImportError)  # what `except ImportError` code expects


def test_a_package_whose_own_dependency_is_missing_shows_that_instead(tmp_path, monkeypatch):
    """Installed but broken is another problem: installing the extra again would not fix it."""
    (tmp_path / "half_installed_pkg.py").write_text("import its_missing_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError) as caught:
        need("half_installed_pkg", "onnx", "companion.export_onnx")
    assert caught.value.name == "its_missing_dependency"
    assert not isinstance(caught.value, MissingExtraError)
    sys.modules.pop("half_installed_pkg", None)
