# Corpus: nodes told apart by their names; the mean taken over the rows only.
# %% ch01_graph_operations points=0 feedback="identity"
def graph_operations(output):
    names, queue = [], [output.grad_fn]
    while queue:
        fn = queue.pop(0)
        name = type(fn).__name__
        if name in names:
            continue
        names.append(name)
        queue += [child for child, _ in fn.next_functions if child is not None]
    return names
# %% ch01_linear_mse_gradients points=0 feedback="not only the N rows"
def linear_mse_gradients(x, w, b, y):
    err = x @ w + b - y
    n = x.shape[0]
    return 2 * x.T @ err / n, 2 * err.sum(0) / n
