"""Tests for companion/rng.py."""

import random

import numpy as np
import pytest
import torch

from companion import get_rng_state, seed_everything, set_rng_state


def draw():
    return random.random(), float(np.random.rand()), torch.rand(1).item()


def test_seed_everything_makes_every_generator_repeat():
    assert seed_everything(7) == 7
    first = draw()
    seed_everything(7)
    assert draw() == first
    seed_everything(8)
    assert draw() != first


@pytest.mark.parametrize(
    "bad, error", [("1", TypeError), (1.5, TypeError), (True, TypeError), (-1, ValueError)]
)
def test_seed_everything_rejects_bad_seeds(bad, error):
    with pytest.raises(error, match="seed must be"):
        seed_everything(bad)


def test_rng_state_round_trips_through_a_weights_only_file(tmp_path):
    seed_everything(0)
    np.random.randn()  # leaves a cached Gaussian in NumPy's state
    torch.save(get_rng_state(), tmp_path / "rng.pt")
    expected = draw()
    seed_everything(1)
    set_rng_state(torch.load(tmp_path / "rng.pt", weights_only=True))
    assert draw() == expected


def test_set_rng_state_rejects_other_things():
    with pytest.raises(ValueError, match="get_rng_state"):
        set_rng_state({"python": 1})
