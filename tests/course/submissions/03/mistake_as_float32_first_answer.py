# Corpus: the natural first answer, written after one careful reading of the docstring: the
# sharing branch asks for a writable float32 C-contiguous array on the CPU, and everything else
# goes through np.ascontiguousarray(array, dtype=np.float32), which converts big-endian arrays
# and lays out reversed ones. But ascontiguousarray hands back the array itself when nothing
# needs converting, so a read-only float32 array (np.frombuffer, mmap_mode="r") is shared after
# all. Passes the visible checks; loses the exercise on the read-only inputs.
# %% ch03_as_float32 points=0 feedback="read-only"
def as_float32(array, device):
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected a NumPy array, got {type(array).__name__}")
    device = torch.device(device)
    if (device.type == "cpu" and array.dtype == np.float32 and array.flags.c_contiguous
            and array.flags.writeable):
        return torch.from_numpy(array)  # shared: no copy
    # one copy that converts (dtype, byte order) and fixes the layout
    return torch.from_numpy(np.ascontiguousarray(array, dtype=np.float32)).to(device)
