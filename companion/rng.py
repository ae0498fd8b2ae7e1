"""Seeding and random-number-generator state, for reproducible runs and exact resume."""

from __future__ import annotations

import os
import random

import numpy as np
import torch

__all__ = ["seed_everything", "get_rng_state", "set_rng_state"]


def seed_everything(seed: int, *, deterministic: bool = False) -> int:
    """Seed Python, NumPy and PyTorch (CPU and every CUDA device) in one call.

    Args:
        seed: a non-negative integer.
        deterministic: also ask PyTorch for deterministic kernels
            (``torch.use_deterministic_algorithms(True)``, cuDNN benchmark off). Slower on GPU,
            and some operations then raise instead of running nondeterministically.

    Returns:
        The seed, so ``seed = seed_everything(0)`` reads well in a notebook.

    Raises:
        TypeError: if ``seed`` is not an int. ValueError: if it is negative or too large.

    Example:
        >>> seed_everything(0)
        0
    """
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int, got {type(seed).__name__} ({seed!r})")
    if not 0 <= seed < 2**32:
        raise ValueError(f"seed must be in [0, 2**32), got {seed}")
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device
    if deterministic:
        # cuBLAS needs this workspace setting to be deterministic; set before any CUDA work.
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True)
        torch.backends.cudnn.benchmark = False
    return seed


def get_rng_state() -> dict:
    """Capture every global random generator as plain values and tensors.

    The result loads with ``torch.load(weights_only=True)``, so it can live in a checkpoint.

    Example:
        >>> state = get_rng_state()
        >>> a = torch.rand(1); set_rng_state(state); b = torch.rand(1)
        >>> torch.equal(a, b)
        True
    """
    version, internal, gauss = random.getstate()
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    state = {
        "python": {"version": version, "state": list(internal), "gauss": gauss},
        "numpy": {
            "kind": str(kind),
            "keys": torch.from_numpy(keys.astype(np.int64)),
            "pos": int(pos),
            "has_gauss": int(has_gauss),
            "cached_gaussian": float(cached),
        },
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict) -> None:
    """Restore generators captured by :func:`get_rng_state`.

    Args:
        state: the dict :func:`get_rng_state` returned (Python's, NumPy's, torch's and, when
            it was taken on a CUDA machine, each GPU's generator state).

    Example:
        >>> state = get_rng_state()
        >>> first = torch.rand(3)
        >>> set_rng_state(state)  # back to where the state was taken
        >>> torch.equal(torch.rand(3), first)
        True

    Raises:
        ValueError: if ``state`` is not a dict made by :func:`get_rng_state`.
    """
    if not isinstance(state, dict) or "torch" not in state:
        raise ValueError(
            f"state must be a dict returned by get_rng_state(), got {type(state).__name__}"
        )
    if "python" in state:
        py = state["python"]
        random.setstate((py["version"], tuple(py["state"]), py["gauss"]))
    if "numpy" in state:
        npst = state["numpy"]
        keys = npst["keys"].numpy().astype(np.uint32)
        np.random.set_state(
            (npst["kind"], keys, npst["pos"], npst["has_gauss"], npst["cached_gaussian"])
        )
    torch.set_rng_state(state["torch"].cpu())
    if "cuda" in state and torch.cuda.is_available():
        cuda_states = [s.cpu() for s in state["cuda"]][: torch.cuda.device_count()]
        torch.cuda.set_rng_state_all(cuda_states)
