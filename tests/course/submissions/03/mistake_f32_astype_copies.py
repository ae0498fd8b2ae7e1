# Corpus: astype(np.float32) copies even a float32 array (copy=True is its default).
# %% ch03_as_float32 points=0 feedback="shared"
def as_float32(array, device):
    if not isinstance(array, np.ndarray):
        raise TypeError("not an array")
    return torch.from_numpy(array.astype(np.float32)).to(device)
