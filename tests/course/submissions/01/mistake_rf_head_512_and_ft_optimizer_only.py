# Corpus: the new head hard-coded to 512 inputs (right for a resnet18 only); freezing done by
# handing the optimizer the trainable parameters alone (the frozen ones still require grad).
# %% ch01_resnet_with_features points=0 feedback="take in_features from the old head"
class ResNetWithFeatures(nn.Module):
    def __init__(self, backbone, num_classes):
        super().__init__()
        backbone.fc = nn.Linear(512, num_classes)
        self.backbone = backbone
        self.saved = {}
        backbone.layer3.register_forward_hook(lambda m, i, o: self.saved.update(f=o))

    def forward(self, x):
        logits = self.backbone(x)
        return logits, self.saved.pop("f")
# %% ch01_freeze_for_finetuning points=0 feedback="should require grad"
def freeze_for_finetuning(model, trainable, lr):
    params = [p for t in trainable for p in model.get_submodule(t).parameters()]
    for name, m in model.named_modules():
        if isinstance(m, nn.BatchNorm2d) and not any(name == t or name.startswith(t + ".") for t in trainable):
            m.train = lambda mode=True, m=m: nn.Module.train(m, False)
            m.eval()
    return torch.optim.SGD(params, lr=lr, momentum=0.9)
