# Corpus: transcriber (issue 39): every exercise that has a companion counterpart, answered with the
# companion's own source as inspect.getsource shows it, helpers it calls pasted above it, imports
# added. Where the exercise asks what the companion does (most of them), that still earns the
# points: the flag is what stops it. Where it asks for another signature or policy, it loses them.
# review: matches companion
# %% ch06_standardize points=3 feedback="passed"
import torch
from torch import nn


class Standardize(nn.Module):
    """Standardizes images channel by channel, ``(x - mean) / std``, with statistics that follow.

    The statistics are registered buffers: ``.to(device)``, ``.to(dtype)`` and ``.double()`` move
    and convert them with the module, ``state_dict()`` holds them (keys ``"mean"`` and ``"std"``,
    each of shape ``(C,)``), so a checkpoint restores them, and they are not parameters, so no
    optimizer updates them. Putting the normalization inside the model keeps it with the weights
    it was trained with, also in an exported model.

    Args:
        mean: per-channel means: C numbers (a sequence or a tensor of shape ``(C,)``).
        std: per-channel standard deviations: C positive numbers.

    Raises:
        ValueError: ``mean`` and ``std`` are empty, not one-dimensional, differ in length, or a
            standard deviation is not positive.

    Example:
        >>> norm = Standardize([0.5, 0.5, 0.5], [0.25, 0.25, 0.25])
        >>> norm(torch.full((1, 3, 2, 2), 0.75)).unique().tolist()
        [1.0]
        >>> sorted(norm.state_dict()), norm.to("meta").mean.device.type
        (['mean', 'std'], 'meta')
    """

    def __init__(self, mean, std) -> None:
        super().__init__()
        mean = torch.as_tensor(mean, dtype=torch.float32).detach().clone()
        std = torch.as_tensor(std, dtype=torch.float32).detach().clone()
        if mean.dim() != 1 or std.dim() != 1 or mean.numel() == 0:
            raise ValueError(
                f"mean and std must be non-empty lists of per-channel numbers, got shapes "
                f"{tuple(mean.shape)} and {tuple(std.shape)}"
            )
        if mean.shape != std.shape:
            raise ValueError(
                f"mean and std must have one number per channel each, got {mean.numel()} means "
                f"and {std.numel()} standard deviations"
            )
        if not bool((std > 0).all()):
            raise ValueError(f"every std must be positive, got {std.tolist()}")
        self.register_buffer("mean", mean)
        self.register_buffer("std", std)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() < 2 or x.shape[1] != self.mean.numel():
            raise ValueError(
                f"Standardize expects inputs of shape (B, {self.mean.numel()}, ...), got "
                f"{tuple(x.shape)}"
            )
        shape = (1, -1) + (1,) * (x.dim() - 2)  # broadcast over batch and spatial dimensions
        return (x - self.mean.view(shape)) / self.std.view(shape)
