"""Results cross from the kernel as data only: round trips, and what the grader refuses."""

from __future__ import annotations

import math
import pickle
import sys

import pytest
import torch

from autograder import transport
from autograder.checks import OBJECT_KEY, to_data


def test_json_round_trip_keeps_types_without_torch(tmp_path, monkeypatch):
    monkeypatch.delitem(sys.modules, "torch")  # as in a kernel that never imported torch
    data = {"a": (1, 2.5), 3: [None, True, "x"], "nan": math.nan, "inf": -math.inf}
    path = transport.dump(data, str(tmp_path / "r"))
    assert path.endswith(".json")
    back = transport.load(tmp_path / "r")
    assert back["a"] == (1, 2.5) and back[3] == [None, True, "x"]
    assert math.isnan(back["nan"]) and back["inf"] == -math.inf


def test_torch_round_trip_with_tensors_and_int_keys(tmp_path):
    data = {"state": {0: {"momentum_buffer": torch.ones(2)}}, "loss": 0.5}
    assert transport.dump(data, str(tmp_path / "r")).endswith(".pt")
    back = transport.load(tmp_path / "r")
    assert torch.equal(back["state"][0]["momentum_buffer"], torch.ones(2))


class _Payload:
    def __reduce__(self):
        return (print, ("pwned",))


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_forged_files_are_refused_without_running_anything(tmp_path, capsys):
    (tmp_path / "r.pt").write_bytes(pickle.dumps({"x": _Payload()}))
    with pytest.raises(transport.TransportError, match="could not be read as data"):
        transport.load(tmp_path / "r")
    (tmp_path / "r.pt").unlink()
    (tmp_path / "r.json").write_text('{"x": {"__class__": "os.system"}}')
    with pytest.raises(transport.TransportError, match="could not be read as data"):
        transport.load(tmp_path / "r")
    assert "pwned" not in capsys.readouterr().out
    with pytest.raises(transport.TransportError, match="no results file"):
        transport.load(tmp_path / "missing")


def test_oversized_files_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(transport, "MAX_BYTES", 10)
    (tmp_path / "r.json").write_text("[" + "1," * 20 + "1]")
    with pytest.raises(transport.TransportError, match="over the limit"):
        transport.load(tmp_path / "r")


class _Sneaky(torch.Tensor):
    pass


def test_to_data_makes_learner_values_plain():
    import numpy as np

    value = {
        "np": np.float64(0.25),
        "np32": np.float32(0.5),
        "count": np.int64(3),
        "param": torch.nn.Parameter(torch.ones(2)),
        "sub": torch.zeros(2).as_subclass(_Sneaky),
        "size": torch.Size([2, 3]),
        "obj": object(),
    }
    data = to_data(value)
    assert type(data["np"]) is float and type(data["np32"]) is float
    assert type(data["count"]) is int and data["count"] == 3
    assert type(data["param"]) is torch.Tensor and not data["param"].requires_grad
    assert type(data["sub"]) is torch.Tensor
    assert data["size"] == (2, 3) and type(data["size"]) is tuple
    assert data["obj"] == {OBJECT_KEY: "object"}
