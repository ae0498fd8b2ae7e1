# Corpus: the gradients taken with torch.func instead of by hand.
# %% ch01_linear_mse_gradients points=0 feedback="computed with autograd"
from torch.func import grad as _grad


def linear_mse_gradients(x, w, b, y):
    loss = lambda w, b: ((x @ w + b - y) ** 2).mean()  # noqa: E731
    return _grad(loss, argnums=(0, 1))(w, b)
