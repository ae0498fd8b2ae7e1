"""NumPy arrays to float32 tensors, with a copy only where one is needed.

NumPy computes in float64 by default, PyTorch's layers in float32. ``torch.from_numpy`` keeps the
array's dtype and shares its memory, ``torch.tensor`` always copies, and both refuse arrays with
negative strides (``a[::-1]``). :func:`as_float32` makes the decision once: a view when the array
already is what the model needs, one conversion otherwise.
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["as_float32"]

# NumPy dtype kinds that convert to float32 without losing their meaning: bool, signed and
# unsigned integers, floating point. Complex numbers, strings, objects and dates do not.
_NUMERIC_KINDS = "biuf"


def as_float32(array: np.ndarray, device: torch.device | str = "cpu") -> torch.Tensor:
    """Return ``array`` as a float32 tensor on ``device``, copying only when it must.

    A float32 array that stays on the CPU becomes a tensor that *shares* its memory: no copy
    is made, and writing into one shows in the other. That holds for any layout PyTorch can
    describe (contiguous, transposed, sliced with a step). Everything else is copied once:

    - another dtype is converted (float64 rounds to float32, and values beyond its range become
      ``inf`` with NumPy's overflow warning; integers and booleans become their float values);
    - negative strides (``a[::-1]``, ``np.flip``), which no tensor can describe, are laid out
      afresh;
    - a read-only array (``np.frombuffer`` on bytes, a memory map opened with ``mode="r"``) is
      copied, since a tensor cannot be made read-only;
    - a ``device`` other than the CPU receives the (converted) data in one transfer.

    Args:
        array: a NumPy array of booleans, integers or floats, of any shape (0-d included) and
            layout.
        device: where the tensor lives: ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"`` or a
            ``torch.device``.

    Returns:
        A float32 tensor of the array's shape on ``device``.

    Raises:
        TypeError: if ``array`` is not a NumPy array, or holds values that are not real numbers
            (complex, strings, objects, dates), or
            ``device`` is neither a string nor a ``torch.device``.
        ValueError: if ``device`` is a string that names no device.

    Example:
        >>> a = np.zeros(3, dtype=np.float32)
        >>> t = as_float32(a, "cpu")
        >>> a[0] = 5.0  # the tensor is a view of the array
        >>> t
        tensor([5., 0., 0.])
        >>> as_float32(np.arange(3), "cpu")  # int64 in, one converted copy out
        tensor([0., 1., 2.])
    """
    if not isinstance(array, np.ndarray):
        hint = ""
        if isinstance(array, torch.Tensor):
            hint = "; for a tensor use tensor.to(device, torch.float32)"
        elif isinstance(array, (list, tuple, int, float, np.generic)):
            hint = "; for Python or NumPy scalars and lists use torch.tensor(data, dtype=torch.float32)"
        raise TypeError(
            f"array must be a NumPy array (np.ndarray), got {type(array).__name__}{hint}"
        )
    if array.dtype.kind not in _NUMERIC_KINDS:
        raise TypeError(
            f"array must hold booleans, integers or floats to become float32, got dtype "
            f"{array.dtype}"
        )
    device = _device(device)
    viewable = (
        array.dtype == np.float32  # native byte order too: '>f4' is not equal to float32
        and all(stride >= 0 for stride in array.strides)
        and array.flags.writeable
    )
    if viewable:
        tensor = torch.from_numpy(array)  # a view of the array's memory
    else:
        # One pass: NumPy converts and lays the values out in C order (positive strides).
        tensor = torch.from_numpy(np.array(array, dtype=np.float32, order="C"))
    if device.type == "cpu":
        return tensor  # .to("cpu:0") would copy a tensor on "cpu"
    return tensor.to(device)  # one transfer


def _device(device) -> torch.device:
    if isinstance(device, torch.device):
        return device
    if not isinstance(device, str):
        raise TypeError(
            f"device must be a torch.device or a name such as 'cpu' or 'cuda', got "
            f"{type(device).__name__} {device!r}"
        )
    try:
        return torch.device(device)
    except RuntimeError:
        raise ValueError(
            f"device must be a device name such as 'cpu', 'cuda', 'cuda:1' or 'mps', got {device!r}"
        ) from None
