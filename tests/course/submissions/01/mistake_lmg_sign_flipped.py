# Corpus: linear_mse_gradients with the residual written target - prediction and the minus sign
# of its derivative lost (both gradients come out negated). The feedback names the sign, not just
# "check each step of the chain rule".
# %% ch01_linear_mse_gradients points=0 feedback="opposite sign: a minus sign was lost"
def linear_mse_gradients(x, w, b, y):
    prediction = x @ w + b
    if y.dim() == 1:
        y = y.unsqueeze(1)
    error = y - prediction  # target minus prediction ...
    scale = 2.0 / error.numel()
    return scale * (x.T @ error), scale * error.sum(dim=0)  # ... but d(error)/d(prediction) = -1
