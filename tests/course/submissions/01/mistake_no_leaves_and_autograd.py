# Corpus: the AccumulateGrad leaves left out; the gradients taken from autograd.
# %% ch01_graph_operations points=0 feedback="the leaf w is missing"
def graph_operations(output):
    names, queue, seen = [], [output.grad_fn], {id(output.grad_fn)}
    keep = [output.grad_fn]
    while queue:
        fn = queue.pop(0)
        if type(fn).__name__ != "AccumulateGrad":
            names.append(type(fn).__name__)
        for child, _ in fn.next_functions:
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                keep.append(child)
                queue.append(child)
    return names
# %% ch01_linear_mse_gradients points=0 feedback="computed with autograd"
def linear_mse_gradients(x, w, b, y):
    w = w.clone().requires_grad_(True)
    b = b.clone().requires_grad_(True)
    loss = ((x @ w + b - y) ** 2).mean()
    loss.backward()
    return w.grad, b.grad
