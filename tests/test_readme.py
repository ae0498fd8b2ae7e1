"""The README's "Your own project" recipes run as they are, each in a fresh process."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def recipes() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("### Your own project\n", 1)[1].split("\n### ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)


def test_the_section_has_the_four_recipes():
    blocks = recipes()
    assert len(blocks) == 4
    assert "EarlyStopping" in blocks[0] and "batch_fn" in blocks[1] and "F1Score" in blocks[2]
    assert "dynamic_shapes" in blocks[3] and "loader=val_loader" in blocks[3]


def run(code: str, cwd: Path) -> subprocess.CompletedProcess:
    # this checkout's companion, not whichever one the interpreter has installed
    path = os.pathsep.join(filter(None, [str(README.parent), os.environ.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "PYTHONPATH": path})  # fmt: skip


def test_callbacks_recipe_stops_early_keeps_the_best_and_resumes_to_the_same_stop(tmp_path):
    first = run(recipes()[0], tmp_path)
    assert first.returncode == 0, first.stderr
    stop = re.search(r"stopped after epoch (\d+); best val_loss at epoch (\d+)", first.stdout)
    assert stop and int(stop[1]) == int(stop[2]) + 2 and int(stop[1]) < 30  # patience 2
    assert (tmp_path / "runs/digits/best.pt").exists()
    assert (tmp_path / "runs/digits/curves.png").exists()
    again = run(recipes()[0], tmp_path)  # resume=True: the run had stopped, nothing more
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout


def test_custom_batches_recipe_learns_the_tags(tmp_path):
    done = run(recipes()[1], tmp_path)
    assert done.returncode == 0, done.stderr
    val_losses = [float(line.split()[2]) for line in done.stdout.splitlines()[1:]]
    assert len(val_losses) == 3 and val_losses[-1] < 0.1 * val_losses[0]


def test_metrics_recipe_matches_scikit_learn(tmp_path):
    pytest.importorskip("sklearn")
    done = run(recipes()[2], tmp_path)
    assert done.returncode == 0, done.stderr
    ours, sklearn_f1, batch_mean, train = map(float, re.findall(r"\d\.\d{6}", done.stdout))
    assert ours == sklearn_f1 and batch_mean != ours and 0 < train <= 1


def test_sequence_recipe_exports_a_dynamic_length_and_verifies_every_batch(tmp_path):
    pytest.importorskip("onnxruntime")
    onnx = pytest.importorskip("onnx")
    done = run(recipes()[3], tmp_path)
    assert done.returncode == 0, done.stderr
    accuracy = float(re.search(r"val accuracy (\d\.\d+)", done.stdout)[1])
    assert accuracy > 0.6  # three classes: well above chance
    assert "PASSED" in done.stdout and "loader: 4 batches, 200 samples" in done.stdout
    assert re.search(r"batch=\d+ time=\d+", done.stdout)  # the length was tried at other sizes
    graph = onnx.load(str(tmp_path / "runs/signals/model.onnx")).graph
    dims = [[d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim] for i in graph.input]
    assert dims == [["batch", "time"], ["batch", "time"]]
    assert "Warning" not in done.stderr, done.stderr
