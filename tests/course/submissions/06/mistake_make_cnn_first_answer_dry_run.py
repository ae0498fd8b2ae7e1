# Corpus: the natural first answer after section 1: in_features from a dry run of zeros through the
# feature layers under torch.no_grad(), as section 1 shows it. It passes the visible checks, but the
# dry run ran in train mode, so batch norm counted it and moved its running statistics.
# %% ch06_make_cnn points=0 feedback="running statistics"
def make_cnn(image_size, in_channels=1, num_classes=10):
    model = SmallCNN(in_channels, num_classes)
    dummy = torch.zeros(1, in_channels, image_size[0], image_size[1])
    try:
        with torch.no_grad():
            flat = model.features(dummy).flatten(1).shape[1]
    except RuntimeError as err:
        raise ValueError(f"images of size {image_size} are too small for this network") from err
    model.classifier[1] = nn.Linear(flat, num_classes)
    return model
