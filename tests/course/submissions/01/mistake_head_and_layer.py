# Corpus: the head's input size written as a number from another ResNet (2048); another file
# takes layer4 instead of layer3.
# %% ch01_resnet_with_features points=0 feedback="the old head's input features"
class ResNetWithFeatures(nn.Module):
    def __init__(self, backbone, num_classes):
        super().__init__()
        backbone.fc = nn.Linear(2048, num_classes)
        self.backbone = backbone
        self.saved = None
        backbone.layer3.register_forward_hook(self.save)

    def save(self, module, inputs, output):
        self.saved = output

    def forward(self, x):
        return self.backbone(x), self.saved
