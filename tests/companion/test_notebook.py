"""companion.notebook: the chapters' setup call and yours_or_reference."""

from __future__ import annotations

import os

import pytest
import torch

import companion
from companion.notebook import setup_notebook, usable_cores, yours_or_reference


@pytest.fixture
def restore_threads():
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def test_setup_seeds_picks_the_device_and_sets_threads(monkeypatch, restore_threads):
    monkeypatch.delenv("COURSE_THREADS", raising=False)
    monkeypatch.setenv("COURSE_FAST", "1")
    setup = setup_notebook(3, device="cpu")
    first = torch.rand(2)
    assert setup.threads == 1 == torch.get_num_threads()
    assert setup.fast and setup.device == torch.device("cpu") and setup.seed == 3
    setup_notebook(3, device="cpu")
    assert torch.equal(first, torch.rand(2)), "the seed was not applied"
    assert "CPU threads: 1" in str(setup) and "fast mode: True" in str(setup)


def test_course_threads_overrides_auto(monkeypatch, restore_threads):
    monkeypatch.setenv("COURSE_THREADS", "2")
    monkeypatch.delenv("COURSE_FAST", raising=False)
    setup = setup_notebook(0, device="cpu")
    assert setup.threads == 2 == torch.get_num_threads() and not setup.fast
    assert setup_notebook(0, device="cpu", threads=1).threads == 1


@pytest.mark.parametrize(
    ("env", "threads", "error", "words"),
    [
        ("", 0, ValueError, "at least 1"),
        ("", "4", TypeError, "positive int or 'auto'"),
        ("", True, TypeError, "positive int or 'auto'"),
        ("many", "auto", ValueError, "COURSE_THREADS must be a positive integer, got 'many'"),
    ],
)
def test_bad_threads_are_named(monkeypatch, env, threads, error, words):
    monkeypatch.setenv("COURSE_THREADS", env)
    with pytest.raises(error, match=words):
        setup_notebook(0, device="cpu", threads=threads)


def test_yours_or_reference_falls_back_only_for_a_stub(capsys):
    def stub(x, *, scale=1):
        raise NotImplementedError()

    def written(x, *, scale=1):
        return x * scale + 1

    reference = lambda x, *, scale=1: x * scale  # noqa: E731
    use = yours_or_reference(stub, reference)
    assert use(2, scale=3) == 6 and use(1) == 1
    out = capsys.readouterr().out
    assert out.count("stub is not written yet") == 1, "one notice, not one per call"
    assert yours_or_reference(written, reference)(2, scale=3) == 7
    assert capsys.readouterr().out == ""
    assert use.__name__ == "stub"


def test_yours_or_reference_keeps_other_errors_and_works_for_classes():
    def broken(x):
        raise ValueError("my bug")

    with pytest.raises(ValueError, match="my bug"):
        yours_or_reference(broken, abs)(1)

    class Stub(torch.nn.Module):
        def __init__(self, channels):
            super().__init__()
            raise NotImplementedError()

    block = yours_or_reference(Stub, companion.ResidualBlock)(4)
    assert isinstance(block, companion.ResidualBlock)
    with pytest.raises(TypeError, match="both must be callable"):
        yours_or_reference(None, abs)


@pytest.mark.requires_torchvision
def test_with_features_adds_a_head_and_returns_an_inner_layer_once():
    from torchvision.models import resnet18

    torch.manual_seed(0)
    model = resnet18(weights=None)
    conv_before = model.conv1.weight.clone()
    tapped = companion.WithFeatures(model, num_classes=3)
    calls = []
    model.layer1.register_forward_hook(lambda *args: calls.append(1))
    x = torch.randn(2, 3, 64, 64)
    for _ in range(3):
        logits, features = tapped(x)
    assert logits.shape == (2, 3) and features.shape == (2, 256, 4, 4)
    assert len(calls) == 3, "one pass through the model per forward"
    assert len(model.layer3._forward_hooks) == 1, "the hook is registered once, not per call"
    assert torch.equal(model.conv1.weight, conv_before) and model.fc.out_features == 3
    torch.testing.assert_close(
        features,
        model.layer3(
            model.layer2(model.layer1(model.maxpool(model.relu(model.bn1(model.conv1(x))))))
        ),
    )


@pytest.mark.requires_torchvision
def test_with_features_names_what_is_wrong():
    from torchvision.models import resnet18

    with pytest.raises(ValueError, match="layer 'layer9' is not in the model"):
        companion.WithFeatures(resnet18(weights=None), 2, layer="layer9")
    with pytest.raises(TypeError, match="head 'layer1' must be an nn.Linear"):
        companion.WithFeatures(resnet18(weights=None), 2, head="layer1")
    with pytest.raises(ValueError, match="num_classes must be a positive int"):
        companion.WithFeatures(resnet18(weights=None), 0)


def test_cores_follow_the_affinity_mask_not_the_machine(monkeypatch, restore_threads):
    # a container or a grading worker may allow fewer cores than the machine has
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {5}, raising=False)
    assert usable_cores() == 1
    setup = setup_notebook(0, device="cpu")
    assert setup.cores == 1 and "CPU threads: 1 of 1 cores" in str(setup)
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)  # macOS, Windows
    assert usable_cores() == 64


def _installed_cjk_font() -> bool:
    import shutil
    import subprocess

    if not shutil.which("fc-list"):
        return False
    return bool(subprocess.run(["fc-list", ":lang=zh"], capture_output=True, text=True).stdout)


@pytest.mark.skipif(not _installed_cjk_font(), reason="no CJK font installed (fonts-noto-cjk)")
def test_chinese_labels_render_without_missing_glyphs_after_the_fallback(tmp_path):
    """Run in a fresh process: matplotlib's font state must start untouched."""
    import subprocess
    import sys

    script = f"""
import warnings
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import companion

def draw():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig, ax = plt.subplots(figsize=(3, 2))
        ax.set_title("损失 loss 随轮次下降")
        ax.plot([0, 1], [1, 0], label="训练集 train")
        ax.legend()
        fig.savefig({str(tmp_path / "x.png")!r})
        plt.close(fig)
    return [str(w.message) for w in caught if "Glyph" in str(w.message)]

before = draw()
setup = companion.setup_notebook(0, device="cpu", threads=1)
family = list(matplotlib.rcParams["font.family"])
after = draw()
again = companion.cjk_font_fallback()
print(bool(before), after, family[0], family[-1] in companion.notebook.CJK_FONTS, again == family[-1],
      list(matplotlib.rcParams["font.family"]) == family)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    missing_before, after, first, cjk_last, same, unchanged = out.stdout.split(" ", 5)
    assert missing_before == "True"  # without the fallback, the glyphs are missing
    assert after == "[]", after  # with it, none
    assert first == "sans-serif" and cjk_last == "True"  # Latin text keeps the default font
    assert same == "True" and unchanged.strip() == "True"  # a second call changes nothing
