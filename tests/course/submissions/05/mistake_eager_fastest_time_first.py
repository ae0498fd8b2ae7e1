# Corpus: the inputs loaded whole in __init__; the fastest count taken; pad_sequence left
# time-first.
# %% ch05_memmap_dataset points=0 feedback="__init__ read the whole inputs"
class MemmapDataset(Dataset):
    def __init__(self, folder):
        self.inputs = np.load(os.path.join(folder, "inputs.npy"))  # the whole file, once
        self.targets = np.load(os.path.join(folder, "targets.npy"))

    def __len__(self):
        return len(self.inputs)

    def __getitem__(self, i):
        return torch.tensor(self.inputs[i], dtype=torch.float32), torch.tensor(int(self.targets[i]))
# %% ch05_choose_num_workers points=0 feedback="the rule gives 1"
def choose_num_workers(throughput, tolerance=0.1):
    if not 0 <= tolerance < 1:
        raise ValueError("tolerance")
    measured = {w: s for w, s in throughput.items() if not math.isnan(s)}
    if not measured:
        raise ValueError("empty")
    return max(measured, key=measured.get)
# %% ch05_pad_collate points=0 feedback="batch first"
def pad_collate(batch, pad_value=0):
    seqs = [s for s, _ in batch]
    padded = nn.utils.rnn.pad_sequence(seqs, padding_value=pad_value)  # (T, B): time first
    lengths = torch.tensor([len(s) for s in seqs])
    mask = torch.arange(padded.shape[0])[:, None] < lengths[None, :]
    return (padded, mask), torch.tensor([int(t) for _, t in batch])
