# Corpus: ResNetWithFeatures that keeps the last call's features on the module (overwritten by
# the next call, never a pile): full marks ("at most the last call's features, or none").
# %% ch01_resnet_with_features points=4 feedback=passed
class ResNetWithFeatures(nn.Module):
    def __init__(self, backbone, num_classes):
        super().__init__()
        backbone.fc = nn.Linear(backbone.fc.in_features, num_classes)
        self.backbone = backbone
        self.last_features = None
        backbone.layer3.register_forward_hook(self._keep)

    def _keep(self, module, inputs, output):
        self.last_features = output

    def forward(self, x):
        return self.backbone(x), self.last_features
