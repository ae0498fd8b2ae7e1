# Corpus: an open file handle kept for seek-and-read (it cannot be pickled for spawn); targets
# returned as a list.
# %% ch05_memmap_dataset points=0 feedback="cannot be pickled"
class MemmapDataset(Dataset):
    def __init__(self, folder):
        self.file = open(Path(folder) / "inputs.npy", "rb")
        version = np.lib.format.read_magic(self.file)
        if version == (1, 0):
            self.shape, _, self.dtype = np.lib.format.read_array_header_1_0(self.file)
        else:
            self.shape, _, self.dtype = np.lib.format.read_array_header_2_0(self.file)
        self.start = self.file.tell()
        self.row = int(np.prod(self.shape[1:])) * self.dtype.itemsize
        self.targets = np.load(Path(folder) / "targets.npy").astype(np.int64)

    def __len__(self):
        return self.shape[0]

    def __getitem__(self, i):
        data = os.pread(self.file.fileno(), self.row, self.start + i * self.row)
        x = np.frombuffer(data, dtype=self.dtype).reshape(self.shape[1:]).astype(np.float32)
        return torch.from_numpy(x), torch.tensor(self.targets[i])
# %% ch05_pad_collate points=0 feedback="targets should be the tensor"
def pad_collate(batch, pad_value=0):
    seqs = [s for s, _ in batch]
    padded = nn.utils.rnn.pad_sequence(seqs, batch_first=True, padding_value=pad_value)
    lengths = torch.tensor([len(s) for s in seqs])
    mask = torch.arange(padded.shape[1]) < lengths[:, None]
    return (padded, mask), [int(t) for _, t in batch]
