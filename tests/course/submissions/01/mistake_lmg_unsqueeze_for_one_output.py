# Corpus: linear_mse_gradients that adds a target dimension whenever the layer has one output:
# right for (N,) targets, but targets that already come as (N, 1) become (N, 1, 1) and
# broadcast into an (N, N, 1) error.
# %% ch01_linear_mse_gradients points=0 feedback="broadcast, without an error"
def linear_mse_gradients(x, w, b, y):
    if w.shape[1] == 1:
        y = y.unsqueeze(-1)
    error = x @ w + b - y
    d_pred = 2 * error / error.numel()
    return x.T @ d_pred, d_pred.sum(0)
