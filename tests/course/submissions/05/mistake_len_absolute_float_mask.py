# Corpus: __len__ counting numbers instead of rows; the tolerance in samples per second; a float
# mask.
# %% ch05_memmap_dataset points=0 feedback="number of rows"
class MemmapDataset(Dataset):
    def __init__(self, folder):
        self.folder = Path(folder)
        self.targets = torch.from_numpy(np.load(self.folder / "targets.npy").astype(np.int64))
        self.inputs = None

    def _map(self):
        if self.inputs is None:
            self.inputs = np.load(self.folder / "inputs.npy", mmap_mode="r")
        return self.inputs

    def __len__(self):
        return self._map().size

    def __getitem__(self, i):
        return torch.tensor(self._map()[i], dtype=torch.float32), self.targets[i]

    def __getstate__(self):
        return {"folder": self.folder, "targets": self.targets, "inputs": None}
# %% ch05_choose_num_workers points=0 feedback="fewest workers among them win"
def choose_num_workers(table, batch_size, step_samples_per_s, cores, tolerance=0.1):
    run = {}
    for row in table:
        w, s = row["num_workers"], row["samples_per_s"]
        if row["batch_size"] == batch_size and w < cores and not math.isnan(s):
            run[w] = 1 / (1 / s + 1 / step_samples_per_s) if w == 0 else min(s, step_samples_per_s)
    if not run:
        raise ValueError("nothing fits")
    best = max(run.values())
    return min(w for w, r in run.items() if r >= best - tolerance)
# %% ch05_pad_collate points=0 feedback="mask must be a bool tensor"
def pad_collate(batch, pad_value=0):
    seqs = [s for s, _ in batch]
    padded = nn.utils.rnn.pad_sequence(seqs, batch_first=True, padding_value=pad_value)
    mask = torch.zeros(padded.shape[:2])
    for b, s in enumerate(seqs):
        mask[b, : len(s)] = 1.0
    return (padded, mask), torch.tensor([int(t) for _, t in batch])
