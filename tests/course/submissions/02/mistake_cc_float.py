# Corpus: versions read with float(): fine for "12.4", a crash on a patch part ("12.6.3").
# %% ch02_cuda_compatible points=0 feedback="patch part"
def cuda_compatible(driver_cuda, wheel_cuda):
    d, w = float(driver_cuda), float(wheel_cuda)
    if w <= d:
        return True
    return int(w) == int(d) and int(w) >= 11
