# Corpus: the recorded wordings searched for with their exact letter case.
# %% ch02_error_cause points=0 feedback="letter case"
def error_cause(message):
    table = [
        ("Torch not compiled with CUDA enabled", "cpu_only_wheel"),
        ("driver on your system is too old", "driver_too_old"),
        ("driver version is insufficient", "driver_too_old"),
        ("Found no NVIDIA driver", "no_driver"),
        ("couldn't communicate with the NVIDIA driver", "no_driver"),
        ("no CUDA-capable device", "no_driver"),
        ("no kernel image is available", "no_kernel_image"),
        ("is not compatible with the current PyTorch installation", "no_kernel_image"),
        ("No module named 'torch'", "torch_not_installed"),
        ("No module named 'torchvision'", "torch_not_installed"),
        ("No module named 'torchaudio'", "torch_not_installed"),
    ]
    for phrase, key in table:
        if phrase in message:
            return key
    return "unknown"
