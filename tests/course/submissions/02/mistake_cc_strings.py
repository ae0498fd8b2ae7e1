# Corpus: versions compared as strings ("9.2" sorts after "10.2").
# %% ch02_cuda_compatible points=0 feedback="as numbers"
def cuda_compatible(driver_cuda, wheel_cuda):
    if wheel_cuda <= driver_cuda:
        return True
    d_major, w_major = driver_cuda.split(".")[0], wheel_cuda.split(".")[0]
    return d_major == w_major and int(d_major) >= 11
