"""Leak detection: does a training loop keep autograd graphs (or memory) alive between steps?

- :func:`detect_leaks`: run a step function several times and judge;
- :class:`LeakDetector`: measure between the steps of a loop you cannot change.

Both give a :class:`~companion.leak_report.LeakReport`, the verdict that names the probable
holder and the fix.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Iterable, Iterator

import torch

from companion.batches import first_tensor
from companion.leak_report import MIB, LeakReport, LeakSample

__all__ = ["LeakDetector", "detect_leaks"]


def _rss_bytes() -> int | None:
    """Resident memory of this process (Linux: current; elsewhere: the peak, via resource)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource
    except ImportError:  # Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def _cuda_bytes() -> int | None:
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        return sum(torch.cuda.memory_allocated(i) for i in range(torch.cuda.device_count()))
    return None


def _frame_names(targets: dict[int, object]) -> dict[int, list[str]]:
    """Local variables of the running functions (outside this module) that hold a target."""
    found: dict[int, list[str]] = {}
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_filename != __file__ and code.co_name != "<module>":
            for name, value in frame.f_locals.items():
                if targets.get(id(value)) is value:
                    found.setdefault(id(value), []).append(
                        f"local variable '{name}' in {code.co_name}()"
                    )
        frame = frame.f_back
    return found


def _attribute(name: str, cls: str) -> str:
    return f"attribute '{name}' of {'an' if cls[:1].lower() in 'aeiou' else 'a'} {cls}"


def _container_names(refs, targets: dict[int, object]) -> dict[int, list[str]]:
    """Names under which globals, instance attributes and dict keys among ``refs`` hold targets.

    An instance's attributes show up either as the instance itself or as its ``__dict__``
    (CPython creates the dict lazily), so the dicts' owners are looked up to give both the same
    name: the name must not change from one sample to the next.
    """
    found: dict[int, list[str]] = {}
    pending = []  # (dict, key, target id) whose owner is still to be found
    for ref in refs:
        kind = type(ref)
        if kind is dict:
            for key, value in ref.items():
                if targets.get(id(value)) is value:
                    if "__builtins__" in ref:
                        found.setdefault(id(value), []).append(f"global variable '{key}'")
                    else:
                        pending.append((ref, key, id(value)))
        elif kind not in (list, tuple) and kind.__name__ not in ("frame", "cell"):
            try:
                items = object.__getattribute__(ref, "__dict__").items()
            except Exception:  # no __dict__ (slots, builtins)
                continue
            for key, value in items:
                if targets.get(id(value)) is value:
                    found.setdefault(id(value), []).append(_attribute(key, kind.__name__))
    owners: dict[int, str] = {}
    if pending:
        wanted = {id(d) for d, _, _ in pending}
        for ref in gc.get_referrers(*(d for d, _, _ in pending)):
            try:
                own = object.__getattribute__(ref, "__dict__")
            except Exception:
                continue
            if id(own) in wanted:
                owners[id(own)] = type(ref).__name__
    for d, key, target in pending:
        owner = owners.get(id(d))
        name = _attribute(key, owner) if owner else f"key '{key}' of a dict"
        found.setdefault(target, []).append(name)
    return found


_NO_NAME = "tensors that only PyTorch still refers to (no variable holds them)"


