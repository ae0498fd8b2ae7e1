# Corpus: linear_mse_gradients that squeezes the predictions to (N,) to meet (N,) targets: right
# for (N, K) and (N,) targets, but targets of shape (N, 1) now broadcast against the (N,)
# predictions into an (N, N) error.
# %% ch01_linear_mse_gradients points=0 feedback="broadcast, without an error"
def linear_mse_gradients(x, w, b, y):
    prediction = (x @ w + b).squeeze(-1)
    error = prediction - y
    d_pred = 2 * error / error.numel()
    if d_pred.dim() == 1:
        d_pred = d_pred.unsqueeze(-1)
    return x.T @ d_pred, d_pred.sum(0)
