# Corpus: the dry run in train mode, then the feature layers' state put back from a snapshot taken
# before it (the snapshot holds batch norm's running statistics and batch count).
# %% ch06_make_cnn points=4 feedback=passed
def make_cnn(image_size, in_channels=1, num_classes=10):
    model = SmallCNN(in_channels, num_classes)
    before = copy.deepcopy(model.features.state_dict())
    height, width = image_size
    try:
        with torch.no_grad():
            out = model.features(torch.randn(2, in_channels, height, width))
    except RuntimeError:
        raise ValueError(f"image size {height}x{width} is too small for SmallCNN") from None
    finally:
        model.features.load_state_dict(before)
    model.classifier[1] = nn.Linear(out[0].numel(), num_classes)
    return model
