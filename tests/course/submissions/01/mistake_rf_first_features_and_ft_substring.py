# Corpus: the hook keeps only the first features it sees (setdefault), so every later call returns
# the first input's features; trainable names matched as substrings ("conv1" in "layer1.0.conv1").
# %% ch01_resnet_with_features points=0 feedback="returned the features of call 1"
class ResNetWithFeatures(nn.Module):
    def __init__(self, backbone, num_classes):
        super().__init__()
        backbone.fc = nn.Linear(backbone.fc.in_features, num_classes)
        self.backbone = backbone
        self.cache = {}
        backbone.layer3.register_forward_hook(lambda m, i, o: self.cache.setdefault("layer3", o))

    def forward(self, x):
        return self.backbone(x), self.cache["layer3"]
# %% ch01_freeze_for_finetuning points=0 feedback="match module names"
def freeze_for_finetuning(model, trainable, lr):
    for name, p in model.named_parameters():
        p.requires_grad_(any(t in name for t in trainable))
    for name, m in model.named_modules():
        if isinstance(m, nn.BatchNorm2d) and not any(t in name for t in trainable):
            m.train = lambda mode=True, m=m: nn.Module.train(m, False)
            m.eval()
    return torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=lr, momentum=0.9)
