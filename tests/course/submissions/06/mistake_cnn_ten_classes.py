# Corpus: the new classifier built with SmallCNN's ten outputs, whatever num_classes says.
# %% ch06_make_cnn points=0 feedback="the linear layer gives num_classes"
def make_cnn(image_size, in_channels=1, num_classes=10):
    model = SmallCNN(in_channels, num_classes)
    try:
        with torch.no_grad():
            flat = model.features(torch.zeros(1, in_channels, *image_size)).flatten(1).shape[1]
    except RuntimeError as err:
        raise ValueError(f"images of size {image_size} are too small") from err
    for layer in model.features:  # forget the dummy batch
        if isinstance(layer, nn.BatchNorm2d):
            layer.reset_running_stats()
    model.classifier[1] = nn.Linear(flat, 10)
    return model
