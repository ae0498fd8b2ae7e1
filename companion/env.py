"""The environment doctor: versions, devices, a checked matmul, and error messages explained.

``python -m companion doctor`` runs :func:`doctor` from the command line. :func:`cuda_compatible`
answers "will this wheel run on this driver?", and :func:`diagnose` turns the error messages
learners meet most often into a cause and a fix.
"""

from __future__ import annotations

import html
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
import warnings
from dataclasses import asdict, dataclass, field

try:
    import torch
except Exception as _err:  # a broken install is exactly when doctor and diagnose are needed
    torch = None
    _TORCH_ERROR: BaseException | None = _err
else:
    _TORCH_ERROR = None

__all__ = [
    "Check",
    "DoctorReport",
    "doctor",
    "cuda_compatible",
    "choose_wheel",
    "Diagnosis",
    "diagnose",
]

OK, SKIP, FAIL = "OK", "SKIP", "FAIL"
_SECTIONS = {"versions": "Versions", "devices": "Devices", "matmul": "Matmul on each device"}


@dataclass
class Check:
    """One line of the doctor's report.

    Attributes:
        section: ``"versions"``, ``"devices"`` or ``"matmul"``.
        name: what was checked (``"torch"``, ``"CUDA"``, ``"cpu"``...).
        status: ``"OK"``, ``"SKIP"`` (not present here, which is fine) or ``"FAIL"``.
        detail: the version, device names, or what went wrong and how to fix it.
        seconds: time taken, for the matmul checks.
    """

    section: str
    name: str
    status: str
    detail: str
    seconds: float | None = None


