# Corpus: minor version compatibility applied to CUDA 9 and 10 too.
# %% ch02_cuda_compatible points=0 feedback="before CUDA 11"
def cuda_compatible(driver_cuda, wheel_cuda):
    d = [int(p) for p in driver_cuda.split(".")[:2]]
    w = [int(p) for p in wheel_cuda.split(".")[:2]]
    return w <= d or w[0] == d[0]
