# Corpus: the backbone run twice per call, once for the logits and once for the features.
# %% ch01_resnet_with_features points=0 feedback="one pass per call"
class ResNetWithFeatures(nn.Module):
    def __init__(self, backbone, num_classes):
        super().__init__()
        backbone.fc = nn.Linear(backbone.fc.in_features, num_classes)
        self.backbone = backbone

    def forward(self, x):
        logits = self.backbone(x)
        b = self.backbone
        features = b.layer3(b.layer2(b.layer1(b.maxpool(b.relu(b.bn1(b.conv1(x)))))))
        return logits, features
