# Corpus: the dry run under torch.inference_mode() on two random images, in train mode: inference
# mode switches autograd off, not batch norm's updates of its running statistics.
# %% ch06_make_cnn points=0 feedback="torch.inference_mode()"
def make_cnn(image_size, in_channels=1, num_classes=10):
    model = SmallCNN(in_channels, num_classes)
    height, width = image_size
    try:
        with torch.inference_mode():
            n = model.features(torch.randn(2, in_channels, height, width))[0].numel()
    except RuntimeError as err:
        raise ValueError(f"{height}x{width} images are too small for SmallCNN") from err
    model.classifier[1] = nn.Linear(n, num_classes)
    return model
