# Corpus: targets kept in the file's dtype; NaN speeds not skipped (they slip past a `not <`);
# padded made as float32 zeros.
# %% ch05_memmap_dataset points=0 feedback="int64 tensor of shape ()"
class MemmapDataset(Dataset):
    def __init__(self, folder):
        self.path = Path(folder) / "inputs.npy"
        self.targets = torch.from_numpy(np.load(Path(folder) / "targets.npy"))
        self.inputs = None

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, i):
        if self.inputs is None:
            self.inputs = np.load(self.path, mmap_mode="r")
        return torch.tensor(self.inputs[i], dtype=torch.float32), self.targets[i]

    def __getstate__(self):
        state = dict(vars(self))
        state["inputs"] = None
        return state
# %% ch05_choose_num_workers points=0 feedback="NaN"
def choose_num_workers(table, batch_size, step_samples_per_s, cores, tolerance=0.1):
    run = {}
    for row in table:
        w, s = row["num_workers"], row["samples_per_s"]
        if row["batch_size"] == batch_size and w <= cores - 1:
            run[w] = 1 / (1 / s + 1 / step_samples_per_s) if w == 0 else min(s, step_samples_per_s)
    if not run:
        raise ValueError("nothing fits")
    best = max(run.values())
    return min(w for w, s in run.items() if not s < (1 - tolerance) * best)
# %% ch05_pad_collate points=0 feedback="keep the sequences' dtype"
def pad_collate(batch, pad_value=0):
    longest = max(len(s) for s, _ in batch)
    padded = torch.zeros(len(batch), longest, *batch[0][0].shape[1:]) + pad_value
    mask = torch.zeros(len(batch), longest, dtype=torch.bool)
    for b, (s, _) in enumerate(batch):
        padded[b, : len(s)] = s
        mask[b, : len(s)] = True
    return (padded, mask), torch.tensor([int(t) for _, t in batch])
