# Corpus: linear_mse_gradients that squeezes predictions and targets alike: the values are right
# for every target shape, but with one output the gradients come back as (D,) and () instead of
# the shapes of w (D, 1) and b (1,).
# %% ch01_linear_mse_gradients points=0 feedback="a gradient has the shape of its parameter"
def linear_mse_gradients(x, w, b, y):
    error = (x @ w + b).squeeze(-1) - y.squeeze(-1)
    d_pred = 2 * error / error.numel()
    return x.T @ d_pred, d_pred.sum(0)
