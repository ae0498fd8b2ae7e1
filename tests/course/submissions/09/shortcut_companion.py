# Corpus: the companion's references under other names: smoke_test for the check, fit for the
# recipe, save_checkpoint and load_checkpoint for the resume, export_onnx for the export.
# review: called the companion's reference
# %% ch09_smoke_check points=0 feedback="not delegated to the companion"
def smoke_check(model, train_ds, optimizer, loss_fn):
    report = companion.smoke_test(model, train_ds, optimizer=optimizer, loss_fn=loss_fn)
    names = {"backward": "gradient", "step": "step", "overfit": "fit"}
    return [names[s.stage] for s in report.stages if s.status == "FAIL" and s.stage in names]
# %% ch09_train_classifier points=0 feedback="not delegated to the companion"
from companion import fit as _train


def train_classifier(model, train_ds):
    _train(model, DataLoader(train_ds, batch_size=32, shuffle=True),
           torch.optim.Adam(model.parameters(), lr=2e-3), nn.CrossEntropyLoss(), num_epochs=12,
           device="cpu", progress=False)
    return model.eval()
# %% ch09_train_resumable points=0 feedback="not delegated to the companion"
import companion.checkpoint as _ckpt


def train_resumable(model, optimizer, train_ds, *, num_epochs, checkpoint_path):
    start = 0
    if Path(checkpoint_path).exists():
        start = _ckpt.load_checkpoint(checkpoint_path, model=model, optimizer=optimizer)["epoch"]
    loader = DataLoader(train_ds, batch_size=16, shuffle=True)
    for epoch in range(start, num_epochs):
        model.train()
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
        _ckpt.save_checkpoint(checkpoint_path, model=model, optimizer=optimizer, epoch=epoch + 1)
    return max(0, num_epochs - start)
# %% ch09_export_classifier points=0 feedback="not delegated to the companion"
def export_classifier(model, example_inputs, path):
    getattr(companion, "export_" + "onnx")(model, example_inputs, path, input_names=["images"],
                                            output_names=["logits"])
