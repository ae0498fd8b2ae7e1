# Corpus: other correct styles: SGD with momentum over a hand-made permutation and a cosine
# schedule; a resume that needs no saved random state because every epoch seeds its own order
# and dropout from the epoch number; an export of a deep copy, so the model's modes are untouched.
# %% ch09_train_classifier points=4 feedback=passed
import copy


def train_classifier(model, train_ds):
    images = torch.stack([train_ds[i][0] for i in range(len(train_ds))])
    labels = torch.stack([torch.as_tensor(train_ds[i][1]) for i in range(len(train_ds))])
    epochs, batch = 30, 24
    steps = epochs * ((len(images) + batch - 1) // batch)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=steps)
    model.train()
    for _ in range(epochs):
        order = torch.randperm(len(images))
        for start in range(0, len(images), batch):
            idx = order[start : start + batch]
            loss = nn.functional.cross_entropy(model(images[idx]), labels[idx])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
    return model.eval()
# %% ch09_train_resumable points=4 feedback=passed
def train_resumable(model, optimizer, train_ds, *, num_epochs, checkpoint_path):
    path = Path(checkpoint_path)
    done = 0
    if path.is_file():
        state = torch.load(path, map_location="cpu", weights_only=True)
        model.load_state_dict(state["model_state"])
        optimizer.load_state_dict(state["optimizer_state"])
        done = int(state["epoch"])
    ran = 0
    for epoch in range(done, num_epochs):
        # The epoch number decides the batch order and the dropout masks: nothing random has to
        # be carried over, and a resumed epoch k draws what an uninterrupted epoch k draws.
        torch.manual_seed(10_000 + epoch)
        order = torch.randperm(len(train_ds))
        model.train()
        for start in range(0, len(train_ds), 16):
            batch = [train_ds[int(i)] for i in order[start : start + 16]]
            inputs = torch.stack([b[0] for b in batch])
            targets = torch.stack([torch.as_tensor(b[1]) for b in batch])
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(inputs), targets).backward()
            optimizer.step()
        ran += 1
        tmp = path.with_name(path.name + ".tmp")
        torch.save({"model_state": model.state_dict(), "optimizer_state": optimizer.state_dict(),
                    "epoch": epoch + 1}, tmp)
        tmp.replace(path)  # atomic: a crash mid-save keeps the previous checkpoint
    return ran
# %% ch09_export_classifier points=3 feedback=passed
import copy


def export_classifier(model, example_inputs, path):
    frozen = copy.deepcopy(model).eval()  # the caller's model keeps its modes
    program = torch.onnx.export(
        frozen,
        (example_inputs.clone(),),
        input_names=["images"],
        output_names=["logits"],
        dynamic_shapes=({0: torch.export.Dim("N", min=1, max=4096)},),
        dynamo=True,
        verbose=False,
    )
    program.save(path)
