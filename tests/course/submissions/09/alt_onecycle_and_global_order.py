# Corpus: other correct styles: AdamW with a one-cycle schedule; a resume whose DataLoader shuffles
# with the global generator, saved and restored with the checkpoint (no generator of its own);
# torch.export first, then the ExportedProgram converted, with every module's mode put back.
# %% ch09_train_classifier points=4 feedback=passed
def train_classifier(model, train_ds):
    loader = DataLoader(train_ds, batch_size=32, shuffle=True, drop_last=False)
    epochs = 30
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=1e-3)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1e-2,
                                                   total_steps=epochs * len(loader))
    for _ in range(epochs):
        model.train()
        for x, y in loader:
            optimizer.zero_grad()
            nn.CrossEntropyLoss()(model(x), y).backward()
            optimizer.step()
            schedule.step()
    model.eval()
    return model
# %% ch09_train_resumable points=4 feedback=passed
def train_resumable(model, optimizer, train_ds, *, num_epochs, checkpoint_path):
    first = 0
    try:
        ckpt = torch.load(checkpoint_path, weights_only=True)
    except FileNotFoundError:
        ckpt = None
    if ckpt is not None:
        model.load_state_dict(ckpt["weights"])
        optimizer.load_state_dict(ckpt["opt"])
        torch.random.set_rng_state(ckpt["torch_rng"])
        first = ckpt["next_epoch"]
    loader = DataLoader(train_ds, batch_size=16, shuffle=True)  # order from the global generator
    for epoch in range(first, num_epochs):
        model.train()
        for x, y in loader:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
        torch.save({"weights": model.state_dict(), "opt": optimizer.state_dict(),
                    "torch_rng": torch.random.get_rng_state(), "next_epoch": epoch + 1},
                   checkpoint_path)
    return len(range(first, num_epochs))
# %% ch09_export_classifier points=3 feedback=passed
class _EvalMode:
    """Every submodule in eval mode inside the block, each back in its own mode after it."""

    def __init__(self, model):
        self.model = model

    def __enter__(self):
        self.modes = [(m, m.training) for m in self.model.modules()]
        self.model.eval()

    def __exit__(self, *exc):
        for m, mode in self.modes:
            m.training = mode


def export_classifier(model, example_inputs, path):
    with _EvalMode(model):
        exported = torch.export.export(
            model, (example_inputs,), dynamic_shapes=({0: torch.export.Dim("batch")},)
        )
        onnx_program = torch.onnx.export(exported, input_names=["images"],
                                         output_names=["logits"], verbose=False)
    onnx_program.save(str(path))
