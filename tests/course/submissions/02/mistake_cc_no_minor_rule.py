# Corpus: only backward compatibility: a newer minor version of the driver's major is refused.
# %% ch02_cuda_compatible points=0 feedback="minor version compatibility"
def cuda_compatible(driver_cuda, wheel_cuda):
    d = tuple(int(p) for p in driver_cuda.split(".")[:2])
    w = tuple(int(p) for p in wheel_cuda.split(".")[:2])
    return w <= d