def _holder_keys(tensors: list[torch.Tensor], ours: set[int]) -> list[str]:
    """For each tensor, a short description of what keeps it alive (stable across steps)."""
    targets = {id(t): t for t in tensors}
    found = _frame_names(targets)
    lists: dict[int, list] = {}
    ours = ours | {id(targets), id(lists), id(found)}
    refs = [r for r in gc.get_referrers(*tensors) if id(r) not in ours]
    for ref in refs:
        if type(ref) is list:
            lists[id(ref)] = ref
        elif type(ref).__name__ == "cell":
            found.setdefault(id(ref.cell_contents), []).append("a variable captured by a closure")
    for target, names in _container_names(refs, targets).items():
        found.setdefault(target, []).extend(names)
    del refs
    if lists:
        list_names = _frame_names(lists)
        refs = [r for r in gc.get_referrers(*lists.values()) if id(r) not in ours]
        for target, names in _container_names(refs, lists).items():
            list_names.setdefault(target, []).extend(names)
        for key, items in lists.items():
            label = "a list" + (f" ({list_names[key][0]})" if key in list_names else "")
            for item in items:
                if targets.get(id(item)) is item:
                    found.setdefault(id(item), []).append(label)
    return [found.get(id(t), [_NO_NAME])[0] for t in tensors]


_STAND_INS = ("FakeTensor", "FunctionalTensor")


def _scan(step: int, thorough: bool) -> LeakSample:
    # A full collection and naming the holders each cost a pass over every Python object;
    # light samples only sweep the young generations, which can leave old cyclic garbage
    # around: it can only inflate a count, and the thorough first and last samples, which
    # the verdict compares, are exact.
    gc.collect() if thorough else gc.collect(1)
    rss, cuda = _rss_bytes(), _cuda_bytes()
    objects = gc.get_objects()
    # type() rather than isinstance(): some lazy module proxies warn when asked for __class__
    kinds, todo = set(), [torch.Tensor]
    while todo:
        kind = todo.pop()
        kinds.add(kind)
        todo.extend(kind.__subclasses__())
    # FakeTensor and FunctionalTensor are tracing's stand-ins (torch.export and torch.compile
    # may leave some alive): they hold no memory and their shapes may be symbolic
    tensors = [
        o
        for o in objects
        if type(o) in kinds and type(o).__name__ not in _STAND_INS and o.grad_fn is not None
    ]
    del objects
    keys = (
        _holder_keys(tensors, {id(tensors)}) if tensors and thorough else [_NO_NAME] * len(tensors)
    )
    # credit shared nodes to tensors that a variable holds before PyTorch-internal ones
    order = sorted(range(len(tensors)), key=lambda i: keys[i] == _NO_NAME)
    seen: dict[int, object] = {}  # holds the node objects so that ids stay unique
    holders: dict[str, dict] = {}
    for i in order:
        t, before = tensors[i], len(seen)
        stack = [t.grad_fn]
        while stack:
            fn = stack.pop()
            if fn is None or id(fn) in seen:
                continue
            seen[id(fn)] = fn
            stack.extend(nxt for nxt, _ in fn.next_functions)
        h = holders.setdefault(
            keys[i],
            {
                "nodes": 0,
                "tensors": 0,
                "grad_fn": type(t.grad_fn).__name__,
                "shape": tuple(d if type(d) is int else str(d) for d in t.shape),
            },
        )
        h["nodes"] += len(seen) - before
        h["tensors"] += 1
    nodes = len(seen)
    seen.clear()
    return LeakSample(step, nodes, len(tensors), rss, cuda, holders)


