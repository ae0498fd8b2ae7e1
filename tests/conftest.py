"""Shared test configuration: the `requires_cuda` and `requires_sandbox` markers, headless plots."""

import os

import pytest
import torch

os.environ.setdefault("MPLBACKEND", "Agg")
# pytest runs two workers on two cores: one thread each avoids oversubscription, which makes
# tiny models 10-30 times slower.
torch.set_num_threads(1)


def pytest_collection_modifyitems(config, items):
    from autograder.sandbox import problem

    reason = problem()
    skip_sandbox = pytest.mark.skip(reason=f"needs the grading sandbox: {reason}")
    skip_cuda = pytest.mark.skip(reason="needs a CUDA GPU; none is available here")
    for item in items:
        if "requires_cuda" in item.keywords and not torch.cuda.is_available():
            item.add_marker(skip_cuda)
        if "requires_sandbox" in item.keywords and reason is not None:
            item.add_marker(skip_sandbox)
