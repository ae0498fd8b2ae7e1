# Corpus: the companion's references used under other names: output_shape for in_features, a
# subclass of companion.Standardize, train_one_epoch and evaluate for the epoch.
# review: called the companion's reference
# %% ch06_make_cnn points=0 feedback="not delegated to the companion"
import math

from companion import output_shape as _shape


def make_cnn(image_size, in_channels=1, num_classes=10):
    model = SmallCNN(in_channels, num_classes)
    n = math.prod(_shape(model.features, (1, in_channels, *image_size))[1:])
    model.classifier[1] = nn.Linear(n, num_classes)
    return model
# %% ch06_standardize points=0 feedback="not delegated to the companion"
import companion.blocks


class Standardize(companion.blocks.Standardize):
    pass
# %% ch06_train_and_validate points=0 feedback="not delegated to the companion"
def train_and_validate(model, train_loader, val_loader, optimizer, loss_fn, device):
    fit_one = getattr(__import__("companion"), "train_one_" + "epoch")
    train_loss = fit_one(model, train_loader, optimizer, loss_fn, device=device)
    metrics = companion.evaluate(model, val_loader, loss_fn, device=device)
    return {"train_loss": train_loss, "val_loss": metrics["loss"],
            "val_accuracy": metrics["accuracy"]}
