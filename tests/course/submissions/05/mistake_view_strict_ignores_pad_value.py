# Corpus: samples that are views of the read-only map; a strict bound (>); padding always 0.
# %% ch05_memmap_dataset points=0 feedback="shares its memory"
class MemmapDataset(Dataset):
    def __init__(self, folder):
        self.folder = Path(folder)
        self.targets = torch.tensor(np.load(self.folder / "targets.npy"), dtype=torch.long)
        self.data = None

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, i):
        if self.data is None:
            self.data = np.load(self.folder / "inputs.npy", mmap_mode="r")
        return torch.from_numpy(np.asarray(self.data[i], dtype=np.float32)), self.targets[i]

    def __getstate__(self):
        return {**self.__dict__, "data": None}
# %% ch05_choose_num_workers points=0 feedback="(>=, not >)"
def choose_num_workers(throughput, tolerance=0.1):
    if not 0 <= tolerance < 1:
        raise ValueError("tolerance")
    measured = {w: s for w, s in throughput.items() if not math.isnan(s)}
    if not measured:
        raise ValueError("empty")
    best = max(measured.values())
    return min(w for w, s in measured.items() if s > (1 - tolerance) * best or s == best)
# %% ch05_pad_collate points=0 feedback="pad_value"
def pad_collate(batch, pad_value=0):
    seqs = [s for s, _ in batch]
    padded = nn.utils.rnn.pad_sequence(seqs, batch_first=True)  # pad_value forgotten
    lengths = torch.tensor([len(s) for s in seqs])
    mask = torch.arange(padded.shape[1]) < lengths[:, None]
    return (padded, mask), torch.tensor([int(t) for _, t in batch])
