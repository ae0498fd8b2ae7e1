# Corpus: the node list returned leaves first (reversed, "the order backward ends in"); only each
# named module's own parameters made trainable (recurse=False: layer4's blocks stay frozen).
# %% ch01_graph_operations points=0 feedback="the docstring's example gives"
def graph_operations(output):
    order, seen, queue = [], set(), [output.grad_fn]
    seen.add(id(output.grad_fn))
    keep = [output.grad_fn]
    while queue:
        node = queue.pop(0)
        order.append(type(node).__name__)
        for child, _ in node.next_functions:
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                keep.append(child)
                queue.append(child)
    return order[::-1]
# %% ch01_freeze_for_finetuning points=0 feedback="at any depth"
def freeze_for_finetuning(model, trainable, lr):
    model.requires_grad_(False)
    params = []
    for t in trainable:
        for p in model.get_submodule(t).parameters(recurse=False):
            p.requires_grad_(True)
            params.append(p)
    for name, m in model.named_modules():
        if isinstance(m, nn.BatchNorm2d) and not any(name == t or name.startswith(t + ".") for t in trainable):
            m.train = lambda mode=True, m=m: nn.Module.train(m, False)
            m.eval()
    return torch.optim.SGD(params, lr=lr, momentum=0.9)
