# Corpus: a good recipe whose model comes back in train mode (dropout on, batch statistics used).
# %% ch09_train_classifier points=0 feedback="returned in train mode"
def train_classifier(model, train_ds):
    loader = DataLoader(train_ds, batch_size=32, shuffle=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    model.train()
    for _ in range(12):
        for inputs, targets in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(inputs), targets).backward()
            optimizer.step()
    return model
