# Corpus: a new hook registered in every forward call (they pile up).
# %% ch01_resnet_with_features points=0 feedback="hooks are on layer3"
class ResNetWithFeatures(nn.Module):
    def __init__(self, backbone, num_classes):
        super().__init__()
        backbone.fc = nn.Linear(backbone.fc.in_features, num_classes)
        self.backbone = backbone

    def forward(self, x):
        box = {}
        self.backbone.layer3.register_forward_hook(lambda m, i, o: box.setdefault("f", o))
        logits = self.backbone(x)
        return logits, box["f"]
