# Corpus: the None entries of next_functions followed; the weight gradient transposed.
# %% ch01_graph_operations points=0 feedback="NoneType"
def graph_operations(output):
    names, queue, seen = [], [output.grad_fn], set()
    while queue:
        fn = queue.pop(0)
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        names.append(type(fn).__name__)
        queue.extend(child for child, _ in fn.next_functions)
    return names
# %% ch01_linear_mse_gradients points=0 feedback="is grad_w transposed"
def linear_mse_gradients(x, w, b, y):
    err = x @ w + b - y
    d = 2 * err / err.numel()
    return d.T @ x, d.sum(0)
