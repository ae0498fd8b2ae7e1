"""Shared test configuration: the `requires_cuda` marker and a headless matplotlib."""

import os

import pytest
import torch

os.environ.setdefault("MPLBACKEND", "Agg")
# pytest runs two workers on two cores: one thread each avoids oversubscription, which makes
# tiny models 10-30 times slower.
torch.set_num_threads(1)


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU; none is available here")
    for item in items:
        if "requires_cuda" in item.keywords:
            item.add_marker(skip)
