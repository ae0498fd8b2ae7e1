# Corpus: 60 epochs "to be safe": more than the 30 passes over the data the contract allows.
# %% ch09_train_classifier points=0 feedback="more than the 30 allowed"
def train_classifier(model, train_ds):
    loader = DataLoader(train_ds, batch_size=64, shuffle=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    for _ in range(60):
        for inputs, targets in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(inputs), targets).backward()
            optimizer.step()
    return model.eval()
