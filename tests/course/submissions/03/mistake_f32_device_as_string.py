# Corpus: the device compared with "cpu" as a string: torch.device("cpu") takes the copying path
# (only the second hidden input passes the device that way).
# %% ch03_as_float32 points=0 feedback="torch.device('cpu')"
def as_float32(array, device):
    if not isinstance(array, np.ndarray):
        raise TypeError("not an array")
    if (device == "cpu" and array.dtype == np.float32 and array.flags["C_CONTIGUOUS"]
            and array.flags.writeable):
        return torch.from_numpy(array)
    return torch.tensor(np.ascontiguousarray(array, dtype=np.float32)).to(device)
