# Corpus: features taken from layer4.
# %% ch01_resnet_with_features points=0 feedback="expected layer3's output"
class ResNetWithFeatures(nn.Module):
    def __init__(self, backbone, num_classes):
        super().__init__()
        backbone.fc = nn.Linear(backbone.fc.in_features, num_classes)
        self.backbone = backbone
        self.saved = None
        backbone.layer4.register_forward_hook(self.save)

    def save(self, module, inputs, output):
        self.saved = output

    def forward(self, x):
        return self.backbone(x), self.saved
