"""Checkpoints: one plain dict, written atomically, loaded with ``weights_only=True``.

A checkpoint holds everything needed to continue a run exactly: model, optimizer, scheduler
and scaler state, epoch and step, every random generator, and the state a shuffling loader
needs to replay its order. It is saved from the unwrapped model, so ``module.`` (DataParallel,
DDP) and ``_orig_mod.`` (``torch.compile``) never end up in the keys.
"""

from __future__ import annotations

import os
import pickle
import re
import shutil
import tempfile
import zipfile
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path

import torch
from torch import nn

from companion.resume import get_loader_state, set_loader_state
from companion.rng import get_rng_state, set_rng_state

__all__ = [
    "CheckpointError",
    "save_checkpoint",
    "load_checkpoint",
    "latest_checkpoint",
    "load_unwrapped",
    "strip_prefixes",
    "unwrap_model",
]

FORMAT = "companion.checkpoint"
VERSION = 1
WRAPPER_PREFIXES = ("module.", "_orig_mod.")
_NAME = re.compile(r"^ckpt-e(\d+)-s(\d+)\.pt$")
_PLAIN = (torch.Tensor, int, float, bool, str, bytes, type(None), torch.dtype, torch.device)
_RESERVED = {"rng", "loader"}


class CheckpointError(RuntimeError):
    """A checkpoint file is missing, unreadable, unsafe, or does not match what it is loaded into."""


def unwrap_model(model: nn.Module) -> nn.Module:
    """Return the plain module inside DataParallel, DistributedDataParallel and torch.compile.

    Args:
        model: a module, wrapped any number of times or not at all; a plain module is
            returned as it is.

    Example:
        >>> net = nn.Linear(2, 2)
        >>> unwrap_model(nn.DataParallel(net)) is net
        True
    """
    while True:
        if isinstance(model, (nn.DataParallel, nn.parallel.DistributedDataParallel)):
            model = model.module
        elif hasattr(model, "_orig_mod") and isinstance(model._orig_mod, nn.Module):
            model = model._orig_mod  # torch.compile's OptimizedModule
        else:
            return model


def strip_prefixes(state_dict: Mapping, prefixes: tuple[str, ...] = WRAPPER_PREFIXES) -> dict:
    """Remove wrapper prefixes (``module.``, ``_orig_mod.``) from the START of every key.

    Prefixes may be stacked (``_orig_mod.module.fc.weight`` -> ``fc.weight``). Only leading
    prefixes go: a submodule that happens to be called ``module`` deeper in the model
    (``encoder.module.weight``) keeps its name.

    Args:
        state_dict: a mapping from parameter names to tensors.
        prefixes: the prefixes to strip.

    Returns:
        A new ``OrderedDict`` (the input is not modified), with ``_metadata`` carried over.

    Example:
        >>> sd = {"module.fc.weight": 1, "module.encoder.module.bias": 2}
        >>> list(strip_prefixes(sd))
        ['fc.weight', 'encoder.module.bias']
    """
    if not isinstance(state_dict, Mapping):
        raise TypeError(
            f"state_dict must be a mapping of names to tensors, got {type(state_dict).__name__}"
        )

    def strip(key: str) -> str:
        changed = True
        while changed:
            changed = False
            for prefix in prefixes:
                if key.startswith(prefix):
                    key, changed = key[len(prefix) :], True
        return key

    out = OrderedDict((strip(k), v) for k, v in state_dict.items())
    if len(out) != len(state_dict):
        raise ValueError("strip_prefixes: two keys collapse onto the same name after stripping")
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is not None:
        out._metadata = OrderedDict(
            (strip(k + ".")[:-1] if k else k, v) for k, v in metadata.items()
        )
    return out


