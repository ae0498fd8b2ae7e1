# Corpus: no memory of visited nodes (a node reached twice is listed twice); the bias gradient
# averaged over the rows.
# %% ch01_graph_operations points=0 feedback="more than once"
def graph_operations(output):
    names, queue = [], [output.grad_fn]
    while queue:
        fn = queue.pop(0)
        names.append(type(fn).__name__)
        queue.extend(child for child, _ in fn.next_functions if child is not None)
    return names
# %% ch01_linear_mse_gradients points=0 feedback="mean over the rows"
def linear_mse_gradients(x, w, b, y):
    err = x @ w + b - y
    d = 2 * err / err.numel()
    return x.T @ d, d.mean(0)
