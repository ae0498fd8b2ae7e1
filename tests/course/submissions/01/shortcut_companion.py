# Corpus: the companion's graph walk and feature model used under other names.
# review: called the companion's reference
# %% ch01_graph_operations points=0 feedback="not delegated to the companion"
from companion import graph_ops as _walk


def graph_operations(output):
    return list(_walk(output).names)
# %% ch01_resnet_with_features points=0 feedback="not delegated to the companion"
from companion.blocks import WithFeatures as _Tap


class ResNetWithFeatures(nn.Module):
    def __init__(self, backbone, num_classes):
        super().__init__()
        self.inner = _Tap(backbone, num_classes)
        self.backbone = backbone

    def forward(self, x):
        return self.inner(x)
