# Corpus: the image habit: uint8 arrays divided by 255 on the way in, so their values change
# (the contract keeps every number's value).
# %% ch03_as_float32 points=0 feedback="values differ"
def as_float32(array, device):
    if not isinstance(array, np.ndarray):
        raise TypeError("not an array")
    if array.dtype == np.uint8:
        array = array / 255.0  # pixels in [0, 1]
    if (array.dtype == np.float32 and array.flags["C_CONTIGUOUS"] and array.flags.writeable
            and torch.device(device).type == "cpu"):
        return torch.from_numpy(array)
    return torch.tensor(np.array(array, dtype=np.float32), device=device)
