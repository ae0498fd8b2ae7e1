# Corpus: a learner's correct answers for chapter 1, written from the released docstrings.
# %% ch01_graph_operations points=4 feedback=passed
from collections import deque


def graph_operations(output):
    start = output.grad_fn
    order, visited, queue = [], {id(start)}, deque([start])
    nodes = [start]
    while queue:
        node = queue.popleft()
        order.append(type(node).__name__)
        for child, _ in node.next_functions:
            if child is None or id(child) in visited:
                continue
            visited.add(id(child))
            nodes.append(child)
            queue.append(child)
    return order
# %% ch01_linear_mse_gradients points=4 feedback=passed
def linear_mse_gradients(x, w, b, y):
    prediction = x @ w + b
    if y.dim() == 1:  # one target per example: line it up with the (N, 1) predictions
        y = y.unsqueeze(1)
    residual = prediction - y
    scale = 2.0 / residual.numel()
    grad_w = scale * (x.T @ residual)
    grad_b = scale * residual.sum(dim=0)
    return grad_w, grad_b
# %% ch01_resnet_with_features points=4 feedback=passed
class ResNetWithFeatures(nn.Module):
    def __init__(self, backbone, num_classes):
        super().__init__()
        backbone.fc = nn.Linear(backbone.fc.in_features, num_classes)
        self.backbone = backbone
        self.stash = {}
        backbone.layer3.register_forward_hook(self.remember)

    def remember(self, module, inputs, output):
        self.stash["layer3"] = output

    def forward(self, x):
        logits = self.backbone(x)
        return logits, self.stash.pop("layer3")
# %% ch01_freeze_for_finetuning points=4 feedback=passed
import types


def _keep_eval(self, mode=True):
    return nn.Module.train(self, False)


def freeze_for_finetuning(model, trainable, lr):
    def trains(name):
        return any(name == t or name.startswith(t + ".") for t in trainable)

    for name, p in model.named_parameters():
        p.requires_grad = trains(name)
    for name, m in model.named_modules():
        if not isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)):
            continue
        if "train" in vars(m):  # pinned by an earlier call: unpin, then decide again
            del m.train
        if not trains(name):
            m.train = types.MethodType(_keep_eval, m)
            m.eval()
    return torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=lr, momentum=0.9)
