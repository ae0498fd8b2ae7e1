# Corpus: a lazy layer materialized by a dry run under torch.no_grad(), in train mode, as section
# 1 shows it: no_grad turns autograd off, not batch norm's updates, so the running statistics move.
# %% ch06_make_cnn points=0 feedback="running statistics"
def make_cnn(image_size, in_channels=1, num_classes=10):
    model = SmallCNN(in_channels, num_classes)
    model.classifier[1] = nn.LazyLinear(num_classes)
    try:
        with torch.no_grad():
            model(torch.zeros(2, in_channels, *image_size))
    except RuntimeError as err:
        raise ValueError(f"{image_size} is too small for SmallCNN") from err
    return model
