# Corpus: the device argument ignored: everything stays on the CPU.
# %% ch03_as_float32 points=0 feedback="put it on the device"
def as_float32(array, device):
    if not isinstance(array, np.ndarray):
        raise TypeError("not an array")
    return torch.from_numpy(np.ascontiguousarray(array, dtype=np.float32))
