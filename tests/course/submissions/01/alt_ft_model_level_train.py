# Corpus: another correct design: the model's own train() replaced by a method bound to the model
# (copy.deepcopy rebinds it to the copy), which reads the frozen names stored on the model, so a
# second call only has to store new names.
# %% ch01_freeze_for_finetuning points=4 feedback=passed
import types


def _train_keeping_frozen(self, mode=True):
    nn.Module.train(self, mode)
    for name, m in self.named_modules():
        if name in self._frozen_norms:
            m.training = False
    return self


def freeze_for_finetuning(model, trainable, lr):
    def trains(name):
        return any(name == t or name.startswith(t + ".") for t in trainable)

    params = []
    for name, p in model.named_parameters():
        p.requires_grad_(trains(name))
        if trains(name):
            params.append(p)
    model._frozen_norms = {
        name for name, m in model.named_modules()
        if isinstance(m, nn.modules.batchnorm._BatchNorm) and not trains(name)
    }
    model.train = types.MethodType(_train_keeping_frozen, model)
    model.train(model.training)
    return torch.optim.SGD(params, lr=lr, momentum=0.9)
