# Corpus: any mention of the NVIDIA driver taken for "no driver", checked before "too old".
# %% ch02_error_cause points=0 feedback="expected 'driver_too_old'"
def error_cause(message):
    m = message.lower()
    if "not compiled with cuda" in m:
        return "cpu_only_wheel"
    if "nvidia driver" in m or "no cuda-capable" in m:
        return "no_driver"
    if "too old" in m or "version is insufficient" in m:
        return "driver_too_old"
    if "kernel image" in m or "is not compatible with the current pytorch" in m:
        return "no_kernel_image"
    for name in ("torch", "torchvision", "torchaudio"):
        if f"no module named '{name}'" in m:
            return "torch_not_installed"
    return "unknown"
