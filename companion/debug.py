"""Debugging tools for a forward pass: shape traces and device mismatches.

Each tool answers one question a learner asks when a training script misbehaves:

- :func:`trace_shapes`: what shape goes in and comes out of every layer, and where it broke;
- :func:`find_device_mismatches`: which tensor is on the wrong device, and why it stayed there;
- :func:`diagnose_profile`: what slows a training loop down, read from a profile of a few steps.

What autograd recorded is shown by :mod:`companion.graph`; whether the loop keeps graphs (or
memory) alive from one step to the next is told by :mod:`companion.leaks`.
"""

from __future__ import annotations

import html
import math
import sys
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field

import torch
from torch import nn

from companion._tables import clip_text, format_shape, html_table, text_table
from companion.batches import first_tensor

__all__ = [
    "ShapeTrace",
    "TraceRow",
    "trace_shapes",
    "DeviceMismatch",
    "DeviceReport",
    "find_device_mismatches",
    "PROFILE_PROBLEMS",
    "diagnose_profile",
]


# ---------------------------------------------------------------------------------------------
# trace_shapes


def _shape_of(obj):
    """Plain-data shape of a forward argument: tuples of ints for tensors, nested like obj."""
    if isinstance(obj, torch.Tensor):
        return tuple(obj.shape)
    if isinstance(obj, (list, tuple)):
        return [_shape_of(x) for x in obj]
    if isinstance(obj, Mapping):
        return {str(k): _shape_of(v) for k, v in obj.items()}
    if obj is None:
        return None
    return type(obj).__name__


def _count_params(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters() if not nn.parameter.is_lazy(p))


@dataclass
class TraceRow:
    """One call of one module during :func:`trace_shapes`.

    ``status`` is ``"ok"``, ``"raised"`` (this module is where the error came from) or
    ``"raised inside"`` (an enclosing module that was still running when it happened).
    """

    name: str
    type: str
    depth: int
    input_shapes: object
    output_shapes: object = None
    dtype: str = ""
    device: str = ""
    params: int = 0
    status: str = "ok"


@dataclass
class ShapeTrace:
    """The table returned by :func:`trace_shapes`: one row per module call, in call order.

    Attributes:
        rows: the :class:`TraceRow` list.
        output: what the model returned (None if it raised).
        error: the exception the forward raised, or None.
    """

    rows: list[TraceRow]
    output: object = None
    error: BaseException | None = None

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[TraceRow]:
        return iter(self.rows)

    def __getitem__(self, index: int) -> TraceRow:
        return self.rows[index]

    @property
    def failed(self) -> TraceRow | None:
        """The row of the module that raised, or None."""
        return next((r for r in self.rows if r.status == "raised"), None)

    def _cells(self) -> tuple[list[str], list[list[str]]]:
        headers = ["module", "type", "input shapes", "output shapes", "dtype", "device", "params"]
        if self.error is not None:
            headers.append("status")
        rows = []
        for r in self.rows:
            cells = [
                "  " * r.depth + (r.name or "(model)"),
                r.type,
                clip_text(format_shape(r.input_shapes)),
                clip_text(format_shape(r.output_shapes)) if r.status == "ok" else "-",
                r.dtype,
                r.device,
                f"{r.params:,}",
            ]
            if self.error is not None:
                cells.append({"ok": "ok", "raised": "<-- RAISED"}.get(r.status, "(inside)"))
            rows.append(cells)
        return headers, rows

    def _error_line(self) -> str:
        where = (self.failed.name or "(model)") if self.failed else "(model)"
        first = str(self.error).strip().splitlines()
        return f"{where} raised {type(self.error).__name__}: {first[0] if first else ''}"

    def __str__(self) -> str:
        headers, rows = self._cells()
        text = text_table(headers, rows)
        if self.error is not None:
            text += "\n" + self._error_line()
        return text

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        headers, rows = self._cells()
        marked = [i for i, r in enumerate(self.rows) if r.status == "raised"]
        out = html_table(headers, rows, marked)
        if self.error is not None:
            out += f"<p style='color:#b00'><b>{html.escape(self._error_line())}</b></p>"
        return out

    def to_dict(self) -> dict:
        """Plain data: ``{"rows": [dict, ...], "error": str | None}``."""
        error = None if self.error is None else f"{type(self.error).__name__}: {self.error}"
        return {"rows": [asdict(r) for r in self.rows], "error": error}


