# Corpus: nodes named with node.name() (AccumulateGrad's is 'torch::autograd::AccumulateGrad');
# an optimizer over every parameter of the model, frozen ones included.
# %% ch01_graph_operations points=0 feedback="is not a class name"
from collections import deque


def graph_operations(output):
    names, seen, queue = [], {output.grad_fn}, deque([output.grad_fn])
    while queue:
        node = queue.popleft()
        names.append(node.name())
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                seen.add(child)
                queue.append(child)
    return names
# %% ch01_freeze_for_finetuning points=0 feedback="give it the trainable parameters only"
def freeze_for_finetuning(model, trainable, lr):
    def trains(name):
        return any(name == t or name.startswith(t + ".") for t in trainable)

    for name, p in model.named_parameters():
        p.requires_grad_(trains(name))
    for name, m in model.named_modules():
        if isinstance(m, nn.BatchNorm2d) and not trains(name):
            m.train = lambda mode=True, m=m: nn.Module.train(m, False)
            m.eval()
    return torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
