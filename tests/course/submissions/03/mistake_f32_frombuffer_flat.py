# Corpus: torch.frombuffer to share the float32 array's memory: shared, but the tensor is flat
# (frombuffer sees bytes, not a shape).
# %% ch03_as_float32 points=0 feedback="keep the array's shape"
def as_float32(array, device):
    if not isinstance(array, np.ndarray):
        raise TypeError("not an array")
    if array.dtype == np.float32 and array.flags["C_CONTIGUOUS"] and array.flags.writeable:
        return torch.frombuffer(array, dtype=torch.float32).to(device)  # no copy
    return torch.tensor(np.array(array, dtype=np.float32), device=device)
