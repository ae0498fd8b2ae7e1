"""Notebook helpers: one setup call at the top of a chapter, and your function or the reference.

``setup_notebook`` does what every chapter's first cell needs (seeds, device, CPU threads, fast
mode, a font for Chinese figure labels) and reports it on one line. ``yours_or_reference`` lets
later cells use the function a learner wrote in an exercise, and the companion's while the
exercise is still a stub.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass

import torch

from companion.device import pick_device
from companion.rng import seed_everything

__all__ = [
    "CJK_FONTS",
    "NotebookSetup",
    "cjk_font_fallback",
    "setup_notebook",
    "usable_cores",
    "yours_or_reference",
]

# Fonts with Chinese glyphs, the usual ones of each platform (Linux, macOS, Windows), best first.
CJK_FONTS = (
    "Noto Sans CJK SC",
    "Source Han Sans SC",
    "Noto Sans SC",
    "WenQuanYi Micro Hei",
    "WenQuanYi Zen Hei",
    "PingFang SC",
    "Hiragino Sans GB",
    "Heiti SC",
    "Microsoft YaHei",
    "SimHei",
    "Noto Sans CJK JP",
)

# The course's models are small: a matmul of a few thousand multiply-adds is over before extra
# threads are woken, and on a busy machine threads wait for each other. Measured on the 2-core
# course machine with chapter 4 (benchmarks/course.py): see setup_notebook's docstring.
_SMALL_MODEL_THREADS = 1


@dataclass(frozen=True)
class NotebookSetup:
    """What :func:`setup_notebook` set up.

    Attributes:
        seed: the seed every generator got.
        device: where the chapter computes.
        threads: CPU threads PyTorch uses.
        fast: True when ``COURSE_FAST=1`` is set (the course's own tests and grading shrink
            the demonstrations).
        cores: CPU cores this process may run on (:func:`usable_cores`): the most threads or
            loader workers worth trying.
    """

    seed: int
    device: torch.device
    threads: int
    fast: bool
    cores: int = 1

    def __str__(self) -> str:
        return (
            f"torch {torch.__version__} | device: {self.device} | CPU threads: {self.threads} "
            f"of {self.cores} cores | fast mode: {self.fast}"
        )


def setup_notebook(
    seed: int = 0, *, device: str | torch.device = "auto", threads: int | str = "auto"
) -> NotebookSetup:
    """Seed every generator, pick the device, size PyTorch's CPU threads, read the fast mode.

    ``threads="auto"`` uses ``COURSE_THREADS`` when set, else one thread: the course's models are
    so small that more threads cost more in hand-offs than they save, and on a machine doing
    other work they wait for each other. Chapter 4 on a 2-core machine took 93-181 s with
    PyTorch's default threads while another process was busy, and 40 s with one.

    Args:
        seed: passed to :func:`companion.seed_everything`.
        device: passed to :func:`companion.pick_device` (``"auto"``: CUDA, then MPS, then CPU).
        threads: a positive int, or ``"auto"``.

    Returns:
        A :class:`NotebookSetup`; print it for the one-line summary.

    Raises:
        TypeError, ValueError: for a bad ``threads`` (or ``seed``/``device``, from the helpers).

    Example:
        >>> setup = setup_notebook(0, device="cpu", threads=1)
        >>> setup.device, setup.threads
        (device(type='cpu'), 1)
    """
    if threads == "auto":
        threads = _env_threads() or _SMALL_MODEL_THREADS
    if isinstance(threads, bool) or not isinstance(threads, int):
        raise TypeError(f"threads must be a positive int or 'auto', got {threads!r}")
    if threads < 1:
        raise ValueError(f"threads must be at least 1, got {threads}")
    seed_everything(seed)
    if "matplotlib" in sys.modules:  # the chapter plots: let its Chinese edition's labels render
        cjk_font_fallback()
    chosen = pick_device(device)
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    fast = os.environ.get("COURSE_FAST") == "1"
    return NotebookSetup(seed, chosen, threads, fast, usable_cores())


def cjk_font_fallback() -> str | None:
    """Let matplotlib draw Chinese text, by adding an installed CJK font behind the default one.

    The first font of :data:`CJK_FONTS` that matplotlib knows (or, failing that, that fontconfig's
    ``fc-list :lang=zh`` finds, for fonts installed after matplotlib built its cache) is appended
    to ``rcParams["font.family"]``: Latin text keeps the default font, and a glyph it lacks comes
    from the CJK font (matplotlib's font fallback). Calling it again changes nothing.

    Returns:
        The font's name, or None when no CJK font is installed (Chinese glyphs then draw as boxes,
        with matplotlib's "Glyph ... missing" warning; install one, e.g. ``sudo apt-get install
        fonts-noto-cjk``; macOS and Windows have one).

    Raises:
        companion.MissingExtraError: if matplotlib is not installed (the ``plots`` extra).

    Example:
        >>> name = cjk_font_fallback()
        >>> name is None or name in CJK_FONTS
        True
    """
    from companion._extras import need

    need("matplotlib", "plots", "Chinese figure labels")
    import matplotlib
    from matplotlib import font_manager

    chosen = _known_cjk_font(font_manager)
    if chosen is None and shutil.which("fc-list"):
        try:
            listed = subprocess.run(
                ["fc-list", ":lang=zh", "file"], capture_output=True, text=True, timeout=10
            ).stdout
        except (OSError, subprocess.SubprocessError):
            listed = ""
        for line in sorted(set(listed.splitlines())):
            path = line.strip().rstrip(":")
            if path.endswith((".ttf", ".otf", ".ttc")):
                try:
                    font_manager.fontManager.addfont(path)
                except (OSError, RuntimeError, ValueError):
                    continue
        chosen = _known_cjk_font(font_manager)
    if chosen is not None:
        family = matplotlib.rcParams["font.family"]
        family = [family] if isinstance(family, str) else list(family)
        if chosen not in family:
            matplotlib.rcParams["font.family"] = [*family, chosen]
    return chosen


def _known_cjk_font(font_manager) -> str | None:
    names = {font.name for font in font_manager.fontManager.ttflist}
    return next((name for name in CJK_FONTS if name in names), None)


def usable_cores() -> int:
    """The CPU cores this process may run on: its affinity mask where the OS has one.

    ``os.cpu_count()`` counts the machine's cores, even when a container, ``taskset`` or a
    grading worker allows fewer; threads or workers sized from it then queue on the cores they
    share and each waits for the others.

    Example:
        >>> 1 <= usable_cores() <= (os.cpu_count() or 1)
        True
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS and Windows have no affinity mask in os
        return max(1, os.cpu_count() or 1)


