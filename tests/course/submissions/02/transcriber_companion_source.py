# Corpus: transcriber (issue 39): every exercise that has a companion counterpart, answered with the
# companion's own source as inspect.getsource shows it, helpers it calls pasted above it, imports
# added. Where the exercise asks what the companion does (most of them), that still earns the
# points: the flag is what stops it. Where it asks for another signature or policy, it loses them.
# review: matches companion
# %% ch02_choose_wheel points=3 feedback="passed"
import re


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


def _tag_version(name: str, digits: str) -> tuple[int, int]:
    """ "118" -> (11, 8), "92" -> (9, 2), "120" -> (12, 0): the last digit is the minor version."""
    if not digits.isdigit() or len(digits) < 2:
        raise ValueError(
            f"{name}: {digits!r} is not a version's digits; expected e.g. '118' or '90'"
        )
    return int(digits[:-1]), int(digits[-1])


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
