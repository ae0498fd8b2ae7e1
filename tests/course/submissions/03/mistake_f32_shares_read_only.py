# Corpus: sharing decided on dtype and strides alone (the writable flag never asked): a read-only
# float32 array (np.frombuffer, mmap_mode="r") is shared, and a write into the tensor would reach
# read-only memory.
# %% ch03_as_float32 points=0 feedback="read-only"
def as_float32(array, device):
    if not isinstance(array, np.ndarray):
        raise TypeError("not an array")
    if array.dtype == np.float32 and min(array.strides) >= 0:
        return torch.from_numpy(array).to(device)  # a view
    return torch.from_numpy(np.array(array, dtype=np.float32, order="C")).to(device)
