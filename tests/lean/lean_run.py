"""Run inside the lean environment (tests/lean/test_lean_install.py): companion with its core only.

Trains with ``fit``, resumes from a checkpoint exactly, runs ``smoke_test`` and the doctor, and
checks that each extra's feature fails with one clear error naming the extra and the command.
Prints one line per check; any failure raises.
"""

import importlib.util
import sys
import tempfile
import time

start = time.perf_counter()
import companion  # noqa: E402

IMPORT_S = time.perf_counter() - start

import torch  # noqa: E402
from torch import nn  # noqa: E402

from companion._extras import MissingExtraError  # noqa: E402

SITE = sys.argv[1]
assert companion.__file__.startswith(SITE), f"companion imported from {companion.__file__}"
absent = [
    "onnx",
    "onnxruntime",
    "onnxscript",
    "torchvision",
    "matplotlib",
    "ipywidgets",
    "sklearn",
    "IPython",
    "nbgrader",
    "jupyterlab",
    "nbclient",
    "pytest",
]
present = [name for name in absent if importlib.util.find_spec(name) is not None]
assert not present, f"the lean environment holds {present}"
print(f"ok core only: torch {torch.__version__}; import companion {IMPORT_S:.2f} s")


def make():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
    return model, torch.optim.AdamW(model.parameters(), lr=3e-3)


train_ds, val_ds = companion.digits(seed=0)
loss_fn = nn.CrossEntropyLoss()


def loaders():
    train = companion.InMemoryLoader(*train_ds.tensors, batch_size=64, seed=1)
    val = companion.InMemoryLoader(*val_ds.tensors, batch_size=256, shuffle=False)
    return train, val


with tempfile.TemporaryDirectory() as folder:
    model, opt = make()
    train, val = loaders()
    full = companion.fit(model, train, opt, loss_fn, num_epochs=3, val_loader=val, progress=False)
    reference = {k: v.clone() for k, v in model.state_dict().items()}
    assert full.records[-1]["val_accuracy"] > 0.8, full.records[-1]

    model, opt = make()
    train, val = loaders()
    companion.fit(
        model,
        train,
        opt,
        loss_fn,
        num_epochs=1,
        val_loader=val,
        checkpoint_dir=folder,
        progress=False,
    )
    model, opt = make()
    train, val = loaders()
    torch.manual_seed(999)  # a resumed run must not depend on the seed at the restart
    resumed = companion.fit(
        model,
        train,
        opt,
        loss_fn,
        num_epochs=3,
        val_loader=val,
        checkpoint_dir=folder,
        resume=True,
        progress=False,
    )
    assert all(torch.equal(reference[k], v) for k, v in model.state_dict().items())
    assert [r["train_loss"] for r in resumed.records] == [r["train_loss"] for r in full.records]
print(f"ok fit: val accuracy {full.records[-1]['val_accuracy']:.3f}; resumed run bit-exact")

model, opt = make()
report = companion.smoke_test(model, train_ds, opt, loss_fn).raise_if_failed()
print("ok smoke_test passed")

doctor = companion.doctor(verbose=False)
assert doctor.ok, doctor
print("ok doctor")

model, _ = make()
example = torch.randn(2, 1, 8, 8)
features = {
    "onnx": [
        lambda: companion.export_onnx(model, example, "m.onnx"),
        lambda: companion.verify_onnx("m.onnx", model, example),
        lambda: companion.quantize_onnx("m.onnx", "q.onnx", [(example, torch.zeros(2).long())]),
        lambda: companion.benchmark_inference(model, "m.onnx", example),
    ],
    "plots": [lambda: full.plot(), lambda: companion.draw_graph(model(example).sum())],
    "vision": [lambda: companion.fashion_mnist("data"), lambda: companion.cifar10("data")],
}
for extra, calls in features.items():
    for call in calls:
        try:
            call()
        except MissingExtraError as exc:
            text = str(exc)
            assert f"'{extra}' extra" in text, text
            assert f"pip install 'pytorch-in-practice[{extra}]'" in text, text
        else:
            raise AssertionError(f"a feature of the '{extra}' extra ran without it")
    print(f"ok the '{extra}' extra's {len(calls)} features each say how to install it")