def load_unwrapped(model: nn.Module, state_dict: Mapping) -> None:
    """Load into ``model`` a state dict saved from it plain or inside any nesting of wrappers.

    DataParallel and DistributedDataParallel prefix every key with ``module.``, torch.compile
    with ``_orig_mod.``, stacked in the order they were applied. Which prefixes the file carries
    is read from the file itself: a prefix is a wrapper's only when every key carries it, and
    peeling stops as soon as the keys are the model's own. So a submodule that is really called
    ``module`` keeps its name, even in a model whose only child it is (unlike
    :func:`strip_prefixes`, which strips every leading ``module.``).

    Args:
        model: the model to load into (a wrapped model is unwrapped first).
        state_dict: a mapping from parameter names to tensors; it is not modified.

    Raises:
        CheckpointError: the keys do not fit the model however the file was wrapped; the
            message names the missing and the unexpected keys as the model names them. The
            model is then left unchanged.

    Example:
        >>> net = nn.Linear(2, 2)
        >>> load_unwrapped(net, nn.DataParallel(nn.Linear(2, 2)).state_dict())
    """
    if not isinstance(state_dict, Mapping):
        raise TypeError(
            f"state_dict must be a mapping of names to tensors, got {type(state_dict).__name__}"
        )
    target = unwrap_model(model)
    want = list(target.state_dict())
    wanted = set(want)
    optional = {
        k for k in want if k.rsplit(".", 1)[-1] == "num_batches_tracked"
    }  # batch norm fills it in
    keys = list(state_dict)
    candidates = [""]  # the prefixes every key shares, peeled one wrapper at a time
    while keys:
        shared = [
            p for p in WRAPPER_PREFIXES if all(k.startswith(candidates[-1] + p) for k in keys)
        ]
        if not shared:
            break
        candidates.append(candidates[-1] + shared[0])

    def fits(prefix: str) -> bool:
        names = {k[len(prefix) :] for k in keys}
        return names <= wanted and wanted - names <= optional

    def overlap(prefix: str) -> int:
        return sum(k[len(prefix) :] in wanted for k in keys)

    exact = [p for p in candidates if fits(p)]
    prefix = exact[0] if exact else max(candidates, key=overlap)  # the first of the best
    renamed = OrderedDict((k[len(prefix) :], state_dict[k]) for k in keys)
    missing = [k for k in want if k not in renamed and k not in optional]
    unexpected = [k for k in renamed if k not in wanted]
    if missing or unexpected:
        unwrapped = f" (after removing the wrapper prefix {prefix!r})" if prefix else ""
        raise CheckpointError(
            f"the state dict does not fit {type(target).__name__}{unwrapped}: missing keys "
            f"{missing}, unexpected keys {unexpected}"
        )
    target.load_state_dict(renamed)


def _check_plain(value, where: str) -> None:
    """Refuse values that ``torch.load(weights_only=True)`` would refuse, naming where they are."""
    if isinstance(value, _PLAIN) and not type(value).__module__.startswith("numpy"):
        return  # (np.float64 subclasses float, yet weights_only refuses it)
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, (str, int)):
                raise TypeError(f"checkpoint key {key!r} at {where} must be a str or int")
            _check_plain(item, f"{where}[{key!r}]")
        return
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check_plain(item, f"{where}[{i}]")
        return
    hint = " (convert NumPy values with float(), int() or torch.as_tensor())"
    raise TypeError(
        f"checkpoint value at {where} is a {type(value).__module__}.{type(value).__qualname__}; "
        f"a checkpoint may hold only tensors and plain Python values (int, float, str, bool, "
        f"None, lists, tuples, dicts) so that it loads with weights_only=True"
        + (hint if type(value).__module__ == "numpy" else "")
    )


