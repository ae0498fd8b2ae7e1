# Corpus: another correct as_float32: one astype whose copy flag says when a copy is a must
# (read-only memory, negative strides); astype converts other dtypes and byte orders anyway.
# %% ch03_as_float32 points=3 feedback=passed
def as_float32(array, device):
    if not isinstance(array, np.ndarray):
        raise TypeError(f"as_float32: array must be np.ndarray, not {type(array).__name__}")
    must_copy = not array.flags.writeable or min(array.strides) < 0
    array = array.astype(np.float32, order="C" if must_copy else "K", copy=must_copy)
    return torch.from_numpy(array).to(device)
