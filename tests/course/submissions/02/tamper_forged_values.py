# Corpus: forged values: str subclasses that equal every verdict and every tag. The data boundary stops them; listed for review.
# review: whose comparisons always agree
# %% ch02_choose_wheel points=0 feedback="return the tag as a string"
class _Any(str):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = str.__hash__


def choose_wheel(driver_cuda, capability, wheels):
    return _Any("cpu")
# %% ch02_self_check points=0 feedback="return one of"
def self_check(device, place=None, matmul=torch.matmul, size=64, scale=1.0):
    return _Any("ok")
