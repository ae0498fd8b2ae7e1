# Corpus: the same layers written out again as one flat nn.Sequential: it computes the right
# shapes, but its state_dict keys are not SmallCNN's (features / classifier).
# %% ch06_make_cnn points=0 feedback="the model's layers differ from SmallCNN's"
def make_cnn(image_size, in_channels=1, num_classes=10):
    features = nn.Sequential(
        nn.Conv2d(in_channels, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
    )
    features.eval()
    try:
        with torch.no_grad():
            flat = features(torch.zeros(1, in_channels, *image_size)).numel()
    except RuntimeError as err:
        raise ValueError(f"image_size {image_size} is too small") from err
    features.train()
    return nn.Sequential(*features, nn.Flatten(), nn.Linear(flat, num_classes))