class LeakDetector:
    """Measures live autograd graphs and memory between training steps.

    Call :meth:`snapshot` after each step, or let :meth:`watch` do it: it wraps a loader and
    measures each time the loop asks for the next batch (that is, after the previous step),
    and once more when the loader is exhausted. Then read :meth:`report`. This form suits a
    training function you cannot change, such as a learner's loop under a grader::

        detector = LeakDetector()
        train(model, detector.watch(train_loader), optimizer, loss_fn)
        print(detector.report())

    Args:
        warmup: samples at the start left out of the verdict (the optimizer allocates its
            state, allocators warm up).
        memory_threshold_mib: memory growth per step (MiB) that counts as growth.
    """

    def __init__(self, *, warmup: int = 2, memory_threshold_mib: float = 1.0):
        if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
            raise ValueError(f"warmup must be a non-negative int, got {warmup!r}")
        if not isinstance(memory_threshold_mib, (int, float)) or memory_threshold_mib < 0:
            raise ValueError(
                f"memory_threshold_mib must be a non-negative number, got {memory_threshold_mib!r}"
            )
        self.warmup = warmup
        self.memory_threshold_mib = float(memory_threshold_mib)
        self.samples: list[LeakSample] = []
        self.returns_graph = False

    def snapshot(self, *, thorough: bool = True) -> LeakSample:
        """Measure now (call it between steps); returns the new :class:`.LeakSample`.

        Args:
            thorough: run a full garbage collection and find what holds the graphs (slower:
                two passes over every Python object). The verdict compares the first
                measured sample with the last, so those two should be thorough.
        """
        thorough = thorough or len(self.samples) == self.warmup
        sample = _scan(len(self.samples), thorough)
        self.samples.append(sample)
        return sample

    def watch(self, loader: Iterable) -> Iterator:
        """Yield the items of ``loader``, measuring before each one and after the last.

        Args:
            loader: any iterable (a ``DataLoader``, a list of batches); its items are passed
                on unchanged.
        """
        for item in loader:
            self.snapshot(thorough=False)
            yield item
            del item
        self.snapshot()

    def report(self) -> LeakReport:
        """The verdict over the samples so far (see :class:`.LeakReport`)."""
        return LeakReport(
            list(self.samples), self.warmup, self.memory_threshold_mib * MIB, self.returns_graph
        )


def detect_leaks(
    step_fn: Callable[[], object],
    *,
    steps: int = 8,
    warmup: int = 2,
    memory_threshold_mib: float = 1.0,
) -> LeakReport:
    """Run ``step_fn`` several times and tell whether graphs or memory pile up between steps.

    After each call, every live tensor that has a ``grad_fn`` is found (through the garbage
    collector) and the distinct autograd nodes reachable from them are counted; memory is
    read too (process RSS, and PyTorch's allocated memory on CUDA when CUDA is in use). In
    a healthy loop these numbers stay flat once warm; the classic ``total_loss += loss``
    adds one step's graph per step, and a list of loss tensors adds one tensor per step.

    Args:
        step_fn: one training step, taking no arguments (use a closure or ``lambda``). What
            it returns is dropped; returning a tensor with a ``grad_fn`` adds a note.
        steps: how many times to call it.
        warmup: measurements at the start left out of the verdict.
        memory_threshold_mib: memory growth per step (MiB) that counts as growth.

    Returns:
        A :class:`.LeakReport`: ``.leaking``, ``.graph_leak``, ``.memory_growth``, and a
        ``.message`` that names the probable holder and the fix.

    Raises:
        TypeError: if ``step_fn`` is not callable.
        ValueError: if fewer than 3 steps would be measured after the warm-up.

    Example:
        >>> model = torch.nn.Linear(4, 1)
        >>> history = []
        >>> def step():
        ...     loss = model(torch.randn(8, 4)).pow(2).mean()
        ...     loss.backward()
        ...     history.append(loss)  # the bug: history.append(loss.item())
        >>> detect_leaks(step, steps=6).leaking
        True
    """
    if not callable(step_fn):
        raise TypeError(
            f"step_fn must be a function taking no arguments, got {type(step_fn).__name__}; "
            f"wrap your step: detect_leaks(lambda: train_step(model, batch), steps=8)"
        )
    if isinstance(steps, bool) or not isinstance(steps, int) or steps - warmup < 3:
        raise ValueError(
            f"steps={steps!r} with warmup={warmup!r} leaves fewer than 3 measured steps; "
            f"use steps >= warmup + 3 (the default is steps=8, warmup=2)"
        )
    detector = LeakDetector(warmup=warmup, memory_threshold_mib=memory_threshold_mib)
    for i in range(steps):
        result = step_fn()
        if first_tensor(result) is not None and first_tensor(result).grad_fn is not None:
            detector.returns_graph = True
        del result
        detector.snapshot(thorough=i == steps - 1)
    return detector.report()
