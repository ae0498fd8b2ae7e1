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
def choose_num_workers(table, batch_size, step_samples_per_s, cores, tolerance=0.1):
    run = {}
    for row in table:
        w, s = row["num_workers"], row["samples_per_s"]
        if row["batch_size"] == batch_size and w <= cores - 1 and not math.isnan(s):
            run[w] = 1 / (1 / s + 1 / step_samples_per_s) if w == 0 else min(s, step_samples_per_s)
    if not run:
        raise ValueError("nothing fits")
    best = max(run.values())
    return min([w for w, s in run.items() if s > (1 - tolerance) * best] or [max(run, key=run.get)])
# %% ch05_pad_collate points=0 feedback="pad_value"
def pad_collate(batch, pad_value=0):
    seqs = [s for s, _ in batch]
    padded = nn.utils.rnn.pad_sequence(seqs, batch_first=True)  # pad_value forgotten
    lengths = torch.tensor([len(s) for s in seqs])
    mask = torch.arange(padded.shape[1]) < lengths[:, None]
    return (padded, mask), torch.tensor([int(t) for _, t in batch])
