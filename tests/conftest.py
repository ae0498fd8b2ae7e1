"""Shared test configuration: the `requires_cuda` marker and a headless matplotlib."""

import os

import pytest
import torch

os.environ.setdefault("MPLBACKEND", "Agg")


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU; none is available here")
    for item in items:
        if "requires_cuda" in item.keywords:
            item.add_marker(skip)
