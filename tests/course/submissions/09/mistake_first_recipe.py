# Corpus: a learner's first recipe (Adam at 2e-3, batches of 32, 12 epochs, no schedule): it runs
# and learns, but stays near 70 % on held-out shapes, where 80 % is required (the notebook's
# measurement of the graded task shows the same before grading).
# %% ch09_train_classifier points=0 feedback="below the 80% required"
def train_classifier(model, train_ds):
    loader = DataLoader(train_ds, batch_size=32, shuffle=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    model.train()
    for epoch in range(12):
        for inputs, targets in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(inputs), targets).backward()
            optimizer.step()
    return model.eval()