def trace_shapes(model: nn.Module, *inputs, raise_errors: bool = True, **kwargs) -> ShapeTrace:
    """Run ``model(*inputs, **kwargs)`` once and record every module's input and output shapes.

    Forward hooks on every submodule (the model itself included) record, per call, the name,
    type, input and output shapes, dtype and device of the first output tensor, and the
    parameter count (the module's own and its children's). The hooks are always removed,
    also when the forward raises. Nothing else changes: the model keeps its mode and device,
    and autograd records as usual (wrap the call in ``torch.no_grad()`` to save memory).

    When the forward raises, the trace marks the module the error came from (``<-- RAISED``)
    and the modules that were running around it, so that the last good shapes and the
    failing layer are side by side. With ``raise_errors=True`` (the default) the original
    exception is re-raised, with the table added to its message as a note (Python 3.11+; on
    older versions the table is printed to stderr) and attached as ``error.shape_trace``.
    With ``raise_errors=False`` the trace is returned, with ``trace.error`` set: handy in a
    notebook, where the table then renders as the cell's output.

    Args:
        model: any ``nn.Module``.
        *inputs: the positional arguments of the forward.
        raise_errors: re-raise an error from the forward (True) or return the trace (False).
        **kwargs: keyword arguments of the forward.

    Returns:
        A :class:`ShapeTrace` (prints as a table, renders as HTML in a notebook,
        ``to_dict()`` gives plain data, ``.output`` holds what the model returned).

    Raises:
        TypeError: if ``model`` is not an ``nn.Module``.
        Exception: whatever the forward raised, when ``raise_errors`` is True.

    Example:
        >>> net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        >>> trace = trace_shapes(net, torch.zeros(3, 4))
        >>> [r.output_shapes for r in trace][1:]
        [(3, 8), (3, 8), (3, 2)]
    """
    if not isinstance(model, nn.Module):
        raise TypeError(
            f"trace_shapes needs an nn.Module as its first argument, got {type(model).__name__}; "
            f"call it as trace_shapes(model, inputs)"
        )
    rows: list[TraceRow] = []
    open_rows: list[tuple[nn.Module, TraceRow]] = []

    def before(module, args, kw):
        row = TraceRow(
            name=names[id(module)],
            type=type(module).__name__,
            depth=len(open_rows),
            input_shapes=_shape_of(list(args) + ([kw] if kw else [])),
            params=_count_params(module),
        )
        first = first_tensor((args, kw))
        if first is not None:
            row.dtype, row.device = str(first.dtype).replace("torch.", ""), str(first.device)
        rows.append(row)
        open_rows.append((module, row))

    def after(module, args, kw, output):
        while open_rows:  # modules below may have been left open by a caught exception
            opened, row = open_rows.pop()
            if opened is module:
                break
        row.output_shapes = _shape_of(output)
        row.params = _count_params(module)  # lazy modules have materialized by now
        first = first_tensor(output)
        if first is not None:
            row.dtype, row.device = str(first.dtype).replace("torch.", ""), str(first.device)

    names = {id(m): name for name, m in model.named_modules()}
    handles = []
    try:
        for module in {id(m): m for m in model.modules()}.values():
            handles.append(module.register_forward_pre_hook(before, with_kwargs=True))
            handles.append(module.register_forward_hook(after, with_kwargs=True))
        output = model(*inputs, **kwargs)
    except Exception as err:
        for i, (_, row) in enumerate(reversed(open_rows)):
            row.status = "raised" if i == 0 else "raised inside"
        trace = ShapeTrace(rows, None, err)
        if not raise_errors:
            return trace
        err.shape_trace = trace
        note = "Shape trace up to the error (companion.debug.trace_shapes):\n" + str(trace)
        if hasattr(err, "add_note"):
            err.add_note(note)
        else:  # Python 3.10 has no exception notes
            print(note, file=sys.stderr)
        raise
    finally:
        for handle in handles:
            handle.remove()
    return ShapeTrace(rows, output, None)