def _atomic_save(obj, path: Path) -> None:
    """Write to a temporary file in the same folder, fsync it, then rename over ``path``.

    The rename is atomic on POSIX and Windows, so at every instant ``path`` is either the old
    complete file or the new complete one; a crash leaves at most a stray ``.tmp`` file.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as err:
        raise CheckpointError(
            f"cannot write a checkpoint in {path.parent}: {err.strerror or err} "
            f"(the folder must be a writable directory)"
        ) from None
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(obj, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as err:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(err, OSError) or (
            isinstance(err, RuntimeError) and "inline_container" in str(err)
        ):  # torch reports a failed write (disk full, file too large) as an 'enforce fail'
            kept = f"the previous {path.name} is unchanged" if path.exists() else "nothing kept"
            first = str(err).strip().splitlines()[-1] if str(err).strip() else "no detail"
            raise CheckpointError(
                f"could not write {path} ({type(err).__name__}: {first}); "
                f"{_free_space(path.parent)} free on that disk (full, or a file size limit?); "
                f"{kept}"
            ) from None
        raise
    if hasattr(os, "O_DIRECTORY"):  # make the rename itself durable
        dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def _free_space(folder: Path) -> str:
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return "unknown space"
    return f"{free / 2**20:.1f} MiB"


def _a(word: str) -> str:
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"


def _check_count(name: str, value) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise ValueError(f"{name} must be None or a non-negative int, got {value!r}")


def save_checkpoint(
    path: str | os.PathLike,
    *,
    model: nn.Module,
    optimizer: torch.optim.Optimizer | None = None,
    scheduler=None,
    scaler: torch.amp.GradScaler | None = None,
    epoch: int | None = None,
    step: int | None = None,
    train_loader=None,
    **extra,
) -> Path:
    """Save the full training state to ``path``, atomically.

    Args:
        path: the file to write (its folder is created). An existing file is replaced only
            once the new one is completely on disk.
        model: the model; wrappers (DataParallel, DDP, torch.compile) are unwrapped first.
        optimizer: the optimizer whose state (momentum buffers, step counts) is saved, or
            None.
        scheduler: the learning-rate scheduler whose position is saved, or None.
        scaler: the fp16 ``GradScaler`` whose current scale is saved, or None.
        epoch: by convention the number of completed epochs, i.e. the epoch to resume from.
        step: batches done inside the current epoch (0 at an epoch boundary).
        train_loader: a DataLoader or :class:`~companion.loaders.InMemoryLoader` whose own
            generator state should be saved so that its shuffling order replays on resume.
        **extra: any other tensors or plain values (``best_accuracy=0.93``, ``history=...``).

    Returns:
        The path written.

    Raises:
        TypeError: if anything to be saved is not a tensor or plain value (it would not load
            with ``weights_only=True``); the message names where it is.
        CheckpointError: the file could not be written (the folder is not writable, the disk
            is full); a previous file at ``path`` is left as it was.

    Example:
        >>> import tempfile, os
        >>> net = nn.Linear(2, 1)
        >>> p = save_checkpoint(os.path.join(tempfile.mkdtemp(), "last.pt"), model=net, epoch=1)
        >>> load_checkpoint(p, model=net)["epoch"]
        1
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    _check_count("epoch", epoch)
    _check_count("step", step)
    clash = _RESERVED & extra.keys()
    if clash:
        raise ValueError(f"extra keys {sorted(clash)} are reserved by the checkpoint format")
    ckpt = {
        "format": FORMAT,
        "version": VERSION,
        "epoch": epoch,
        "step": step,
        "model": unwrap_model(model).state_dict(),
        "rng": get_rng_state(),
        "extra": extra,
    }
    if optimizer is not None:
        ckpt["optimizer"] = optimizer.state_dict()
        ckpt["optimizer_class"] = type(optimizer).__name__
    if scheduler is not None:
        ckpt["scheduler"] = scheduler.state_dict()
    if scaler is not None:
        ckpt["scaler"] = scaler.state_dict()
    if train_loader is not None:
        ckpt["loader"] = get_loader_state(train_loader)
    _check_plain(ckpt, "checkpoint")
    path = Path(path)
    _atomic_save(ckpt, path)
    return path


def _check_map_location(map_location) -> None:
    """A device that this machine lacks is the caller's mistake, not a corrupted file."""
    if not isinstance(map_location, (str, torch.device)):
        return  # a dict or a function: torch.load checks it
    try:
        device = torch.device(map_location)
    except RuntimeError:
        raise ValueError(
            f"map_location must be a device such as 'cpu' or 'cuda:0', got {map_location!r}"
        ) from None
    available = {
        "cuda": torch.cuda.is_available,
        "mps": lambda: torch.backends.mps.is_available(),
    }.get(device.type, lambda: True)
    if not available():
        raise ValueError(
            f"map_location={map_location!r}, but this machine has no {device.type.upper()} "
            f"device; load with map_location='cpu' (the default) and move the model afterwards "
            f"with model.to(device). The checkpoint file itself is fine."
        )


