# Corpus: the natural first answer to linear_mse_gradients, written after one careful reading:
# right for targets of shape (N, K), but targets of shape (N,) (K = 1) broadcast against the
# (N, 1) predictions into an (N, N) error, so every prediction is compared with every target.
# %% ch01_linear_mse_gradients points=0 feedback="broadcast, without an error"
def linear_mse_gradients(x, w, b, y):
    error = x @ w + b - y
    d_pred = 2 * error / error.numel()
    return x.T @ d_pred, d_pred.sum(dim=0)
