# Corpus: freeze_for_finetuning matching a parameter by the first part of its name only
# (name.split(".")[0] in trainable): right for "layer4" and "fc", wrong for a name deep inside the
# model such as the docstring's own "layer4.0.conv2" ("at any depth"), which seed 1 now asks for.
# %% ch01_freeze_for_finetuning points=0 feedback="not only its first part"
import types


def _keep_eval(self, mode=True):
    return nn.Module.train(self, False)


def freeze_for_finetuning(model, trainable, lr):
    def trains(name):
        return name.split(".")[0] in trainable

    for name, p in model.named_parameters():
        p.requires_grad = trains(name)
    for name, m in model.named_modules():
        if not isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)):
            continue
        if "train" in vars(m):
            del m.train
        if not trains(name):
            m.train = types.MethodType(_keep_eval, m)
            m.eval()
    return torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=lr, momentum=0.9)
