# Corpus: read-only taken to mean "a memory map": np.memmap arrays are copied, but a read-only
# array from np.frombuffer is shared.
# %% ch03_as_float32 points=0 feedback="read-only"
def as_float32(array, device):
    if not isinstance(array, np.ndarray):
        raise TypeError("not an array")
    if isinstance(array, np.memmap):
        array = np.array(array)  # a file's pages: copy them into memory of our own
    if array.dtype == np.float32 and array.flags.c_contiguous:
        return torch.from_numpy(array).to(device)
    return torch.from_numpy(np.array(array, dtype=np.float32, order="C")).to(device)
