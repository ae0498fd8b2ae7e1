# Corpus: a recipe that stops after one epoch at a low learning rate: it runs, and learns too little.
# %% ch09_train_classifier points=0 feedback="training stage"
def train_classifier(model, train_ds):
    loader = DataLoader(train_ds, batch_size=32, shuffle=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    model.train()
    for inputs, targets in loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(inputs), targets).backward()
        optimizer.step()
    return model.eval()