@dataclass
class DoctorReport:
    """Everything :func:`doctor` found. Prints as a report; ``to_dict()``/``to_json()`` for data.

    Attributes:
        checks: the :class:`Check` lines, in order.
    """

    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no check failed (SKIP is fine: a missing GPU is not an error)."""
        return all(c.status != FAIL for c in self.checks)

    @property
    def failures(self) -> list[Check]:
        """The checks that failed."""
        return [c for c in self.checks if c.status == FAIL]

    def __getitem__(self, name: str) -> Check:
        """The first check called ``name`` (``report["torch"]``)."""
        for check in self.checks:
            if check.name == name:
                return check
        raise KeyError(f"no check named {name!r}; names: {[c.name for c in self.checks]}")

    def __str__(self) -> str:
        lines = ["PyTorch environment doctor"]
        width = max((len(c.name) for c in self.checks), default=0)
        for key, title in _SECTIONS.items():
            section = [c for c in self.checks if c.section == key]
            if section:
                lines.append(f"\n{title}")
            for c in section:
                took = f"  ({c.seconds * 1000:.1f} ms)" if c.seconds is not None else ""
                lines.append(f"  [{c.status:^4}] {c.name.ljust(width)}  {c.detail}{took}")
        counts = {s: sum(c.status == s for c in self.checks) for s in (OK, SKIP, FAIL)}
        verdict = "all good" if self.ok else "something needs fixing (see FAIL above)"
        lines.append(f"\n{counts[OK]} OK, {counts[SKIP]} SKIP, {counts[FAIL]} FAIL: {verdict}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        colors = {OK: "#070", SKIP: "#777", FAIL: "#b00"}
        rows = "".join(
            f"<tr><td>{html.escape(_SECTIONS[c.section])}</td>"
            f"<td style='color:{colors[c.status]}'><b>{c.status}</b></td>"
            f"<td>{html.escape(c.name)}</td><td>{html.escape(c.detail)}</td></tr>"
            for c in self.checks
        )
        return f"<table><tbody>{rows}</tbody></table>"

    def to_dict(self) -> dict:
        """Plain data: ``{"ok": bool, "checks": [dict, ...]}``."""
        return {"ok": self.ok, "checks": [asdict(c) for c in self.checks]}

    def to_json(self, indent: int | None = 2) -> str:
        """The report as a JSON string."""
        return json.dumps(self.to_dict(), indent=indent)


# ---------------------------------------------------------------------------------------------
# cuda_compatible


def _parse_cuda(name: str, value) -> tuple[int, int]:
    if value is None:
        raise ValueError(
            f"{name} is None: "
            + (
                "this PyTorch is a CPU-only wheel (torch.version.cuda is None), so there is no "
                "CUDA runtime to check; install a CUDA wheel first"
                if name == "wheel_cuda"
                else "no driver version was given; read it from the 'CUDA Version' field "
                "in the top right of `nvidia-smi`"
            )
        )
    if not isinstance(value, str):
        raise TypeError(
            f"{name} must be a version string like '12.4', got {type(value).__name__} "
            f"({value!r}); floats are ambiguous ('12.10' would read as 12.1), pass a string"
        )
    # The pattern stays inside the function (re caches it): no module-level table or constant
    # of the companion answers an exercise when copied (chapter 2 grades the learner's parsing).
    match = re.match(r"^\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?\s*$", value)
    if match is None:
        raise ValueError(
            f"{name}={value!r} is not a CUDA version; expected 'MAJOR.MINOR' such as '12.4' "
            f"or '11.8'"
        )
    return int(match.group(1)), int(match.group(2) or 0)


def cuda_compatible(driver_cuda: str, wheel_cuda: str) -> bool:
    """Can a PyTorch wheel built with CUDA ``wheel_cuda`` run on a driver for ``driver_cuda``?

    ``driver_cuda`` is the highest CUDA version the installed driver supports: the
    "CUDA Version" that ``nvidia-smi`` prints (it is not the installed toolkit). ``wheel_cuda``
    is the CUDA runtime bundled in the wheel: ``torch.version.cuda``. PyTorch wheels carry
    their own runtime, so no toolkit needs to be installed; only the driver matters.

    The rules implemented, from NVIDIA's CUDA compatibility guide:

    1. Backward compatibility: a driver runs every runtime up to its own CUDA version.
       Driver 12.4 runs wheels built with 12.4, 12.1 or 11.8.
    2. Minor version compatibility (CUDA 11 and later): within one major version, a runtime
       newer than the driver also runs (driver 12.2, wheel 12.6: True), because any driver of
       that major version is new enough for its minor releases. Caveats: features that need
       the newer driver report ``cudaErrorCallRequiresNewerDriver``, and PTX code cannot be
       JIT-compiled. PyTorch ships compiled kernels for the GPUs it supports, so training works.
       (For CUDA 11 the very first drivers, below 450.80.02, are an exception that the
       version number alone cannot reveal.)
    3. Across major versions there is no such rule: driver 11.8 cannot run a 12.x wheel.
       Before CUDA 11, a newer runtime never ran on an older driver.

    Data-centre GPUs can also run newer runtimes through the separate "forward compatibility"
    package (``cuda-compat``); that is not considered here.

    Args:
        driver_cuda: the driver's CUDA version, e.g. ``"12.4"`` (a patch part is ignored).
        wheel_cuda: the wheel's CUDA runtime version, e.g. ``torch.version.cuda``.

    Returns:
        True when the wheel's runtime can run on the driver.

    Raises:
        TypeError: if a version is not a string.
        ValueError: if a version is None (for the wheel: a CPU-only build) or malformed.

    Example:
        >>> cuda_compatible("12.4", "11.8")
        True
        >>> cuda_compatible("11.8", "12.1")
        False
    """
    driver = _parse_cuda("driver_cuda", driver_cuda)
    wheel = _parse_cuda("wheel_cuda", wheel_cuda)
    if wheel <= driver:
        return True
    return wheel[0] == driver[0] and wheel[0] >= 11


def _tag_version(name: str, digits: str) -> tuple[int, int]:
    """ "118" -> (11, 8), "92" -> (9, 2), "120" -> (12, 0): the last digit is the minor version."""
    if not digits.isdigit() or len(digits) < 2:
        raise ValueError(
            f"{name}: {digits!r} is not a version's digits; expected e.g. '118' or '90'"
        )
    return int(digits[:-1]), int(digits[-1])


def choose_wheel(
    driver_cuda: str | None, capability: tuple[int, int] | None, wheels: dict[str, list[str]]
) -> str:
    """The PyTorch wheel to install on a machine whose driver stays as it is.

    Among the CUDA wheels of ``wheels`` that would train on this machine, the one with the
    newest CUDA runtime; ``"cpu"`` when none would, or when there is no driver or no GPU. A
    wheel trains when the driver runs its runtime (:func:`cuda_compatible`) and its kernels run
    on the GPU: SASS ``sm_XY`` on a GPU of major version X and minor version at least Y; PTX
    ``compute_XY`` on any GPU of capability at least X.Y, compiled by the driver at start-up,
    which needs a driver at least as new as the wheel's runtime.

    Args:
        driver_cuda: the "CUDA Version" that ``nvidia-smi`` prints ("12.4"); None: no driver.
        capability: ``torch.cuda.get_device_capability()``, such as ``(8, 6)``; None: no GPU.
        wheels: each index tag (``cu126``, ``cpu``) with its ``torch.cuda.get_arch_list()``.

    Returns:
        The tag to install: one of the CUDA tags of ``wheels``, or ``"cpu"``.

    Raises:
        ValueError: if a version, a tag or an architecture is malformed.

    Example:
        >>> choose_wheel("12.2", (8, 0), {"cu128": ["sm_80", "sm_90"], "cu118": ["sm_80"]})
        'cu128'
        >>> choose_wheel("12.8", (12, 0), {"cu126": ["sm_80", "sm_90"], "cpu": []})
        'cpu'
    """
    if driver_cuda is None or capability is None:
        return "cpu"
    driver = _parse_cuda("driver_cuda", driver_cuda)
    gpu = tuple(capability)
    best, best_cuda = "cpu", None
    for tag, archs in wheels.items():
        if tag == "cpu":
            continue
        if not tag.startswith("cu"):
            raise ValueError(f"wheels: tag {tag!r} is neither 'cpu' nor 'cuXY' such as 'cu126'")
        cuda = _tag_version("wheels", tag[2:])
        if not cuda_compatible(driver_cuda, f"{cuda[0]}.{cuda[1]}"):
            continue
        for arch in archs:
            kind, _, digits = arch.partition("_")
            if kind not in ("sm", "compute"):
                raise ValueError(f"wheels[{tag!r}]: {arch!r} is neither 'sm_XY' nor 'compute_XY'")
            code = _tag_version(f"wheels[{tag!r}]", digits)
            if kind == "sm":
                runs = code[0] == gpu[0] and code[1] <= gpu[1]
            else:
                runs = code <= gpu and cuda <= driver
            if runs:
                if best_cuda is None or cuda > best_cuda:
                    best, best_cuda = tag, cuda
                break
    return best


# ---------------------------------------------------------------------------------------------
# doctor


def _nvidia_smi() -> tuple[str | None, str | None, str | None]:
    """(driver version, driver CUDA version, why not) from nvidia-smi, if it is installed."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None, None, "nvidia-smi not found (no NVIDIA driver, or it is not on PATH)"
    try:
        out = subprocess.run([exe], capture_output=True, text=True, timeout=20, check=False).stdout
    except (OSError, subprocess.SubprocessError) as err:
        return None, None, f"nvidia-smi did not run: {err}"
    driver = re.search(r"Driver Version:\s*([\d.]+)", out)
    cuda = re.search(r"CUDA Version:\s*([\d.]+)", out)
    if driver is None:
        first = out.strip().splitlines()[:1]
        return (
            None,
            None,
            f"nvidia-smi gave no driver version: {first[0] if first else 'no output'}",
        )
    return driver.group(1), cuda.group(1) if cuda else None, None


