# Corpus: a depth-first walk (recursion); the factor 2 of the square forgotten.
# %% ch01_graph_operations points=0 feedback="breadth-first"
def graph_operations(output):
    names, seen = [], set()

    def visit(fn):
        if fn is None or id(fn) in seen:
            return
        seen.add(id(fn))
        names.append(type(fn).__name__)
        for child, _ in fn.next_functions:
            visit(child)

    visit(output.grad_fn)
    return names
# %% ch01_linear_mse_gradients points=0 feedback="factor 2"
def linear_mse_gradients(x, w, b, y):
    err = x @ w + b - y
    return x.T @ err / err.numel(), err.sum(0) / err.numel()
