# Corpus: a learner's correct answers, written from the docstrings (the base of every other file).
# %% ch05_memmap_dataset points=4 feedback=passed
class MemmapDataset(Dataset):
    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = Path(folder)
        labels = np.load(self.folder / "targets.npy")
        self.labels = torch.as_tensor(labels, dtype=torch.int64)
        self.inputs = None  # opened on first use, in whichever process reads

    def __len__(self) -> int:
        return self.labels.shape[0]

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        if self.inputs is None:
            self.inputs = np.load(self.folder / "inputs.npy", mmap_mode="r")
        row = np.array(self.inputs[index], dtype=np.float32)
        return torch.from_numpy(row), self.labels[index]

    def __getstate__(self):
        state = self.__dict__.copy()
        state["inputs"] = None
        return state
# %% ch05_choose_num_workers points=3 feedback=passed
def choose_num_workers(table, batch_size, step_samples_per_s, cores, tolerance=0.1):
    run_speed = {}
    for row in table:
        w, speed = row["num_workers"], row["samples_per_s"]
        if row["batch_size"] != batch_size or w >= cores or math.isnan(speed):
            continue
        if w == 0:
            # one process does both jobs: seconds per sample add up
            run_speed[w] = 1.0 / (1.0 / speed + 1.0 / step_samples_per_s)
        else:
            # workers load while the step computes: the slower one is the limit
            run_speed[w] = min(speed, step_samples_per_s)
    if not run_speed:
        raise ValueError("no row of the table fits this run")
    best = max(run_speed.values())
    return min(w for w in run_speed if run_speed[w] >= (1 - tolerance) * best)
# %% ch05_pad_collate points=3 feedback=passed
def pad_collate(batch, pad_value=0):
    seqs = []
    for s, _ in batch:
        if isinstance(s, np.ndarray):
            s = torch.from_numpy(np.ascontiguousarray(s))  # a reversed view needs a copy
        seqs.append(s if s.is_floating_point() else s.to(torch.int64))
    longest = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), longest, *seqs[0].shape[1:]), pad_value, dtype=seqs[0].dtype)
    mask = torch.zeros(len(seqs), longest, dtype=torch.bool)
    for i, s in enumerate(seqs):
        padded[i, : len(s)] = s
        mask[i, : len(s)] = True
    targets = torch.tensor([int(t) for _, t in batch])
    return (padded, mask), targets
