# Corpus: the second try after the running-statistics feedback: the dry run in eval mode, so batch
# norm's statistics stay as built, but the model is handed back in eval mode.
# %% ch06_make_cnn points=0 feedback="eval mode"
def make_cnn(image_size, in_channels=1, num_classes=10):
    model = SmallCNN(in_channels, num_classes).eval()
    try:
        with torch.no_grad():
            flat = model.features(torch.zeros(1, in_channels, *image_size)).flatten(1).shape[1]
    except RuntimeError as err:
        raise ValueError(f"images of size {image_size} are too small for this network") from err
    model.classifier[1] = nn.Linear(flat, num_classes)
    return model
