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
# %% ch05_choose_num_workers points=0 feedback="the rule gives 1"
def choose_num_workers(throughput, tolerance=0.1):
    if not 0 <= tolerance < 1:
        raise ValueError("tolerance")
    measured = {w: s for w, s in throughput.items() if not math.isnan(s)}
    if not measured:
        raise ValueError("empty")
    best = max(measured.values())
    return min(w for w, s in measured.items() if best - s <= tolerance)
# %% ch05_pad_collate points=0 feedback="mask must be a bool tensor"
def pad_collate(batch, pad_value=0):
    seqs = [s for s, _ in batch]
    padded = nn.utils.rnn.pad_sequence(seqs, batch_first=True, padding_value=pad_value)
    mask = torch.zeros(padded.shape[:2])
    for b, s in enumerate(seqs):
        mask[b, : len(s)] = 1.0
    return (padded, mask), torch.tensor([int(t) for _, t in batch])
