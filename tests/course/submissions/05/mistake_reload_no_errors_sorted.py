# Corpus: the whole file loaded again for each sample; no errors raised; the batch sorted by
# length, as pack_padded_sequence once required.
# %% ch05_memmap_dataset points=0 feedback="read the whole file"
class MemmapDataset(Dataset):
    def __init__(self, folder):
        self.folder = str(folder)
        self.targets = np.load(self.folder + "/targets.npy").astype(np.int64)

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, i):
        x = np.load(self.folder + "/inputs.npy")[i]  # fresh from disk every time
        return torch.from_numpy(x.astype(np.float32)), torch.tensor(self.targets[i])
# %% ch05_choose_num_workers points=0 feedback="raise ValueError"
def choose_num_workers(throughput, tolerance=0.1):
    measured = {w: s for w, s in throughput.items() if s == s}
    if not measured:
        return 0
    best = max(measured.values())
    return min(w for w, s in measured.items() if s >= (1 - tolerance) * best)
# %% ch05_pad_collate points=0 feedback="reordered"
def pad_collate(batch, pad_value=0):
    batch = sorted(batch, key=lambda sample: len(sample[0]), reverse=True)
    seqs = [s for s, _ in batch]
    padded = nn.utils.rnn.pad_sequence(seqs, batch_first=True, padding_value=pad_value)
    lengths = torch.tensor([len(s) for s in seqs])
    mask = torch.arange(padded.shape[1]) < lengths[:, None]
    return (padded, mask), torch.tensor([int(t) for _, t in batch])
