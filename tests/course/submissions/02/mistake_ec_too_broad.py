# Corpus: a prefix match for the module name: "No module named 'torch_geometric'" taken for torch.
# %% ch02_error_cause points=0 feedback="not an installation problem"
def error_cause(message):
    m = message.lower()
    if "not compiled with cuda" in m:
        return "cpu_only_wheel"
    if "too old" in m or "version is insufficient" in m:
        return "driver_too_old"
    if "no nvidia driver" in m or "communicate with the nvidia driver" in m or "no cuda-capable" in m:
        return "no_driver"
    if "kernel image" in m or "is not compatible with the current pytorch" in m:
        return "no_kernel_image"
    if "no module named 'torch" in m:
        return "torch_not_installed"
    return "unknown"
