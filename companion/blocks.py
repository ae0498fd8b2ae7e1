"""Model building blocks the course builds on (the reference for chapter 4's exercise)."""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["ResidualBlock", "Standardize", "WithFeatures"]


class ResidualBlock(nn.Module):
    """A residual block that starts as the identity: ``branch(x) + shortcut(x)``.

    ``branch`` is conv3x3 (with ``stride``) -> batch norm -> ReLU -> conv3x3 -> batch norm, the
    convolutions without bias (each batch norm has its own shift). The last batch norm's scale
    starts at zero, so a new block adds nothing to its shortcut: where the input already has the
    output's shape, the block is the identity (its output and its gradient, in train and eval
    mode), and a stack of any depth starts as the identity and learns from there; no ReLU
    follows the sum, which would cut the negative half of ``x``. ``shortcut`` is
    ``nn.Identity()`` where the input already has the output's shape, and a projection (a 1x1
    convolution with ``stride``, then batch norm) where channels or resolution change.

    Args:
        in_channels: input channels.
        out_channels: output channels (default: ``in_channels``).
        stride: 1 keeps height and width, 2 halves them (rounding up).

    Raises:
        ValueError: if a channel count or the stride is not a positive int.

    Example:
        >>> x = torch.randn(2, 4, 6, 6)
        >>> torch.equal(ResidualBlock(4)(x), x)  # a new block that keeps the shape
        True
        >>> tuple(ResidualBlock(4, 8, stride=2)(torch.randn(2, 4, 7, 7)).shape)
        (2, 8, 4, 4)
    """

    def __init__(self, in_channels: int, out_channels: int | None = None, stride: int = 1) -> None:
        super().__init__()
        out_channels = in_channels if out_channels is None else out_channels
        for name, value in (
            ("in_channels", in_channels),
            ("out_channels", out_channels),
            ("stride", stride),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        self.branch = nn.Sequential(
            nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
            nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
        )
        # A zero scale makes the branch's output zero in train and eval mode alike (batch norm's
        # shift starts at zero), and the scale's own gradient is not zero: it learns at once.
        nn.init.zeros_(self.branch[-1].weight)
        if in_channels == out_channels and stride == 1:
            self.shortcut: nn.Module = nn.Identity()
        else:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, 1, stride=stride, bias=False),
                nn.BatchNorm2d(out_channels),
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.branch(x) + self.shortcut(x)


class WithFeatures(nn.Module):
    """A classifier with a new head and a second output: what one inner layer computed.

    The model's head (an ``nn.Linear``) is replaced by a fresh one with ``num_classes`` outputs;
    a forward hook, registered once, keeps the output of ``layer`` during each forward pass, so
    ``forward`` runs the model once and returns both. The model's other weights are kept.

    Args:
        model: a classifier, e.g. ``torchvision.models.resnet18(weights=None)``.
        num_classes: outputs of the new head.
        head: the head's name in ``model`` (dotted for nested modules).
        layer: the name of the layer whose output is returned as features.

    Raises:
        ValueError: if ``num_classes`` is not positive or a name is not in the model.
        TypeError: if the head is not an ``nn.Linear``.

    Example:
        >>> from torchvision.models import resnet18
        >>> tapped = WithFeatures(resnet18(weights=None), num_classes=3)
        >>> logits, features = tapped(torch.randn(2, 3, 64, 64))
        >>> tuple(logits.shape), tuple(features.shape)
        ((2, 3), (2, 256, 4, 4))
    """

    def __init__(self, model: nn.Module, num_classes: int, *, head: str = "fc",
                 layer: str = "layer3") -> None:  # fmt: skip
        super().__init__()
        if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 1:
            raise ValueError(f"num_classes must be a positive int, got {num_classes!r}")
        old = _submodule(model, head, "head")
        if not isinstance(old, nn.Linear):
            raise TypeError(f"head {head!r} must be an nn.Linear, got {type(old).__name__}")
        parent_name, _, name = head.rpartition(".")
        parent = model.get_submodule(parent_name) if parent_name else model
        setattr(parent, name, nn.Linear(old.in_features, num_classes))
        self.model = model
        self._features = None
        self._hook = _submodule(model, layer, "layer").register_forward_hook(self._keep)

    def _keep(self, module, inputs, output) -> None:
        self._features = output

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        logits = self.model(x)
        features, self._features = self._features, None  # drop the reference: no stale tensor
        return logits, features


def _submodule(model: nn.Module, name: str, what: str) -> nn.Module:
    try:
        return model.get_submodule(name)
    except AttributeError:
        names = [n for n, _ in model.named_children()]
        raise ValueError(f"{what} {name!r} is not in the model; its children are {names}") from None


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