# ---------------------------------------------------------------------------------------------
# find_device_mismatches

_HINTS = {
    "parameter": "call model.to(device) after building the model and after replacing layers",
    "buffer": "call model.to(device) after building the model and after replacing layers",
    "attribute": (
        "a plain tensor attribute does not follow model.to(device): register it in __init__ "
        "with self.register_buffer(name, tensor) (persistent=False to keep it out of the "
        "state_dict)"
    ),
    "input": "move it before the call: inputs = inputs.to(device)",
}


@dataclass
class DeviceMismatch:
    """One tensor that is not on the expected device (``kind``: parameter, buffer, attribute
    or input)."""

    kind: str
    name: str
    device: str
    shape: tuple
    dtype: str
    hint: str


@dataclass
class DeviceReport:
    """What :func:`find_device_mismatches` found.

    Attributes:
        expected: the device everything should be on.
        mismatches: the tensors that are elsewhere.
        unregistered: names of plain tensor attributes (wherever they are): they will not
            follow ``model.to(device)`` and are the usual cause of a future mismatch.
        checked: how many tensors were looked at.
    """

    expected: str
    mismatches: list[DeviceMismatch]
    unregistered: list[str] = field(default_factory=list)
    checked: int = 0

    @property
    def ok(self) -> bool:
        """True when every tensor is on the expected device."""
        return not self.mismatches

    def __len__(self) -> int:
        return len(self.mismatches)

    def __iter__(self) -> Iterator[DeviceMismatch]:
        return iter(self.mismatches)

    def _cells(self):
        headers = ["kind", "name", "device", "shape", "dtype"]
        rows = [[m.kind, m.name, m.device, format_shape(m.shape), m.dtype] for m in self.mismatches]
        return headers, rows

    def _summary(self) -> str:
        if self.ok:
            text = f"All {self.checked} tensors are on {self.expected}."
        else:
            text = f"{len(self.mismatches)} of {self.checked} tensors are not on {self.expected}:"
        return text

    def _footer(self) -> list[str]:
        lines = []
        if not self.ok:
            for kind in dict.fromkeys(m.kind for m in self.mismatches):
                lines.append(f"fix ({kind}): {_HINTS[kind]}")
        if self.unregistered:
            lines.append(
                "plain tensor attributes (not moved by model.to): " + ", ".join(self.unregistered)
            )
        return lines

    def __str__(self) -> str:
        parts = [self._summary()]
        if not self.ok:
            parts.append(text_table(*self._cells()))
        parts += self._footer()
        return "\n".join(parts)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        out = f"<p><b>{html.escape(self._summary())}</b></p>"
        if not self.ok:
            out += html_table(*self._cells())
        out += "".join(f"<p>{html.escape(line)}</p>" for line in self._footer())
        return out

    def to_dict(self) -> dict:
        """Plain data: expected device, list of mismatch dicts, unregistered names, count."""
        return {
            "expected": self.expected,
            "mismatches": [asdict(m) for m in self.mismatches],
            "unregistered": list(self.unregistered),
            "checked": self.checked,
        }


def _on_device(tensor: torch.Tensor, expected: torch.device) -> bool:
    dev = tensor.device
    return dev.type == expected.type and (expected.index is None or dev.index == expected.index)


def _walk_tensors(obj, name: str):
    if isinstance(obj, torch.Tensor):
        yield name, obj
    elif isinstance(obj, (list, tuple)):
        for i, item in enumerate(obj):
            yield from _walk_tensors(item, f"{name}[{i}]")
    elif isinstance(obj, Mapping):
        for key, item in obj.items():
            yield from _walk_tensors(item, f"{name}[{key!r}]")


