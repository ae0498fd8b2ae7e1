# Corpus: rows cached in a dict after their first read (an edit on disk is never seen); rows of
# every batch size used for the decision; padding rounded up to a multiple of 8 ("for speed").
# %% ch05_memmap_dataset points=0 feedback="returned the old values"
class MemmapDataset(Dataset):
    def __init__(self, folder):
        self.folder = Path(folder)
        self.targets = torch.from_numpy(np.load(self.folder / "targets.npy").astype(np.int64))
        self.inputs = None
        self.cache = {}

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, index):
        if index not in self.cache:
            if self.inputs is None:
                self.inputs = np.load(self.folder / "inputs.npy", mmap_mode="r")
            self.cache[index] = np.array(self.inputs[index], dtype=np.float32)
        return torch.from_numpy(self.cache[index].copy()), self.targets[index]

    def __getstate__(self):
        return {**self.__dict__, "inputs": None}
# %% ch05_choose_num_workers points=0 feedback="only rows measured at the run's batch size apply"
def choose_num_workers(table, batch_size, step_samples_per_s, cores, tolerance=0.1):
    run = {}
    for row in table:
        w, s = row["num_workers"], row["samples_per_s"]
        if w <= cores - 1 and not math.isnan(s):
            estimate = 1 / (1 / s + 1 / step_samples_per_s) if w == 0 else min(s, step_samples_per_s)
            run[w] = max(run.get(w, 0.0), estimate)
    if not run:
        raise ValueError("nothing fits")
    best = max(run.values())
    return min(w for w, s in run.items() if s >= (1 - tolerance) * best)
# %% ch05_pad_collate points=0 feedback="padded should be"
def pad_collate(batch, pad_value=0):
    seqs = [s for s, _ in batch]
    longest = -(-max(len(s) for s in seqs) // 8) * 8  # a multiple of 8
    padded = torch.full((len(seqs), longest, *seqs[0].shape[1:]), pad_value, dtype=seqs[0].dtype)
    mask = torch.zeros(len(seqs), longest, dtype=torch.bool)
    for i, s in enumerate(seqs):
        padded[i, : len(s)] = s
        mask[i, : len(s)] = True
    return (padded, mask), torch.tensor([int(t) for _, t in batch])
