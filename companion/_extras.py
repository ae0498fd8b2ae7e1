"""Optional dependencies: a feature whose extra is not installed says which extra to install.

companion's core (training loop, evaluation, checkpoints and resume, callbacks, metrics, AMP,
data helpers, debugging tools, the environment doctor) needs only torch, numpy and tqdm. The
rest comes with extras of the ``pytorch-in-practice`` distribution, named for what they enable:

- ``onnx``: ONNX export, verification, quantization and serving (onnx, onnxruntime, onnxscript);
- ``vision``: torchvision's datasets (Fashion-MNIST, CIFAR-10);
- ``plots``: every ``.plot()`` and ``draw_graph`` (matplotlib);
- ``widgets``: progress bars as notebook widgets (ipywidgets; without it tqdm prints text).
"""

from __future__ import annotations

import importlib
from types import ModuleType

DISTRIBUTION = "pytorch-in-practice"

EXTRAS = {
    "onnx": ("onnx", "onnxruntime", "onnxscript"),
    "vision": ("torchvision",),
    "plots": ("matplotlib",),
    "widgets": ("ipywidgets",),
}


class MissingExtraError(ImportError):
    """A feature needs a package of an extra that is not installed."""


def need(module: str, extra: str, feature: str) -> ModuleType:
    """Import ``module`` (a package of ``extra``) for ``feature``, or say how to install it.

    Raises:
        MissingExtraError: naming the feature, the missing package, the extra and the command.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        top = module.split(".", 1)[0]
        if exc.name is not None and exc.name.split(".", 1)[0] != top:
            raise  # the package is there but one of its own dependencies is broken: show that
        packages = ", ".join(EXTRAS[extra])
        raise MissingExtraError(
            f"{feature} needs {top}, which is not installed: it comes with companion's "
            f"'{extra}' extra ({packages}). Install it with: "
            f"pip install '{DISTRIBUTION}[{extra}]'"
        ) from exc
