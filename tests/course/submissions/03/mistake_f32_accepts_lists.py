# Corpus: no check of the argument's type: a list (or a tensor) is converted instead of refused.
# %% ch03_as_float32 points=0 feedback="TypeError"
def as_float32(array, device):
    return torch.as_tensor(np.ascontiguousarray(array), dtype=torch.float32, device=device)
