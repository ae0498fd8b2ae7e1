"""Model building blocks the course builds on (the reference for chapter 4's exercise)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["ResidualBlock"]


class ResidualBlock(nn.Module):
    """A basic residual block that keeps its input's shape: ``relu(x + bn2(conv2(relu(bn1(conv1(x))))))``.

    Both convolutions are 3x3 with padding 1 and no bias (each batch norm has its own shift).

    Args:
        channels: input channels, which are also the output channels.

    Example:
        >>> block = ResidualBlock(4)
        >>> tuple(block(torch.randn(2, 4, 6, 6)).shape)
        (2, 4, 6, 6)
    """

    def __init__(self, channels: int) -> None:
        super().__init__()
        if isinstance(channels, bool) or not isinstance(channels, int) or channels < 1:
            raise ValueError(f"channels must be a positive int, got {channels!r}")
        self.conv1 = nn.Conv2d(channels, channels, kernel_size=3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, kernel_size=3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(x + self.bn2(self.conv2(out)))
