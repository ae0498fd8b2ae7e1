"""companion: the reference implementations of *PyTorch in Practice*.

The training core is imported eagerly (it needs only torch); the toolkits (data, debugging,
environment, export) load on first use so that ``import companion`` stays light. Every public
name is ``companion.NAME``; the modules are flat, and each belongs to one wing:

Wings (a test keeps this list complete: every module in exactly one wing):

- training: loop, batches, amp, updates, schedule, history, callbacks, metrics, prediction,
  device, distributed, signals, _loop_checks, _progress
- checkpoints and resume: checkpoint, resume, rng
- data: data, vision_data, loaders, memmap, throughput, tensors
- models: blocks, finetune
- debugging: smoke, debug, dryrun, graph, leaks, leak_report
- deployment: export, inference
- environment: env, notebook, __main__
- shared helpers: _checks, _tables, _extras

``fit`` (loop) drives an epoch through ``batches`` (split, move, forward), ``amp`` and the
``callbacks``, and saves through ``checkpoint``; ``resume`` replays the loader's order from a
checkpoint. No module imports another's private (underscore) names.

Example:
    >>> import companion
    >>> companion.seed_everything(0)
    0
"""

from __future__ import annotations

import importlib

try:
    import torch as _torch  # noqa: F401
except Exception as _err:  # noqa: BLE001 - a broken install: doctor and diagnose must still run
    _TORCH_ERROR: BaseException | None = _err
else:
    _TORCH_ERROR = None
    from companion.amp import autocast, make_scaler
    from companion.checkpoint import (
        CheckpointError,
        latest_checkpoint,
        load_checkpoint,
        load_unwrapped,
        save_checkpoint,
        strip_prefixes,
        unwrap_model,
    )
    from companion.device import pick_device
    from companion.history import History
    from companion.loop import NonFiniteLossError, evaluate, fit, train_one_epoch
    from companion.rng import get_rng_state, seed_everything, set_rng_state

__version__ = "0.1.0"

# name -> submodule, loaded on first attribute access (PEP 562)
_LAZY = {
    "digits": "data",
    "shapes": "data",
    "sequences": "data",
    "SHAPES_CLASSES": "data",
    "SequenceDataset": "data",
    "Splits": "data",
    "fashion_mnist": "vision_data",
    "cifar10": "vision_data",
    "image_tensors": "vision_data",
    "pad_collate": "loaders",
    "InMemoryLoader": "loaders",
    "loader_throughput": "throughput",
    "ThroughputTable": "throughput",
    "choose_num_workers": "throughput",
    "plan_num_workers": "throughput",
    "MemmapDataset": "memmap",
    "write_memmap_dataset": "memmap",
    "trace_shapes": "debug",
    "find_device_mismatches": "debug",
    "diagnose_profile": "debug",
    "graph_ops": "graph",
    "draw_graph": "graph",
    "detect_leaks": "leaks",
    "LeakDetector": "leaks",
    "doctor": "env",
    "cuda_compatible": "env",
    "choose_wheel": "env",
    "diagnose": "env",
    "smoke_test": "smoke",
    "SmokeTestError": "smoke",
    "export_onnx": "export",
    "verify_onnx": "export",
    "ExportError": "export",
    "VerificationError": "export",
    "VerificationReport": "export",
    "QuantizationReport": "inference",
    "InferenceBenchmark": "inference",
    "quantize_onnx": "inference",
    "benchmark_inference": "inference",
    "ResidualBlock": "blocks",
    "WithFeatures": "blocks",
    "freeze_for_finetuning": "finetune",
    "Standardize": "blocks",
    "output_shape": "dryrun",
    "NotebookSetup": "notebook",
    "setup_notebook": "notebook",
    "yours_or_reference": "notebook",
    "usable_cores": "notebook",
    "cjk_font_fallback": "notebook",
    "as_float32": "tensors",
    "accumulation_step": "updates",
    "ema_update": "updates",
    "amp_step": "amp",
    "clip_and_step": "amp",
    "ReplayWarning": "resume",
    "EarlyStopping": "callbacks",
    "BestCheckpoint": "callbacks",
    "FitState": "callbacks",
    "F1Score": "metrics",
    "steps_per_epoch": "schedule",
    "predict": "prediction",
}
_SUBMODULES = {
    "data",
    "vision_data",
    "loaders",
    "throughput",
    "memmap",
    "debug",
    "dryrun",
    "graph",
    "leaks",
    "leak_report",
    "env",
    "smoke",
    "export",
    "inference",
    "blocks",
    "finetune",
    "notebook",
    "tensors",
    "updates",
    "resume",
    "callbacks",
    "metrics",
    "schedule",
    "prediction",
}

__all__ = [
    "CheckpointError",
    "History",
    "NonFiniteLossError",
    "autocast",
    "evaluate",
    "fit",
    "get_rng_state",
    "latest_checkpoint",
    "load_checkpoint",
    "load_unwrapped",
    "make_scaler",
    "pick_device",
    "save_checkpoint",
    "seed_everything",
    "set_rng_state",
    "strip_prefixes",
    "train_one_epoch",
    "unwrap_model",
    *_LAZY,
]


_TORCH_FREE = {"env", "diagnose", "doctor", "Diagnosis", "cuda_compatible", "choose_wheel"}


def __getattr__(name: str):
    if _TORCH_ERROR is not None and name not in _TORCH_FREE and not name.startswith("__"):
        raise ImportError(
            f"companion.{name} needs PyTorch, and `import torch` failed: "
            f"{type(_TORCH_ERROR).__name__}: {_TORCH_ERROR}. "
            "Run `python -m companion doctor` for a diagnosis and the fix."
        ) from _TORCH_ERROR
    if name in _SUBMODULES:
        return importlib.import_module(f"companion.{name}")
    if name in _LAZY:
        module = importlib.import_module(f"companion.{_LAZY[name]}")
        value = getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'companion' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__) | _SUBMODULES)