def _cudnn_version(number: int) -> str:
    """cuDNN 9 encodes 9.1.0 as 90100; cuDNN 8 encoded 8.9.2 as 8902."""
    if number >= 90000:
        return f"{number // 10000}.{number % 10000 // 100}.{number % 100}"
    return f"{number // 1000}.{number % 1000 // 100}.{number % 100}"


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def _broken_torch_checks(report: DoctorReport, err: BaseException) -> None:
    """The report when ``import torch`` itself fails: the error, its diagnosis, the driver."""
    add = report.checks.append
    add(Check("versions", "Python", OK, f"{platform.python_version()} ({sys.executable})"))
    found = diagnose(err)
    add(Check("versions", "torch", FAIL, f"import torch failed: {_first_line(err)}; {found.fix}"))
    driver, driver_cuda, why_not = _nvidia_smi()
    if driver is None:
        add(Check("versions", "driver", SKIP, why_not))
    else:
        add(Check("versions", "driver", OK, f"{driver} (supports CUDA {driver_cuda or '?'})"))
    add(Check("devices", "devices", SKIP, "not checked: PyTorch does not import"))


def _version_checks(report: DoctorReport) -> tuple[str | None, str | None]:
    add = report.checks.append
    add(Check("versions", "Python", OK, f"{platform.python_version()} ({sys.executable})"))
    hip = getattr(torch.version, "hip", None)
    build = (
        f"CUDA {torch.version.cuda} build"
        if torch.version.cuda
        else (f"ROCm {hip} build" if hip else "CPU-only build")
    )
    where = os.path.dirname(torch.__file__)
    add(Check("versions", "torch", OK, f"{torch.__version__}, {build} ({where})"))
    try:
        import torchvision

        add(Check("versions", "torchvision", OK, torchvision.__version__))
    except ModuleNotFoundError:
        add(Check("versions", "torchvision", SKIP, "not installed (pip install torchvision)"))
    except Exception as err:  # a torchvision built for another torch fails on import
        add(Check("versions", "torchvision", FAIL, f"{_first_line(err)}; {diagnose(err).fix}"))
    wheel = torch.version.cuda
    if wheel is None:
        detail = f"ROCm/HIP build {hip}" if hip else "none: this is a CPU-only wheel"
        add(Check("versions", "CUDA runtime", SKIP, detail))
    else:
        add(Check("versions", "CUDA runtime", OK, f"{wheel} (bundled in the wheel)"))
    try:
        cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    except Exception:  # a CUDA build without a loadable cuDNN
        cudnn = None
    if cudnn:
        add(Check("versions", "cuDNN", OK, f"{_cudnn_version(cudnn)} ({cudnn})"))
    else:
        add(Check("versions", "cuDNN", SKIP, "not available in this build"))
    driver, driver_cuda, why_not = _nvidia_smi()
    if driver is None:
        add(Check("versions", "driver", SKIP, why_not))
    elif wheel is None or driver_cuda is None:
        add(Check("versions", "driver", OK, f"{driver} (supports CUDA {driver_cuda or '?'})"))
    elif cuda_compatible(driver_cuda, wheel):
        newer = _parse_cuda("wheel_cuda", wheel) > _parse_cuda("driver_cuda", driver_cuda)
        how = "by minor version compatibility" if newer else "ok"
        add(
            Check(
                "versions",
                "driver",
                OK,
                f"{driver}, CUDA {driver_cuda}: runs wheel {wheel} ({how})",
            )
        )
    else:
        add(
            Check(
                "versions",
                "driver",
                FAIL,
                f"{driver} supports CUDA up to {driver_cuda}, but this wheel needs {wheel}: "
                f"update the driver, or install a wheel built for CUDA {driver_cuda} or older",
            )
        )
    return driver, wheel