def find_device_mismatches(model: nn.Module, *tensors, expected=None) -> DeviceReport:
    """List every tensor that is not on the device the model should run on.

    Looks at the model's parameters and buffers, at plain tensor attributes of its modules
    (tensors assigned as ``self.scale = torch.tensor(...)`` and never registered as buffers,
    including ones inside a list, tuple or dict attribute: ``model.to(device)`` does not move
    them), and at the tensors you pass (nested lists, tuples and dicts are searched).

    Args:
        model: the model.
        *tensors: inputs, targets, masks... anything that will meet the model.
        expected: the device everything should be on. Defaults to the device that most of
            the model's parameters and buffers are on (the first of them on a tie). A device
            without an index (``"cuda"``) matches any index.

    Returns:
        A :class:`DeviceReport`: ``report.ok`` is True when nothing is misplaced; it prints
        as a table with the fix for each kind of tensor.

    Raises:
        TypeError: if ``model`` is not an ``nn.Module``, ``expected`` is not a device, or a
            device is passed among the tensors (``find_device_mismatches(model, "cuda")``).
        ValueError: if ``expected`` is None and the model has no parameter or buffer.

    Example:
        >>> net = nn.Linear(2, 2)
        >>> find_device_mismatches(net, torch.zeros(1, 2)).ok
        True
    """
    if not isinstance(model, nn.Module):
        raise TypeError(
            f"find_device_mismatches needs an nn.Module as its first argument, "
            f"got {type(model).__name__}"
        )
    for position, value in enumerate(tensors, start=2):
        if isinstance(value, (str, torch.device)):
            raise TypeError(
                f"find_device_mismatches got the device {str(value)!r} as argument {position}, "
                f"where the tensors to check go; pass the device by name: "
                f"find_device_mismatches(model, *tensors, expected={str(value)!r})"
            )
    if expected is None:
        # most tensors' device, not the first one's: the first layer may be the one replaced
        counts = Counter(t.device for t in (*model.parameters(), *model.buffers()))
        if not counts:
            raise ValueError(
                "expected=None but the model has no parameter or buffer to take the device "
                "from; pass expected='cpu' (or 'cuda', 'mps')"
            )
        expected = counts.most_common(1)[0][0]
    elif not isinstance(expected, (str, torch.device)):
        raise TypeError(
            f"expected must be a device string like 'cuda:0' or a torch.device, "
            f"got {type(expected).__name__} ({expected!r})"
        )
    expected = torch.device(expected)

    found: list[tuple[str, str, torch.Tensor]] = []
    found += [("parameter", n, p) for n, p in model.named_parameters()]
    found += [("buffer", n, b) for n, b in model.named_buffers()]
    unregistered = []
    for mod_name, module in model.named_modules():
        prefix = f"{mod_name}." if mod_name else ""
        for attr, value in vars(module).items():
            if attr in ("_parameters", "_buffers", "_modules"):
                continue
            if not isinstance(value, torch.Tensor) and attr.startswith("_"):
                continue
            for name, tensor in _walk_tensors(value, prefix + attr):
                if not isinstance(tensor, nn.Parameter):
                    found.append(("attribute", name, tensor))
                    unregistered.append(name)
    for i, item in enumerate(tensors):
        found += [("input", name, t) for name, t in _walk_tensors(item, f"inputs[{i}]")]

    mismatches = [
        DeviceMismatch(
            kind,
            name,
            str(t.device),
            tuple(t.shape),
            str(t.dtype).replace("torch.", ""),
            _HINTS[kind],
        )
        for kind, name, t in found
        if not _on_device(t, expected)
    ]
    return DeviceReport(str(expected), mismatches, unregistered, len(found))


# ---------------------------------------------------------------------------------------------
# diagnose_profile

