# Corpus: the natural first answer in torch's style: torch.as_tensor shares when it can and
# converts when it must; reversed arrays and read-only ones are copied first. But torch converts
# only arrays in the machine's byte order: a big-endian '>f4' array (np.fromfile, a binary
# format) raises ValueError. Passes the visible checks; loses the exercise on big-endian inputs.
# %% ch03_as_float32 points=0 feedback="byte order"
def as_float32(array, device):
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected a NumPy array, got {type(array).__name__}")
    if not array.flags.writeable or any(stride < 0 for stride in array.strides):
        array = array.copy()  # a tensor is always writable, and cannot have negative strides
    return torch.as_tensor(array, dtype=torch.float32, device=device)
