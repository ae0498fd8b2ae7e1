# Corpus: a head with an extra "background" class (num_classes + 1 outputs); Adam instead of the
# SGD with momentum the docstring asks for.
# %% ch01_resnet_with_features points=0 feedback="expected (2, 7)"
class ResNetWithFeatures(nn.Module):
    def __init__(self, backbone, num_classes):
        super().__init__()
        backbone.fc = nn.Linear(backbone.fc.in_features, num_classes + 1)
        self.backbone = backbone
        self.stash = {}
        backbone.layer3.register_forward_hook(lambda m, i, o: self.stash.__setitem__("x", o))

    def forward(self, x):
        logits = self.backbone(x)
        return logits, self.stash.pop("x")
# %% ch01_freeze_for_finetuning points=0 feedback="return torch.optim.SGD"
def freeze_for_finetuning(model, trainable, lr):
    def trains(name):
        return any(name == t or name.startswith(t + ".") for t in trainable)

    for name, p in model.named_parameters():
        p.requires_grad_(trains(name))
    for name, m in model.named_modules():
        if isinstance(m, nn.BatchNorm2d) and not trains(name):
            m.train = lambda mode=True, m=m: nn.Module.train(m, False)
            m.eval()
    return torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=lr)
