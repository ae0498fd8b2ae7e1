# Corpus: the folder joined with "/" as if it were always a Path; every worker count up to the
# number of cores allowed (none left for training); torch.full without a dtype (an int pad_value
# turns float sequences into integers).
# %% ch05_memmap_dataset points=0 feedback="unsupported operand"
class MemmapDataset(Dataset):
    def __init__(self, folder):
        self.inputs_path = folder / "inputs.npy"
        self.targets = torch.as_tensor(np.load(folder / "targets.npy"), dtype=torch.int64)
        self.inputs = None

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, index):
        if self.inputs is None:
            self.inputs = np.load(self.inputs_path, mmap_mode="r")
        return torch.tensor(self.inputs[index], dtype=torch.float32), self.targets[index]

    def __getstate__(self):
        return {**self.__dict__, "inputs": None}
# %% ch05_choose_num_workers points=0 feedback="a core of its own"
def choose_num_workers(table, batch_size, step_samples_per_s, cores, tolerance=0.1):
    run = {}
    for row in table:
        w, s = row["num_workers"], row["samples_per_s"]
        if row["batch_size"] == batch_size and w <= cores and not math.isnan(s):
            run[w] = 1 / (1 / s + 1 / step_samples_per_s) if w == 0 else min(s, step_samples_per_s)
    if not run:
        raise ValueError("nothing fits")
    best = max(run.values())
    return min(w for w, s in run.items() if s >= (1 - tolerance) * best)
# %% ch05_pad_collate points=0 feedback="whatever the type of pad_value"
def pad_collate(batch, pad_value=0):
    seqs = [s for s, _ in batch]
    longest = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), longest, *seqs[0].shape[1:]), pad_value)
    mask = torch.zeros(len(seqs), longest, dtype=torch.bool)
    for i, s in enumerate(seqs):
        padded[i, : len(s)] = s
        mask[i, : len(s)] = True
    return (padded, mask), torch.tensor([int(t) for _, t in batch])
