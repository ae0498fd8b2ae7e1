"""Choosing the device once, at the entry point."""

from __future__ import annotations

import torch

__all__ = ["pick_device"]


def _mps_available() -> bool:
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def pick_device(device: str | torch.device = "auto") -> torch.device:
    """Return the device to train on.

    Args:
        device: ``"auto"`` picks CUDA, then Apple MPS, then the CPU. Anything else
            (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"`` or a ``torch.device``) is checked
            and returned as a ``torch.device``.

    Returns:
        A ``torch.device``.

    Raises:
        TypeError: if ``device`` is not a string or ``torch.device``.
        ValueError: if the string is not a device PyTorch knows.
        RuntimeError: if the requested device is not available on this machine, with the
            likely reason.

    Example:
        >>> pick_device("cpu")
        device(type='cpu')
    """
    if not isinstance(device, (str, torch.device)):
        raise TypeError(
            f"device must be 'auto', a device string like 'cuda:0', or a torch.device; "
            f"got {type(device).__name__} ({device!r})"
        )
    if device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if _mps_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        dev = torch.device(device)
    except RuntimeError as err:
        raise ValueError(
            f"device={device!r} is not a device PyTorch knows; expected 'auto', 'cpu', "
            f"'cuda', 'cuda:N' or 'mps'"
        ) from err
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            hint = (
                "this PyTorch build has no CUDA support (a CPU-only wheel)"
                if torch.version.cuda is None
                else "no usable GPU or driver was found (check `nvidia-smi`)"
            )
            raise RuntimeError(
                f"device={device!r} was requested but CUDA is not available: {hint}. "
                f"Use device='auto' to fall back to the CPU, or run "
                f"`python -m companion doctor` for a diagnosis."
            )
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise RuntimeError(
                f"device={device!r} was requested but only {torch.cuda.device_count()} "
                f"CUDA device(s) exist (indices 0..{torch.cuda.device_count() - 1})"
            )
    if dev.type == "mps" and not _mps_available():
        raise RuntimeError(
            f"device={device!r} was requested but Apple MPS is not available on this machine "
            f"(it needs Apple silicon and, for current wheels, macOS 14 or later); use device='auto'"
        )
    return dev