def _device_checks(report: DoctorReport, driver: str | None, wheel: str | None) -> list[str]:
    add = report.checks.append
    devices = ["cpu"]
    # torch explains a failed CUDA start (driver too old, GPU too new) only in a warning
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        available = torch.cuda.is_available()
        names = []
        for i in range(torch.cuda.device_count() if available else 0):
            props = torch.cuda.get_device_properties(i)
            names.append(
                f"cuda:{i} {props.name} (sm_{props.major}{props.minor}, "
                f"{props.total_memory / 2**30:.0f} GiB)"
            )
            devices.append(f"cuda:{i}")
    said = "; ".join(dict.fromkeys(str(w.message).strip().splitlines()[0] for w in caught))
    said = f" (torch says: {said})" if said else ""
    if available:
        add(Check("devices", "CUDA", OK, f"{len(names)} device(s): " + "; ".join(names) + said))
    elif wheel is None:
        status = FAIL if driver else SKIP
        fix = (
            ": an NVIDIA driver is installed, so install a CUDA wheel to use the GPU"
            if driver
            else ""
        )
        add(Check("devices", "CUDA", status, f"not available: CPU-only wheel{fix}"))
    elif driver:
        add(
            Check(
                "devices",
                "CUDA",
                FAIL,
                "a driver is installed but torch.cuda.is_available() is False: check "
                "CUDA_VISIBLE_DEVICES and the driver/wheel versions above" + said,
            )
        )
    else:
        lean = (
            "; this torch is a CUDA build, whose CUDA libraries take several GB: without a GPU "
            "the CPU build does the same work (pip install torch --index-url "
            "https://download.pytorch.org/whl/cpu)"
            if wheel is not None
            else ""
        )
        add(Check("devices", "CUDA", SKIP, f"not available: no NVIDIA GPU or driver found{lean}"))
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        add(Check("devices", "MPS", OK, "Apple silicon GPU (Metal)"))
        devices.append("mps")
    elif mps is not None and mps.is_built() and sys.platform == "darwin":
        add(
            Check(
                "devices",
                "MPS",
                SKIP,
                "built in, but not available (current wheels need macOS 14 or later)",
            )
        )
    else:
        add(Check("devices", "MPS", SKIP, "not available (only on Apple silicon Macs)"))
    cpu = _cpu_name()
    add(
        Check(
            "devices",
            "CPU",
            OK,
            f"{cpu}, {os.cpu_count()} logical cores, torch uses {torch.get_num_threads()} threads",
        )
    )
    return devices


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def _matmul_check(device_name: str, size: int) -> Check:
    """Multiply two random matrices on the device; compare with float64 on the CPU; time it."""
    device = torch.device(device_name)
    try:
        gen = torch.Generator().manual_seed(0)
        a = torch.randn(size, size, generator=gen)
        b = torch.randn(size, size, generator=gen)
        expected = a.double() @ b.double()
        da, db = a.to(device), b.to(device)
        result = (da @ db).cpu()  # the first call also pays for kernel loading
        times = []
        for _ in range(3):
            _sync(device)
            start = time.perf_counter()
            da @ db
            _sync(device)
            times.append(time.perf_counter() - start)
        seconds = sorted(times)[1]
    except Exception as err:
        return Check("matmul", device_name, FAIL, f"{_first_line(err)} ({diagnose(err).fix})")
    error = ((result.double() - expected).norm() / expected.norm()).item()
    # float32 gives ~1e-7 and TF32 ~1e-3; a broken device or driver gives garbage (or NaN)
    if not error < 1e-2:
        return Check(
            "matmul",
            device_name,
            FAIL,
            f"{size}x{size} float32 result is wrong (relative error {error:.1e} against float64 "
            f"on the CPU): the device or its driver is broken",
            seconds,
        )
    gflops = 2 * size**3 / seconds / 1e9
    return Check(
        "matmul",
        device_name,
        OK,
        f"{size}x{size} float32 correct (relative error {error:.1e}), {gflops:.1f} GFLOP/s",
        seconds,
    )


