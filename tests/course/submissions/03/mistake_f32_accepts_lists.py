# Corpus: no check of the argument's type: a list (or a tensor) is converted instead of refused.
# %% ch03_as_float32 points=0 feedback="TypeError"
def as_float32(array, device):
    if (isinstance(array, np.ndarray) and array.dtype == np.float32
            and array.flags["C_CONTIGUOUS"] and array.flags.writeable
            and torch.device(device).type == "cpu"):
        return torch.from_numpy(array)
    return torch.tensor(np.array(array, dtype=np.float32), device=device)