PROFILE_PROBLEMS = ("input", "sync", "launch")
_PROFILE_KEYS = ("wait_ms", "compute_ms", "ops", "reads")
# Measured with torch.profiler on the course's 2-core machine (chapter 7, section 1), one CPU
# thread: a loader without workers that augments in Python waited 20-60 % of each step, one that
# slices tensors in memory under 1 %; a small CNN's operators took 0.1-0.8 ms each, those of a
# deep 64-wide MLP on batches of 8 about 0.005 ms. The limits sit far from both sides.
_WAIT_SHARE = 0.1
_MS_PER_OP = 0.02


def _check_records(records) -> list[dict[str, float]]:
    if isinstance(records, Mapping) or not isinstance(records, Sequence) or not records:
        raise ValueError(
            f"records must be a non-empty list of per-step dicts, got {type(records).__name__} "
            f"{records!r:.80}. Profile at least one step."
        )
    checked = []
    for i, record in enumerate(records):
        if not isinstance(record, Mapping):
            raise ValueError(
                f"records[{i}] must be a dict with keys {_PROFILE_KEYS}, got {record!r:.80}"
            )
        missing = [key for key in _PROFILE_KEYS if key not in record]
        if missing:
            raise ValueError(f"records[{i}] lacks {missing}: every step needs {_PROFILE_KEYS}")
        values = {key: record[key] for key in _PROFILE_KEYS}
        bad = {
            k: v
            for k, v in values.items()
            if isinstance(v, bool)
            or not isinstance(v, (int, float))
            or not math.isfinite(v)
            or v < 0
        }
        if bad:
            raise ValueError(f"records[{i}] holds {bad}: times and counts are finite numbers >= 0")
        checked.append(values)
    return checked


def diagnose_profile(records: Sequence[Mapping[str, float]]) -> set[str]:
    """What slows a training loop down, read from a profile of a few of its steps.

    Each record is one step, split as chapter 7 splits it with ``torch.profiler``: ``wait_ms``,
    the milliseconds spent getting the batch; ``compute_ms``, the rest of the step (forward,
    loss, backward, optimizer); ``ops``, the operators the compute part called (every
    ``aten::`` event, nested ones included); ``reads``, how many times the compute part read a
    tensor's value into Python (``aten::_local_scalar_dense``: ``.item()``, ``print(loss)``,
    ``if loss > x:``). The profile is judged as a whole, over all its steps:

    - ``"input"``: the steps spent more than 10 % of their time waiting for batches (the input
      pipeline starves the device: a faster device would not make the run faster);
    - ``"sync"``: every step read a value (on a GPU, each read makes the host wait until the
      device has finished everything queued: a host sync per step); an occasional read, a
      logging step now and then, is not one;
    - ``"launch"``: the compute part averaged under 0.02 ms per operator, however many there
      were (each doing little work: the fixed cost of calling them, not the arithmetic, sets the
      time).

    Args:
        records: one dict per profiled step with the keys ``wait_ms``, ``compute_ms``, ``ops``
            and ``reads``, each a number >= 0.

    Returns:
        The problems the profile shows, a subset of :data:`PROFILE_PROBLEMS`; an empty set when
        nothing stands out.

    Raises:
        ValueError: ``records`` is empty or not a list of dicts, a key is missing, or a value is
            negative, not finite or not a number.

    Example:
        >>> starved = [{"wait_ms": 13.0, "compute_ms": 9.0, "ops": 112, "reads": 0}] * 4
        >>> sorted(diagnose_profile(starved))
        ['input']
        >>> diagnose_profile([{"wait_ms": 0.1, "compute_ms": 9.0, "ops": 112, "reads": 0}])
        set()
    """
    steps = _check_records(records)
    wait = sum(s["wait_ms"] for s in steps)
    compute = sum(s["compute_ms"] for s in steps)
    ops = sum(s["ops"] for s in steps)
    problems = set()
    if wait + compute > 0 and wait > _WAIT_SHARE * (wait + compute):
        problems.add("input")
    if all(s["reads"] >= 1 for s in steps):
        problems.add("sync")
    if ops > 0 and compute / ops < _MS_PER_OP:
        problems.add("launch")
    return problems
