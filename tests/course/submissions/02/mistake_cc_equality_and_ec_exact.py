# Corpus: versions required to be equal (no backward compatibility); messages looked up whole
# in a table of the recorded ones (tracebacks and variants missed).
# %% ch02_cuda_compatible points=0 feedback="a driver runs every older runtime"
def cuda_compatible(driver_cuda, wheel_cuda):
    return driver_cuda.split(".")[:2] == wheel_cuda.split(".")[:2]
# %% ch02_error_cause points=0 feedback="whole traceback"
KNOWN = {
    "AssertionError: Torch not compiled with CUDA enabled": "cpu_only_wheel",
    "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version": "driver_too_old",
    "RuntimeError: CUDA error: no CUDA-capable device is detected": "no_driver",
    "RuntimeError: CUDA error: no kernel image is available for execution on the device": "no_kernel_image",
    "ModuleNotFoundError: No module named 'torch'": "torch_not_installed",
}


def error_cause(message):
    return KNOWN.get(message.strip(), "unknown")