def _env_threads() -> int | None:
    value = os.environ.get("COURSE_THREADS", "").strip()
    if not value:
        return None
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"COURSE_THREADS must be a positive integer, got {value!r}")
    return int(value)


def yours_or_reference(yours, reference, *, name: str | None = None):
    """Call ``yours``; while it still raises ``NotImplementedError`` (a stub), call ``reference``.

    The first fallback prints a one-line notice, so it is clear which code ran. Both must accept
    the same arguments (pass options by keyword when their signatures differ in that).

    Args:
        yours: the function or class a learner wrote in an exercise.
        reference: the companion's version.
        name: what the notice calls ``yours`` (default: its ``__name__``).

    Returns:
        A callable with ``yours``'s name.

    Example:
        >>> def double(x):
        ...     raise NotImplementedError()
        >>> f = yours_or_reference(double, lambda x: 2 * x)
        >>> f(4)
        note: double is not written yet (it raises NotImplementedError): using the companion's version
        8
    """
    if not callable(yours) or not callable(reference):
        raise TypeError("yours_or_reference(yours, reference): both must be callable")
    name = name or getattr(yours, "__name__", repr(yours))
    noticed = False

    @functools.wraps(yours)
    def call(*args, **kwargs):
        nonlocal noticed
        try:
            return yours(*args, **kwargs)
        except NotImplementedError:
            if not noticed:
                noticed = True
                print(
                    f"note: {name} is not written yet (it raises NotImplementedError): using "
                    "the companion's version"
                )
            return reference(*args, **kwargs)

    return call
