# Corpus: torch.from_numpy alone: float64 stays float64 (and reversed arrays raise).
# %% ch03_as_float32 points=0 feedback="float64"
def as_float32(array, device):
    if not isinstance(array, np.ndarray):
        raise TypeError("not an array")
    return torch.from_numpy(array).to(device)
