# Corpus: choose_wheel with packaging's Version for the runtimes, architectures as numbers XY (both sides of the same major), and max() with a key: full marks.
# %% ch02_choose_wheel points=3 feedback=passed
from packaging.version import Version


def _runtime(tag: str) -> Version:
    digits = tag.removeprefix("cu")
    return Version(f"{digits[:-1]}.{digits[-1]}")


def _driver_runs(driver: Version, runtime: Version) -> bool:
    if runtime <= driver:
        return True
    return runtime.major == driver.major and driver.major >= 11


def _gpu_runs(capability, archs, jit_ok) -> bool:
    major, minor = capability
    for arch in archs:
        kind, _, digits = arch.partition("_")
        number = int(digits)
        if kind == "sm" and number // 10 == major and number % 10 <= minor:
            return True
        if kind == "compute" and jit_ok and number <= 10 * major + minor:
            return True
    return False


def choose_wheel(driver_cuda, capability, wheels):
    if driver_cuda is None or capability is None:
        return "cpu"
    driver = Version(driver_cuda)
    good = [tag for tag, archs in wheels.items()
            if tag.startswith("cu") and _driver_runs(driver, _runtime(tag))
            and _gpu_runs(capability, archs, jit_ok=_runtime(tag) <= driver)]
    return max(good, key=_runtime) if good else "cpu"