def doctor(*, size: int = 512, matmul: bool = True, verbose: bool = True) -> DoctorReport:
    """Run the three self-checks after an install: versions, devices, a real matmul on each.

    1. Versions: Python, torch, torchvision, the CUDA runtime in the wheel, cuDNN and the NVIDIA
       driver (through ``nvidia-smi``, when present), with the driver/wheel compatibility.
    2. Devices: CUDA GPUs (names, compute capability, memory), Apple MPS, the CPU.
    3. Matmul: on every available device, multiply two ``size x size`` float32 matrices, check
       the result against float64 on the CPU, and time it.

    A missing GPU is a SKIP, not a failure: the course runs on the CPU. A FAIL means something
    is installed but broken (a driver too old for the wheel, a GPU that torch cannot use, a
    wrong result).

    Args:
        size: matrix size for the matmul check.
        matmul: run the matmul checks (False for a quick look at versions and devices).
        verbose: print the report.

    Returns:
        A :class:`DoctorReport` (``report.ok``, ``report.to_dict()``, ``report.to_json()``).

    Raises:
        ValueError: if ``size`` is not a positive int.

    Example:
        >>> report = doctor(size=64, verbose=False)
        >>> report["cpu"].status
        'OK'
    """
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"size must be a positive int (matrix side), got {size!r}")
    report = DoctorReport()
    if torch is None:
        _broken_torch_checks(report, _TORCH_ERROR)
        if verbose:
            print(report)
        return report
    driver, wheel = _version_checks(report)
    devices = _device_checks(report, driver, wheel)
    if matmul:
        report.checks.extend(_matmul_check(d, size) for d in devices)
    if verbose:
        print(report)
    return report


# ---------------------------------------------------------------------------------------------
# diagnose


