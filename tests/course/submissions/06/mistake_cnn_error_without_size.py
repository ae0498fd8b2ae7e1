# Corpus: the right ValueError for too-small images, but its message does not say which size.
# %% ch06_make_cnn points=0 feedback="should name the size it received"
def make_cnn(image_size, in_channels=1, num_classes=10):
    model = SmallCNN(in_channels, num_classes)
    try:
        with torch.no_grad():
            flat = model.features(torch.zeros(1, in_channels, *image_size)).flatten(1).shape[1]
    except RuntimeError:
        raise ValueError("the images are too small for this network") from None
    model.classifier[1] = nn.Linear(flat, num_classes)
    return model