def _read(path: Path, map_location) -> dict:
    if not path.exists():
        raise CheckpointError(
            f"no checkpoint file at {path} (check the path, or use latest_checkpoint(folder))"
        )
    if path.is_dir():
        raise CheckpointError(
            f"{path} is a folder; pass a file, e.g. latest_checkpoint({str(path)!r})"
        )
    try:
        ckpt = torch.load(path, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as err:
        detail = next((ln.strip() for ln in str(err).splitlines() if "GLOBAL" in ln), "")
        if not detail:  # not a refused object: the bytes are simply not a valid pickle
            raise CheckpointError(
                f"cannot read {path}: the file is truncated, corrupted or not a PyTorch file "
                f"({next((ln.strip() for ln in str(err).splitlines() if 'load key' in ln), 'invalid pickle data')})"
            ) from None
        raise CheckpointError(
            f"refused to load {path}: it holds objects other than tensors and plain values "
            f"{('(' + detail + ') ') if detail else ''}and weights_only=True stopped it before "
            f"anything in it ran. A file from an untrusted source may carry code; never 'fix' "
            f"this with weights_only=False. If you made the file yourself, re-save it with "
            f"plain values only."
        ) from None
    except (RuntimeError, EOFError, KeyError, ValueError, zipfile.BadZipFile, OSError) as err:
        if "deserialize object on" in str(err):  # saved on a device this machine lacks
            raise CheckpointError(
                f"{path} holds tensors saved on a device this machine lacks; pass "
                f"map_location='cpu' (the file itself is fine): {str(err).splitlines()[0]}"
            ) from None
        raise CheckpointError(
            f"cannot read {path}: the file is truncated, corrupted or not a PyTorch file "
            f"({type(err).__name__}: {str(err).splitlines()[0] if str(err) else 'no detail'})"
        ) from None
    if not isinstance(ckpt, dict) or ckpt.get("format") != FORMAT:
        what = type(ckpt).__name__
        if (
            isinstance(ckpt, Mapping)
            and ckpt
            and all(isinstance(v, torch.Tensor) for v in ckpt.values())
        ):
            what = "a bare state_dict; load it with model.load_state_dict(torch.load(path, weights_only=True))"
        raise CheckpointError(
            f"{path} is not a companion checkpoint (found {what}); "
            f"save_checkpoint() writes the format load_checkpoint() reads"
        )
    if ckpt.get("version", 0) > VERSION:
        raise CheckpointError(
            f"{path} uses checkpoint format version {ckpt['version']}; this companion reads up "
            f"to {VERSION}: upgrade the companion package"
        )
    return ckpt


def load_checkpoint(
    path: str | os.PathLike,
    *,
    model: nn.Module,
    optimizer: torch.optim.Optimizer | None = None,
    scheduler=None,
    scaler: torch.amp.GradScaler | None = None,
    train_loader=None,
    restore_rng: bool = True,
    map_location="cpu",
    strict: bool = True,
) -> dict:
    """Restore a checkpoint written by :func:`save_checkpoint` in place.

    Loads with ``weights_only=True`` only: a file carrying code is refused, never run.

    Args:
        path: the checkpoint file.
        model: receives the weights (``module.``/``_orig_mod.`` prefixes in the file are fine,
            and so is a wrapped model).
        optimizer: receives the saved optimizer state when given (it must have been built
            over this model's parameters); an error if the file holds none.
        scheduler: receives the saved scheduler position when given; an error if the file
            holds none.
        scaler: receives the saved fp16 loss scale when given; an error if the file holds
            none.
        train_loader: gets back its generator's state, so that its shuffling order replays;
            an error if the file holds none.
        restore_rng: restore Python, NumPy, torch and CUDA generators. With False, the saved
            generator state is returned under ``"rng"`` for the caller to restore later.
        map_location: where tensors are loaded first (the optimizer moves its state to its
            parameters' device itself).
        strict: True: the keys must fit the model exactly once the wrapper prefixes the file
            carries are removed (read from the file, as :func:`load_unwrapped` does); False:
            every leading wrapper prefix is stripped (:func:`strip_prefixes`) and
            ``model.load_state_dict(..., strict=False)`` loads what matches.

    Returns:
        What was not consumed: ``{"epoch": ..., "step": ..., **extra}``.

    Raises:
        ValueError: ``map_location`` names a device this machine lacks (``"cuda"`` without
            CUDA): the file is fine, load it on the CPU.
        CheckpointError: the file is missing, truncated, corrupted, unsafe, not a checkpoint,
            or does not fit the model (the message names the file and the keys).

    Example:
        >>> state = load_checkpoint("runs/last.pt", model=model, optimizer=optimizer)  # doctest: +SKIP
        >>> start_epoch = state["epoch"]  # doctest: +SKIP
    """
    path = Path(path)
    _check_map_location(map_location)
    ckpt = _read(path, map_location)
    target = unwrap_model(model)
    try:
        if strict:  # the wrappers read from the file's keys: a child called `module` keeps it
            load_unwrapped(target, ckpt["model"])
        else:
            target.load_state_dict(strip_prefixes(ckpt["model"]), strict=False)
    except (RuntimeError, CheckpointError) as err:
        raise CheckpointError(f"{path} does not fit this model: {err}") from None
    for name, obj in (("optimizer", optimizer), ("scheduler", scheduler), ("scaler", scaler)):
        if obj is None:
            continue
        if ckpt.get(name) is None:
            raise CheckpointError(
                f"{path} holds no {name} state, but a {name} was passed to load_checkpoint; "
                f"pass {name}=None, or save it with save_checkpoint(..., {name}={name})"
            )
        saved_class = ckpt.get(f"{name}_class")
        if saved_class is not None and saved_class != type(obj).__name__:
            raise CheckpointError(
                f"{path} holds the state of {_a(saved_class)} {name}, but "
                f"{_a(type(obj).__name__)} was passed: build the same {name} as the saved run "
                f"(torch.optim.{saved_class}), or load only the model (optimizer=None) to "
                f"start a new optimization from its weights"
            )
        try:
            obj.load_state_dict(ckpt[name])
        except (ValueError, KeyError, RuntimeError) as err:
            raise CheckpointError(f"{path}: the saved {name} state does not fit: {err}") from None
    if train_loader is not None:
        set_loader_state(train_loader, ckpt.get("loader"))
    result = {"epoch": ckpt.get("epoch"), "step": ckpt.get("step"), **ckpt.get("extra", {})}
    if restore_rng:
        set_rng_state(ckpt["rng"])
    else:
        result["rng"] = ckpt["rng"]
    return result


def checkpoint_name(epoch: int, global_step: int) -> str:
    """The file name ``fit`` uses: sortable by progress, e.g. ``ckpt-e0003-s000000120.pt``."""
    return f"ckpt-e{epoch:04d}-s{global_step:09d}.pt"


def _progress_key(path: Path):
    match = _NAME.match(path.name)
    return (int(match.group(2)), int(match.group(1))) if match else None


def list_checkpoints(directory: str | os.PathLike) -> list[Path]:
    """Checkpoints written by ``fit`` in ``directory``, oldest first (temporary files excluded)."""
    directory = Path(directory)
    if not directory.is_dir():
        return []
    found = [p for p in directory.iterdir() if p.is_file() and _progress_key(p) is not None]
    return sorted(found, key=_progress_key)


def latest_checkpoint(directory: str | os.PathLike) -> Path | None:
    """The newest complete checkpoint in ``directory``, or None when there is none.

    Files named by ``fit`` (``ckpt-eEEEE-sSSSSSSSSS.pt``) are ordered by progress; otherwise the
    newest ``*.pt``/``*.pth`` file by modification time. Temporary files from an interrupted
    save are never picked, nor is a file that is not a complete archive.

    Args:
        directory: the folder to look in (not searched recursively); a folder that does not
            exist holds no checkpoint.

    Example:
        >>> latest_checkpoint("runs/")  # doctest: +SKIP
        PosixPath('runs/ckpt-e0003-s000000120.pt')
    """
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise NotADirectoryError(f"latest_checkpoint expects a folder, got the file {directory}")
    candidates = list_checkpoints(directory)
    if not candidates and directory.is_dir():
        others = [p for p in directory.iterdir() if p.is_file() and p.suffix in (".pt", ".pth")]
        candidates = sorted(others, key=lambda p: p.stat().st_mtime)
    for path in reversed(candidates):
        if zipfile.is_zipfile(path):
            return path
    return None
