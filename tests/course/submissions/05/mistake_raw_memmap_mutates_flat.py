# Corpus: np.memmap on the .npy file without the header's offset; min(loader, step) for every
# count, 0 workers too (as if loading overlapped the step); a flat (padded, mask, targets) triple.
# %% ch05_memmap_dataset points=0 feedback="starts with a header"
class MemmapDataset(Dataset):
    def __init__(self, folder):
        header = np.load(Path(folder) / "inputs.npy", mmap_mode="r")
        self.spec = (str(Path(folder) / "inputs.npy"), header.dtype, header.shape)
        self.targets = torch.from_numpy(np.load(Path(folder) / "targets.npy").astype(np.int64))

    def __len__(self):
        return self.spec[2][0]

    def __getitem__(self, i):
        path, dtype, shape = self.spec
        rows = np.memmap(path, dtype=dtype, mode="r", shape=shape)  # the header read as data
        return torch.tensor(rows[i], dtype=torch.float32), self.targets[i].clone()
# %% ch05_choose_num_workers points=0 feedback="nothing happens while the step computes"
def choose_num_workers(table, batch_size, step_samples_per_s, cores, tolerance=0.1):
    # the run goes at the pace of the slower side, loader or step
    run = {r["num_workers"]: min(r["samples_per_s"], step_samples_per_s) for r in table
           if r["batch_size"] == batch_size and r["num_workers"] <= cores - 1
           and not math.isnan(r["samples_per_s"])}
    if not run:
        raise ValueError("nothing fits")
    best = max(run.values())
    return min(w for w, s in run.items() if s >= (1 - tolerance) * best)
# %% ch05_pad_collate points=0 feedback="must return ((padded, mask), targets)"
def pad_collate(batch, pad_value=0):
    seqs = [s for s, _ in batch]
    padded = nn.utils.rnn.pad_sequence(seqs, batch_first=True, padding_value=pad_value)
    lengths = torch.tensor([len(s) for s in seqs])
    mask = torch.arange(padded.shape[1]) < lengths[:, None]
    return padded, mask, torch.tensor([int(t) for _, t in batch])
