# Corpus: a fresh resnet18 built inside instead of the backbone given (its weights are lost).
# %% ch01_resnet_with_features points=0 feedback="keep the ResNet as the attribute `backbone`"
from torchvision.models import resnet18 as _resnet18


class ResNetWithFeatures(nn.Module):
    def __init__(self, backbone, num_classes):
        super().__init__()
        self.backbone = _resnet18(weights=None, num_classes=num_classes)
        self.saved = None
        self.backbone.layer3.register_forward_hook(self.save)

    def save(self, module, inputs, output):
        self.saved = output

    def forward(self, x):
        return self.backbone(x), self.saved
