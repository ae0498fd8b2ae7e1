# Corpus: targets kept in the file's dtype; NaN speeds compared; padded made as float32 zeros.
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
def choose_num_workers(throughput, tolerance=0.1):
    if not 0 <= tolerance < 1:
        raise ValueError("tolerance")
    if not throughput:
        raise ValueError("empty")
    best = max(throughput.values())
    return min(w for w, s in throughput.items() if s >= (1 - tolerance) * best)
# %% ch05_pad_collate points=0 feedback="keep the sequences' dtype"
def pad_collate(batch, pad_value=0):
    longest = max(len(s) for s, _ in batch)
    padded = torch.zeros(len(batch), longest, *batch[0][0].shape[1:]) + pad_value
    mask = torch.zeros(len(batch), longest, dtype=torch.bool)
    for b, (s, _) in enumerate(batch):
        padded[b, : len(s)] = s
        mask[b, : len(s)] = True
    return (padded, mask), torch.tensor([int(t) for _, t in batch])
