# Corpus: a third style: a list with a read pointer and identity checks, broadcasting for the
# gradients, and an nn.Sequential trunk that shares the backbone's layers.
# %% ch01_graph_operations points=4 feedback=passed
def graph_operations(output):
    nodes = [output.grad_fn]
    i = 0
    while i < len(nodes):
        for nxt, _ in nodes[i].next_functions:
            if nxt is not None and not any(nxt is n for n in nodes):
                nodes.append(nxt)
        i += 1
    return [type(n).__name__ for n in nodes]
# %% ch01_linear_mse_gradients points=4 feedback=passed
def linear_mse_gradients(x, w, b, y):
    err = x @ w + b - y.view(x.shape[0], w.shape[1])
    factor = 2.0 / (err.shape[0] * err.shape[1])
    grad_w = (x.unsqueeze(2) * err.unsqueeze(1)).sum(dim=0) * factor
    grad_b = err.sum(dim=0) * factor
    return (grad_w, grad_b)
# %% ch01_resnet_with_features points=4 feedback=passed
class ResNetWithFeatures(nn.Module):
    def __init__(self, backbone, num_classes):
        super().__init__()
        in_features = backbone.fc.in_features
        backbone.fc = nn.Linear(in_features, num_classes)
        self.backbone = backbone
        self.trunk = nn.Sequential(backbone.conv1, backbone.bn1, backbone.relu, backbone.maxpool,
                                   backbone.layer1, backbone.layer2, backbone.layer3)

    def forward(self, x):
        features = self.trunk(x)
        out = self.backbone.avgpool(self.backbone.layer4(features)).flatten(1)
        return self.backbone.fc(out), features
# %% ch01_freeze_for_finetuning points=4 feedback=passed
def force_eval(module, args):  # runs before every forward: the mode is reset each time
    module.training = False


def freeze_for_finetuning(model, trainable, lr):
    # the modules themselves, then everything under them
    keep = set()
    for name in trainable:
        keep.update(id(p) for p in model.get_submodule(name).parameters())
    model.requires_grad_(False)
    params = [p for p in model.parameters() if id(p) in keep]
    for p in params:
        p.requires_grad_(True)
    for name, m in model.named_modules():
        if not isinstance(m, nn.modules.batchnorm._BatchNorm):
            continue
        old = getattr(m, "pin_handle", None)
        if old is not None:  # an earlier call's hook: gone, whatever this call decides
            old.remove()
            m.pin_handle = None
        under = any(name == t or name.startswith(t + ".") for t in trainable)
        if not under:
            m.pin_handle = m.register_forward_pre_hook(force_eval)
    return torch.optim.SGD(params, lr=lr, momentum=0.9)
