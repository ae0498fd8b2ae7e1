# Corpus: from_numpy then .float(): right for every layout but reversed ones, which raise.
# %% ch03_as_float32 points=0 feedback="negative strides"
def as_float32(array, device):
    if not isinstance(array, np.ndarray):
        raise TypeError("not an array")
    return torch.from_numpy(array).float().to(device)