@dataclass
class Diagnosis:
    """What :func:`diagnose` made of an error message.

    Attributes:
        key: a short identifier of the problem (``"cpu_only_wheel"``), ``"unknown"`` if none.
        cause: what is probably wrong.
        fix: what to do about it.
        see: where to read more (a course chapter or a documentation page).
        matched: the part of the message that was recognised ("" when unknown).
    """

    key: str
    cause: str
    fix: str
    see: str = ""
    matched: str = ""

    @property
    def known(self) -> bool:
        """True when the message was recognised."""
        return self.key != "unknown"

    def __str__(self) -> str:
        lines = [f"Cause: {self.cause}", f"Fix:   {self.fix}"]
        if self.see:
            lines.append(f"See:   {self.see}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """Plain data, with the fields above and ``known``."""
        return {**asdict(self), "known": self.known}


_CH2 = "chapter 2 (Environment); https://pytorch.org/get-started/locally/"
_RULES: list[tuple[str, str, str, str, str]] = [
    # (key, regular expression, cause, fix, see). The first match wins: specific ones first.
    (
        "cpu_only_wheel",
        r"Torch not compiled with CUDA enabled|PyTorch is not linked with support for cuda",
        "This PyTorch is a CPU-only build (torch.version.cuda is None), so it cannot use a GPU.",
        "Reinstall torch from the CUDA index that matches your driver, e.g. `pip install torch "
        "--index-url https://download.pytorch.org/whl/cu126`, inside your project's virtual "
        "environment; or run on the CPU with device = companion.pick_device('auto').",
        _CH2,
    ),
    (
        "driver_too_old",
        r"NVIDIA driver on your system is too old|driver version is insufficient for CUDA "
        r"runtime|CUDA driver version is insufficient",
        "The wheel bundles a CUDA runtime newer than the installed NVIDIA driver supports.",
        "Update the NVIDIA driver, or install a wheel built for an older CUDA: compare the "
        "'CUDA Version' of `nvidia-smi` with torch.version.cuda "
        "(companion.cuda_compatible(driver, wheel) tells you).",
        _CH2,
    ),
    (
        "no_driver",
        r"Found no NVIDIA driver on your system|NVIDIA-SMI has failed because it couldn't "
        r"communicate with the NVIDIA driver",
        "No working NVIDIA driver is reachable: none is installed, it is not loaded, or this "
        "container was started without it.",
        "Install (or reinstall) the NVIDIA driver and check `nvidia-smi`; in a container, start "
        "it with GPU access (`docker run --gpus all`).",
        _CH2,
    ),
    (
        "no_gpu_visible",
        r"no CUDA-capable device is detected",
        "The CUDA driver answered, but it shows this process no GPU: CUDA_VISIBLE_DEVICES is "
        "empty or names GPUs that do not exist, the job or container was given no GPU, or the "
        "GPU itself has stopped responding.",
        "Run `nvidia-smi` (it ignores CUDA_VISIBLE_DEVICES): if it lists the GPU, check `echo "
        "$CUDA_VISIBLE_DEVICES` (unset it or give valid indices) and ask the scheduler or "
        "container for a GPU (`--gres=gpu:1`, `docker run --gpus all`); if it lists none or "
        "fails, the machine needs its administrator. Reinstalling torch does not help.",
        _CH2,
    ),
    (
        "out_of_memory",
        r"CUDA out of memory|OutOfMemoryError|CUDA error: out of memory|MPS backend out of "
        r"memory|CUBLAS_STATUS_ALLOC_FAILED|DefaultCPUAllocator: can't allocate memory",
        "The device ran out of memory: the batch, the model or its activations do not fit, or "
        "something keeps old tensors (and their graphs) alive.",
        "Lower the batch size (use gradient accumulation to keep the effective batch), use "
        "mixed precision (torch.amp), accumulate loss.item() not loss (companion.detect_leaks "
        "checks), validate under torch.no_grad(), and check with `nvidia-smi` that no other "
        "process (an old notebook kernel) holds the GPU.",
        "chapter 7 (Training efficiency) and chapter 6 (Debugging)",
    ),
    (
        "device_side_assert",
        r"device-side assert triggered",
        "A check inside a GPU kernel failed, most often an index out of range: a class label "
        ">= num_classes (or negative) in cross_entropy, or an embedding index >= num_embeddings. "
        "CUDA reports it later than it happened, so the traceback may point elsewhere.",
        "Run the same batch on the CPU for a readable error (or set CUDA_LAUNCH_BLOCKING=1), "
        "check targets.min() and targets.max() against the number of classes, then restart the "
        "process: the CUDA context is unusable after this error.",
        "chapter 6 (Debugging)",
    ),
    (
        "dataloader_worker_killed",
        r"DataLoader worker \(pid.*?\) (?:is killed by signal|exited unexpectedly)",
        "A DataLoader worker process died: usually out of RAM (the system killed it) or out of "
        "shared memory (/dev/shm is small in Docker), sometimes a crash in the dataset code.",
        "Run with num_workers=0 to see the real error from your Dataset; use fewer workers and "
        "keep __getitem__ light; in Docker add --shm-size=2g (or --ipc=host).",
        "chapter 5 (Data loading)",
    ),
    (
        "worker_pickling",
        r"Can't pickle local object|Can't get attribute '[^']+' on <module '__main__'",
        "With num_workers > 0 on macOS and Windows (spawn start method), the Dataset and "
        "collate_fn are pickled into each worker; a class or function defined inside a "
        "notebook or another function cannot be.",
        "Define the Dataset and collate_fn at the top level of an importable .py file, or use "
        "num_workers=0 in the notebook.",
        "chapter 5 (Data loading)",
    ),
    (
        "cuda_fork",
        r"Cannot re-initialize CUDA in forked subprocess",
        "CUDA was used in the main process before worker processes were forked; a forked child "
        "cannot use CUDA.",
        "Keep CUDA out of the Dataset (return CPU tensors and move batches in the training "
        "loop), or use multiprocessing_context='spawn' in the DataLoader.",
        "chapter 5 (Data loading)",
    ),
    (
        "no_kernel_image",
        r"no kernel image is available for execution on the device|with CUDA capability "
        r"sm_\d+ is not compatible with the current PyTorch installation",
        "This wheel has no compiled kernels for your GPU's architecture (compute capability): "
        "the GPU is too old for it, or too new.",
        "Compare torch.cuda.get_device_capability() with torch.cuda.get_arch_list(); for a new "
        "GPU install a wheel built with a newer CUDA, for an old one an older PyTorch release.",
        _CH2,
    ),
    (
        "device_mismatch",
        r"Expected all tensors to be on the same device|Input type \(.*\) and weight type "
        r"\(.*\) should be the same|found at least two devices|is not on the expected device",
        "An operation got tensors on different devices: the model is on one device and the "
        "inputs, targets, a mask or a constant inside the model are on another.",
        "Pick one device at the entry point and move the model and every batch to it "
        "(inputs.to(device), targets.to(device)); register constants in a module with "
        "register_buffer so model.to(device) moves them. companion.find_device_mismatches("
        "model, inputs) lists the stragglers.",
        "chapter 6 (Debugging)",
    ),
    (
        "shape_mismatch",
        r"mat1 and mat2 shapes cannot be multiplied|expected input\[.*\] to have \d+ channels|"
        r"Expected input batch_size \(\d+\) to match target batch_size|The size of tensor a "
        r"\(\d+\) must match the size of tensor b|shape '\[.*\]' is invalid for input of size",
        "Two shapes do not fit: most often the in_features of the first nn.Linear after a "
        "conv/pool chain (in 'mat1 and mat2 shapes cannot be multiplied (4x1152 and 1568x10)', "
        "1152 values per sample arrive where in_features=1568 was declared), the channels a "
        "convolution expects, or inputs and targets of different batch sizes.",
        "Print the shapes going in, or trace every layer: companion.trace_shapes(model, inputs) "
        "marks the failing layer. Compute in_features by a dry run "
        "(companion.output_shape(features, (1, C, H, W))) or use nn.LazyLinear, instead of by "
        "hand.",
        "chapter 6 (Debugging)",
    ),
    (
        "mps_unavailable",
        r"MPS backend is supported on MacOS|not linked with support for mps|MPS backend is "
        r"not available|mps.*not available",
        "Apple's MPS backend is not usable here: not an Apple silicon Mac, a macOS older than "
        "current wheels need (macOS 14), or a torch build without MPS.",
        "Check torch.backends.mps.is_available() and torch.backends.mps.is_built(); update "
        "macOS, or fall back to the CPU with companion.pick_device('auto').",
        _CH2,
    ),
    (
        "torchvision_mismatch",
        r"operator torchvision::\w+ does not exist|Couldn't load custom C\+\+ ops",
        "torchvision was built for another torch version than the one installed.",
        "Install matching versions together: `pip install --upgrade torch torchvision` from "
        "the same index (see the compatibility table in torchvision's README).",
        _CH2,
    ),
    (
        "numpy_abi",
        r"compiled using NumPy 1\.x cannot be run in|numpy.core.multiarray failed to import|"
        r"_ARRAY_API not found",
        "A package was compiled against NumPy 1.x but NumPy 2 is installed (or the reverse).",
        "Upgrade the package that fails (often torch or torchvision) to a release built for "
        "NumPy 2, or pin `numpy<2` in this environment.",
        _CH2,
    ),
    (
        "torch_not_installed",
        r"No module named '?(?:torch|torchvision|torchaudio)'?(?![\w.])",
        "torch (or torchvision) is not installed in the Python (or Jupyter kernel) that ran "
        "this code: often a different environment from the one you installed into.",
        "Activate the project's environment (`source .venv/bin/activate`), check "
        "`python -c 'import sys; print(sys.executable)'`, install with `python -m pip install "
        "torch`, and in Jupyter choose the kernel of that environment.",
        _CH2,
    ),
    (
        "broken_install",
        r"libtorch\w*\.so|libc10\w*\.so|undefined symbol|DLL load failed|"
        r"Error loading .*(?:torch|c10).*\.dll|libcudnn\w*\.so|libcublas\w*\.so",
        "The torch installation is broken or mixed: its shared libraries are missing or come "
        "from different versions (two installs on top of each other, pip and conda mixed).",
        "Create a fresh virtual environment and install torch there, once; do not mix conda "
        "and pip installs of torch in one environment.",
        _CH2,
    ),
    (
        "invalid_device_ordinal",
        r"invalid device ordinal",
        "The code asked for a GPU index that does not exist (for example cuda:1 on a one-GPU "
        "machine, or after CUDA_VISIBLE_DEVICES renumbered the GPUs).",
        "Use torch.cuda.device_count() to see how many GPUs are visible and pick an index "
        "below it, or just 'cuda'.",
        _CH2,
    ),
    (
        "cudnn_error",
        r"CUDNN_STATUS_\w+|cuDNN error",
        "cuDNN failed, most often because the GPU is out of memory, sometimes because of a "
        "mismatched cuDNN install.",
        "Try a smaller batch; set torch.backends.cudnn.enabled = False to confirm; reinstall "
        "torch in a fresh environment if it persists.",
        _CH2,
    ),
]
_COMPILED = [(key, re.compile(rx, re.IGNORECASE), c, f, s) for key, rx, c, f, s in _RULES]


def _first_line(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    return f"{type(err).__name__}: {lines[0] if lines else ''}"


def diagnose(error_text) -> Diagnosis:
    """Explain a common environment error message: its likely cause and the fix.

    Recognises, among others: the CPU-only wheel ("Torch not compiled with CUDA enabled"), a
    driver too old for the wheel, no driver, a driver that shows no GPU, out of memory (CUDA,
    MPS, CPU), "device-side assert triggered", a DataLoader worker killed, pickling errors of
    workers, CUDA in forked workers, "no kernel image is available", tensors on different
    devices, shapes that do not fit (in_features, channels, batch sizes), MPS not available, a
    torchvision or NumPy built for another version, torch not installed, a broken install.

    Args:
        error_text: the message (a traceback's last lines are enough), or the exception itself.

    Returns:
        A :class:`Diagnosis`; for an unrecognised message its ``key`` is ``"unknown"``,
        ``known`` is False, and the fix says how to proceed.

    Raises:
        TypeError: if ``error_text`` is neither a string nor an exception.

    Example:
        >>> diagnose("AssertionError: Torch not compiled with CUDA enabled").key
        'cpu_only_wheel'
    """
    if isinstance(error_text, BaseException):
        error_text = f"{type(error_text).__name__}: {error_text}"
    if not isinstance(error_text, str):
        raise TypeError(
            f"error_text must be the error message as a string (or the exception), "
            f"got {type(error_text).__name__}"
        )
    for key, pattern, cause, fix, see in _COMPILED:
        match = pattern.search(error_text)
        if match:
            return Diagnosis(key, cause, fix, see, match.group(0))
    return Diagnosis(
        "unknown",
        "This message is not one of the common environment errors I know.",
        "Read the last line of the traceback first (it names the error), then the first line "
        "that points into your own code; run `python -m companion doctor` to rule out the "
        "installation; search for the exact message without your file names and numbers.",
        "chapter 2 (Environment) and chapter 6 (Debugging)",
    )
