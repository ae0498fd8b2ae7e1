# Corpus: the map opened in __init__ and pickled with the dataset; the first fast-enough count in
# the dict's order; the mask read from the values.
# %% ch05_memmap_dataset points=0 feedback="carries the inputs"
class MemmapDataset(Dataset):
    def __init__(self, folder):
        self.inputs = np.load(Path(folder) / "inputs.npy", mmap_mode="r")
        self.targets = torch.from_numpy(np.load(Path(folder) / "targets.npy").astype(np.int64))

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, i):
        return torch.from_numpy(np.array(self.inputs[i], dtype=np.float32)), self.targets[i]
# %% ch05_choose_num_workers points=0 feedback="any order"
def choose_num_workers(throughput, tolerance=0.1):
    if not 0 <= tolerance < 1:
        raise ValueError("tolerance")
    speeds = [s for s in throughput.values() if not math.isnan(s)]
    if not speeds:
        raise ValueError("empty")
    for workers, speed in throughput.items():
        if speed >= (1 - tolerance) * max(speeds):
            return workers
# %% ch05_pad_collate points=0 feedback="build the mask from the lengths"
def pad_collate(batch, pad_value=0):
    seqs = [s for s, _ in batch]
    padded = nn.utils.rnn.pad_sequence(seqs, batch_first=True, padding_value=pad_value)
    mask = padded != pad_value
    if mask.dim() > 2:
        mask = mask.any(dim=-1)
    return (padded, mask), torch.tensor([int(t) for _, t in batch])
