# Corpus: every conv and linear layer re-initialised with Kaiming init "for the new task" (the
# pretrained weights are lost); frozen BatchNorm layers put in eval mode once, which the training
# loop's model.train() undoes.
# %% ch01_resnet_with_features points=0 feedback="other weights must be kept"
class ResNetWithFeatures(nn.Module):
    def __init__(self, backbone, num_classes):
        super().__init__()
        backbone.fc = nn.Linear(backbone.fc.in_features, num_classes)
        for m in backbone.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.kaiming_normal_(m.weight)
        self.backbone = backbone
        self.out = None
        backbone.layer3.register_forward_hook(self.grab)

    def grab(self, module, inputs, output):
        self.out = output

    def forward(self, x):
        logits = self.backbone(x)
        return logits, self.out
# %% ch01_freeze_for_finetuning points=0 feedback="keep frozen BatchNorm layers in eval mode through model.train()"
def freeze_for_finetuning(model, trainable, lr):
    def trains(name):
        return any(name == t or name.startswith(t + ".") for t in trainable)

    for name, p in model.named_parameters():
        p.requires_grad_(trains(name))
    for name, m in model.named_modules():
        if isinstance(m, nn.BatchNorm2d) and not trains(name):
            m.eval()
    return torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=lr, momentum=0.9)
