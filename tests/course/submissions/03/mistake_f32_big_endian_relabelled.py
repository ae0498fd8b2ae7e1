# Corpus: the byte-order error "fixed" by relabelling the dtype as native: the bytes stay in
# big-endian order and are read as little-endian numbers, so the values are garbage.
# %% ch03_as_float32 points=0 feedback="byte order"
def as_float32(array, device):
    if not isinstance(array, np.ndarray):
        raise TypeError("not an array")
    if not array.dtype.isnative:
        array = array.view(array.dtype.newbyteorder("="))  # torch wants the native order
    if (array.dtype == np.float32 and array.flags.c_contiguous and array.flags.writeable
            and torch.device(device).type == "cpu"):
        return torch.from_numpy(array)
    return torch.from_numpy(np.array(array, dtype=np.float32, order="C")).to(device)
