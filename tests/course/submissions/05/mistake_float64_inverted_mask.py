# Corpus: samples converted to float64 (NumPy's default float); a mask that marks the padding.
# %% ch05_memmap_dataset points=0 feedback="float32"
class MemmapDataset(Dataset):
    def __init__(self, folder):
        self.folder = Path(folder)
        self.targets = torch.from_numpy(np.load(self.folder / "targets.npy").astype(np.int64))
        self.inputs = None

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, i):
        if self.inputs is None:
            self.inputs = np.load(self.folder / "inputs.npy", mmap_mode="r")
        return torch.from_numpy(np.array(self.inputs[i], dtype=float)), self.targets[i]

    def __getstate__(self):
        return {**vars(self), "inputs": None}
# %% ch05_pad_collate points=0 feedback="True on real elements"
def pad_collate(batch, pad_value=0):
    seqs = [s for s, _ in batch]
    padded = nn.utils.rnn.pad_sequence(seqs, batch_first=True, padding_value=pad_value)
    lengths = torch.tensor([len(s) for s in seqs])
    mask = torch.arange(padded.shape[1]) >= lengths[:, None]  # True where padded
    return (padded, mask), torch.tensor([int(t) for _, t in batch])
