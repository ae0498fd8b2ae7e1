"""Shared test configuration: the `requires_cuda`, `requires_sandbox` and `requires_torchvision`
markers, headless plots."""

import os

import pytest
import torch

os.environ.setdefault("MPLBACKEND", "Agg")
# pytest runs two workers on two cores: one thread each avoids oversubscription, which makes
# tiny models 10-30 times slower.
torch.set_num_threads(1)


def _torchvision_problem() -> str | None:
    """Why torchvision cannot be used here (None when it can): absent, or built for another torch."""
    try:
        import torchvision  # noqa: F401
    except Exception as err:  # beside the torch 2.13 CPU wheel PyPI's torchvision fails to import
        return f"{type(err).__name__}: {err}"
    return None


def pytest_collection_modifyitems(config, items):
    from autograder.sandbox import problem

    reason = problem()
    vision = (
        _torchvision_problem() if any("requires_torchvision" in i.keywords for i in items) else None
    )
    skip_vision = pytest.mark.skip(reason=f"needs torchvision ({vision})")
    skip_sandbox = pytest.mark.skip(reason=f"needs the grading sandbox: {reason}")
    skip_cuda = pytest.mark.skip(reason="needs a CUDA GPU; none is available here")
    for item in items:
        if "requires_cuda" in item.keywords and not torch.cuda.is_available():
            item.add_marker(skip_cuda)
        if "requires_sandbox" in item.keywords and reason is not None:
            item.add_marker(skip_sandbox)
        if "requires_torchvision" in item.keywords and vision is not None:
            item.add_marker(skip_vision)
