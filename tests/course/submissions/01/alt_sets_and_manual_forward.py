# Corpus: other correct styles: a set of node objects, einsum for the gradients, and a forward
# that runs the ResNet's layers by hand (no hook at all).
# %% ch01_graph_operations points=4 feedback=passed
def graph_operations(output):
    frontier = [output.grad_fn]
    seen = {output.grad_fn}
    names = []
    while frontier:
        next_frontier = []
        for fn in frontier:
            names.append(fn.__class__.__name__)
            for child, _ in fn.next_functions:
                if child is not None and child not in seen:
                    seen.add(child)
                    next_frontier.append(child)
        frontier = next_frontier
    return names
# %% ch01_linear_mse_gradients points=4 feedback=passed
def linear_mse_gradients(x, w, b, y):
    n, k = x.shape[0], w.shape[1]
    d_out = (x @ w + b - y.reshape(n, k)) * (2 / (n * k))
    return torch.einsum("nd,nk->dk", x, d_out), torch.einsum("nk->k", d_out)
# %% ch01_resnet_with_features points=4 feedback=passed
class ResNetWithFeatures(nn.Module):
    def __init__(self, backbone, num_classes):
        super().__init__()
        self.backbone = backbone
        self.backbone.fc = nn.Linear(self.backbone.fc.in_features, num_classes)

    def forward(self, x):
        net = self.backbone
        h = net.maxpool(net.relu(net.bn1(net.conv1(x))))
        features = net.layer3(net.layer2(net.layer1(h)))
        pooled = torch.flatten(net.avgpool(net.layer4(features)), 1)
        return net.fc(pooled), features
# %% ch01_freeze_for_finetuning points=4 feedback=passed
class Pinned:
    """Mixed into a BatchNorm layer's class: its mode stays eval, whatever train() is told."""

    def train(self, mode=True):
        return super().train(False)


_pinned_classes = {}


def freeze_for_finetuning(model, trainable, lr):
    prefixes = [t + "." for t in trainable]
    for name, module in model.named_modules():
        if isinstance(module, Pinned):  # pinned before: back to its own class first
            module.__class__ = module.__class__.__bases__[1]
        if not isinstance(module, nn.modules.batchnorm._BatchNorm):
            continue
        if name in trainable or any(name.startswith(p) for p in prefixes):
            continue
        cls = type(module)
        if cls not in _pinned_classes:
            _pinned_classes[cls] = type("Pinned" + cls.__name__, (Pinned, cls), {})
        module.__class__ = _pinned_classes[cls]
        module.eval()
    trainable_params = []
    for name, p in model.named_parameters():
        on = any((name + ".").startswith(p_) for p_ in prefixes)
        p.requires_grad_(on)
        if on:
            trainable_params.append(p)
    return torch.optim.SGD(trainable_params, lr=lr, momentum=0.9)
