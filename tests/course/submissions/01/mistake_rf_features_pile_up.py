# Corpus: ResNetWithFeatures whose one hook appends every call's layer3 output to a list on the
# module and returns the last: one hook, one pass per call, right outputs, but the features of
# every call pile up on the model ("nothing piles up between calls").
# %% ch01_resnet_with_features points=0 feedback="nothing piles up between calls"
class ResNetWithFeatures(nn.Module):
    def __init__(self, backbone, num_classes):
        super().__init__()
        backbone.fc = nn.Linear(backbone.fc.in_features, num_classes)
        self.backbone = backbone
        self.seen = []
        backbone.layer3.register_forward_hook(lambda module, inputs, output: self.seen.append(output))

    def forward(self, x):
        logits = self.backbone(x)
        return logits, self.seen[-1]
