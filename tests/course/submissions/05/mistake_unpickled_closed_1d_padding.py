# Corpus: the map opened in __init__ and dropped from the pickle, but never reopened (the unpickled
# copy cannot read); padding that assumes 1-D sequences (token ids), shape (B, T).
# %% ch05_memmap_dataset points=0 feedback="the unpickled dataset cannot read"
class MemmapDataset(Dataset):
    def __init__(self, folder):
        folder = Path(folder)
        self.inputs = np.load(folder / "inputs.npy", mmap_mode="r")
        self.targets = torch.from_numpy(np.load(folder / "targets.npy")).long()

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, index):
        return torch.from_numpy(np.array(self.inputs[index], dtype=np.float32)), self.targets[index]

    def __getstate__(self):
        state = dict(self.__dict__)
        state["inputs"] = None  # a map must not travel with the pickle
        return state
# %% ch05_pad_collate points=0 feedback="number of dimensions"
def pad_collate(batch, pad_value=0):
    seqs = [s for s, _ in batch]
    longest = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), longest), pad_value, dtype=seqs[0].dtype)
    mask = torch.zeros(len(seqs), longest, dtype=torch.bool)
    for i, s in enumerate(seqs):
        padded[i, : len(s)] = s
        mask[i, : len(s)] = True
    return (padded, mask), torch.tensor([int(t) for _, t in batch])
