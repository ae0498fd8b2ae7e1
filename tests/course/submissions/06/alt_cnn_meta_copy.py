# Corpus: the dry run on the meta device, through a copy of the feature layers: shapes only, no
# arithmetic and nothing computed, and the returned model never ran anything.
# %% ch06_make_cnn points=4 feedback=passed
def make_cnn(image_size, in_channels=1, num_classes=10):
    model = SmallCNN(in_channels, num_classes)
    shadow = copy.deepcopy(model.features).to("meta")
    try:
        out = shadow(torch.empty(1, in_channels, *image_size, device="meta"))
    except RuntimeError as err:
        raise ValueError(f"SmallCNN's features cannot take {tuple(image_size)} images") from err
    model.classifier[1] = nn.Linear(out.shape[1:].numel(), num_classes)
    return model
