"""Tests for companion/memmap.py: write_memmap_dataset and MemmapDataset."""

import pickle
import tracemalloc

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader

from companion.memmap import INPUTS_FILE, TARGETS_FILE, MemmapDataset, write_memmap_dataset


def _pixels(n=40, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 256, (n, 1, 32, 32), dtype=torch.uint8, generator=g)


def test_write_keeps_dtypes_and_items_come_back_as_float32_and_int64(tmp_path):
    pixels, labels = _pixels(), torch.arange(40, dtype=torch.int32) % 3
    folder = write_memmap_dataset(tmp_path / "new" / "data", pixels, labels)
    assert np.load(folder / INPUTS_FILE).dtype == np.uint8  # stored compact, as given
    assert np.load(folder / TARGETS_FILE).dtype == np.int32
    dataset = MemmapDataset(folder)
    assert len(dataset) == 40 and dataset.sample_shape == (1, 32, 32)
    for i in (0, 17, 39, -1):
        x, y = dataset[i]
        assert x.dtype == torch.float32 and torch.equal(x, pixels[i].float())
        assert y.dtype == torch.int64 and y.dim() == 0 and y.item() == labels[i].item()
    assert not list(folder.glob(".*partial"))  # temporary names are renamed away


def test_reads_what_the_file_holds_now_not_a_copy_taken_in_init(tmp_path):
    inputs = np.arange(24, dtype=np.float32).reshape(6, 4)
    folder = write_memmap_dataset(tmp_path, inputs, np.zeros(6, dtype=np.int64))
    dataset = MemmapDataset(folder)
    first, _ = dataset[2]
    on_disk = np.load(folder / INPUTS_FILE, mmap_mode="r+")
    on_disk[2] = -1.0
    on_disk[5] = -5.0
    on_disk.flush()
    assert torch.equal(dataset[5][0], torch.full((4,), -5.0))  # a row never read before
    assert torch.equal(dataset[2][0], torch.full((4,), -1.0))  # and one read before the change
    assert torch.equal(first, torch.arange(8.0, 12.0))  # the earlier sample kept its values


def test_init_and_items_never_load_the_whole_inputs(tmp_path):
    inputs = np.random.default_rng(0).random((256, 256), dtype=np.float32)  # 256 KiB
    folder = write_memmap_dataset(tmp_path, inputs, np.arange(256))
    tracemalloc.start()
    try:
        dataset = MemmapDataset(folder)
        init_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        dataset[100]
        item_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert init_peak < inputs.nbytes / 4 and item_peak < inputs.nbytes / 4


def _mapped_ranges(path):
    """Address ranges where this process maps ``path`` (Linux's /proc/self/maps)."""
    ranges = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            if line.rstrip().endswith(str(path)):
                start, end = line.split()[0].split("-")
                ranges.append((int(start, 16), int(end, 16)))
    return ranges


def test_samples_own_their_memory(tmp_path):
    inputs = np.ones((5, 3), dtype=np.float32)  # float32 on disk: no conversion copy to rely on
    folder = write_memmap_dataset(tmp_path, inputs, np.arange(5))
    dataset = MemmapDataset(folder)
    x, y = dataset[1]
    try:
        ranges = _mapped_ranges((folder / INPUTS_FILE).resolve())
    except OSError:  # no /proc (not Linux): the write below is the only check
        ranges = []
    pointer = x.untyped_storage().data_ptr()
    assert not any(start <= pointer < end for start, end in ranges), "x is a view of the map"
    x.mul_(7)  # a view of the read-only map would crash here
    y.add_(10)
    again_x, again_y = dataset[1]
    assert torch.equal(again_x, torch.ones(3)) and again_y.item() == 1
    assert np.load(folder / INPUTS_FILE)[1].tolist() == [1.0, 1.0, 1.0]


def test_pickles_without_the_inputs_and_the_copy_reads_them(tmp_path):
    folder = write_memmap_dataset(tmp_path, _pixels(200), torch.arange(200))  # 200 KiB
    dataset = MemmapDataset(folder)
    dataset[3]  # the map is open now: it must still not travel
    blob = pickle.dumps(dataset)
    assert len(blob) < 200 * 1024 / 20
    copy = pickle.loads(blob)
    assert torch.equal(copy[199][0], dataset[199][0]) and copy[199][1].item() == 199


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_works_in_worker_processes(tmp_path, context):
    import multiprocessing

    if context not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {context} start method on this platform")
    pixels = _pixels(48)
    dataset = MemmapDataset(write_memmap_dataset(tmp_path, pixels, torch.arange(48)))
    dataset[0]  # opened in the parent first: workers must not depend on that map
    loader = DataLoader(
        dataset, batch_size=8, num_workers=2 if context == "fork" else 1,
        multiprocessing_context=context,
    )  # fmt: skip
    inputs, targets = zip(*loader)
    assert torch.equal(torch.cat(inputs), pixels.float())
    assert torch.equal(torch.cat(targets), torch.arange(48))


@pytest.mark.parametrize(
    "inputs, targets, error, words",
    [
        ([[1.0]], np.zeros(1, dtype=np.int64), TypeError, "inputs must be a torch.Tensor"),
        (np.array(1.0), np.zeros(1, dtype=np.int64), ValueError, "shape (N, ...)"),
        (np.zeros((0, 2)), np.zeros(0, dtype=np.int64), ValueError, "N >= 1"),
        (np.array([["a"]]), np.zeros(1, dtype=np.int64), ValueError, "dtype <U1"),
        (np.zeros((2, 2)), np.zeros(2), ValueError, "dtype float64"),
        (np.zeros((2, 2)), np.zeros((2, 1), dtype=np.int64), ValueError, "shape (2, 1)"),
        (np.zeros((3, 2)), np.zeros(2, dtype=np.int64), ValueError, "3 inputs and 2 targets"),
    ],
)
def test_write_bad_arguments(tmp_path, inputs, targets, error, words):
    with pytest.raises(error, match=words.replace("(", r"\(").replace(")", r"\)")):
        write_memmap_dataset(tmp_path, inputs, targets)


def test_dataset_bad_folders_and_indices(tmp_path):
    with pytest.raises(FileNotFoundError, match="inputs.npy and targets.npy not found"):
        MemmapDataset(tmp_path / "nowhere")
    folder = write_memmap_dataset(tmp_path, np.zeros((3, 2)), np.arange(3))
    np.save(folder / TARGETS_FILE, np.arange(4))
    with pytest.raises(ValueError, match=r"one integer per input, shape \(3,\); got shape \(4,\)"):
        MemmapDataset(folder)
    np.save(folder / TARGETS_FILE, np.arange(3))
    dataset = MemmapDataset(folder)
    with pytest.raises(IndexError, match="index 3 is out of range for a dataset of 3"):
        dataset[3]
    with pytest.raises(TypeError, match="index must be an int, got slice"):
        dataset[0:2]
