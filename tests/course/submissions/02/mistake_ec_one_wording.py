# Corpus: one wording per cause (the first recorded one), so other wordings of a cause are missed.
# %% ch02_error_cause points=0 feedback="more than one wording"
def error_cause(message):
    m = message.lower()
    if "not compiled with cuda" in m:
        return "cpu_only_wheel"
    if "is too old" in m:
        return "driver_too_old"
    if "found no nvidia driver" in m:
        return "no_driver"
    if "is not compatible with the current pytorch installation" in m:
        return "no_kernel_image"
    if "no module named 'torch'" in m:
        return "torch_not_installed"
    return "unknown"
