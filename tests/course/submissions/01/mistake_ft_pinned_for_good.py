# Corpus: the frozen BatchNorm layers' train() replaced for good: a second call for gradual
# unfreezing (["fc"], then ["layer4", "fc"]) makes layer4's parameters trainable again, but its
# BatchNorm layers stay pinned to eval mode from the first call and never update their statistics.
# %% ch01_freeze_for_finetuning points=0 feedback="still held on its running statistics from the first call"
import types


def _keep_eval(self, mode=True):
    return nn.Module.train(self, False)


def freeze_for_finetuning(model, trainable, lr):
    def trains(name):
        return any(name == t or name.startswith(t + ".") for t in trainable)

    for name, p in model.named_parameters():
        p.requires_grad = trains(name)
    for name, m in model.named_modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)) and not trains(name):
            m.train = types.MethodType(_keep_eval, m)
            m.eval()
    return torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=lr, momentum=0.9)
