# Corpus: the right ValueError for too-small images, but its message does not say which size.
# %% ch06_make_cnn points=0 feedback="should name the size it received"
def make_cnn(image_size, in_channels=1, num_classes=10):
    model = SmallCNN(in_channels, num_classes)
    probe = copy.deepcopy(model.features).eval()  # the dry run on a copy leaves the model as built
    try:
        with torch.no_grad():
            flat = probe(torch.zeros(1, in_channels, *image_size)).flatten(1).shape[1]
    except RuntimeError:
        raise ValueError("the images are too small for this network") from None
    model.classifier[1] = nn.Linear(flat, num_classes)
    return model
