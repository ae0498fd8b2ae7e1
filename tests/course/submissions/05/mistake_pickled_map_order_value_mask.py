# Corpus: the map opened in __init__ and pickled with the dataset; the loader's own speed taken
# for the run's (the step ignored); the mask read from the values.
# %% ch05_memmap_dataset points=0 feedback="carries the inputs"
class MemmapDataset(Dataset):
    def __init__(self, folder):
        self.inputs = np.load(Path(folder) / "inputs.npy", mmap_mode="r")
        self.targets = torch.from_numpy(np.load(Path(folder) / "targets.npy").astype(np.int64))

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, i):
        return torch.from_numpy(np.array(self.inputs[i], dtype=np.float32)), self.targets[i]
# %% ch05_choose_num_workers points=0 feedback="not how fast the loader is alone"
def choose_num_workers(table, batch_size, step_samples_per_s, cores, tolerance=0.1):
    # the loader's own speed decides: the step is the model's business
    speeds = {r["num_workers"]: r["samples_per_s"] for r in table
              if r["batch_size"] == batch_size and r["num_workers"] < cores
              and not math.isnan(r["samples_per_s"])}
    if not speeds:
        raise ValueError("nothing fits")
    best = max(speeds.values())
    return min(w for w, s in speeds.items() if s >= (1 - tolerance) * best)
# %% ch05_pad_collate points=0 feedback="build the mask from the lengths"
def pad_collate(batch, pad_value=0):
    seqs = [s for s, _ in batch]
    padded = nn.utils.rnn.pad_sequence(seqs, batch_first=True, padding_value=pad_value)
    mask = padded != pad_value
    if mask.dim() > 2:
        mask = mask.any(dim=-1)
    return (padded, mask), torch.tensor([int(t) for _, t in batch])
