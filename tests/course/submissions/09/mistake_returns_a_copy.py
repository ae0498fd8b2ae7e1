# Corpus: trains a copy of the model and returns the copy: the model it was given stays untrained.
# %% ch09_train_classifier points=0 feedback="must return the model it was given"
def train_classifier(model, train_ds):
    trained = copy.deepcopy(model)
    loader = DataLoader(train_ds, batch_size=16, shuffle=True)
    optimizer = torch.optim.Adam(trained.parameters(), lr=3e-3)
    trained.train()
    for epoch in range(25):
        for inputs, targets in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(trained(inputs), targets).backward()
            optimizer.step()
    return trained.eval()
