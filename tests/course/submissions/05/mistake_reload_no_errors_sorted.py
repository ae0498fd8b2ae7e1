# Corpus: the whole file loaded again for each sample; 0 returned when no row fits instead of an
# error; the batch sorted by length, as pack_padded_sequence once required.
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
def choose_num_workers(table, batch_size, step_samples_per_s, cores, tolerance=0.1):
    run = {}
    for row in table:
        w, s = row["num_workers"], row["samples_per_s"]
        if row["batch_size"] == batch_size and w <= cores - 1 and not math.isnan(s):
            run[w] = 1 / (1 / s + 1 / step_samples_per_s) if w == 0 else min(s, step_samples_per_s)
    if not run:
        return 0  # nothing measured: no workers is the safe default
    best = max(run.values())
    return min(w for w, s in run.items() if s >= (1 - tolerance) * best)
# %% ch05_pad_collate points=0 feedback="reordered"
def pad_collate(batch, pad_value=0):
    batch = sorted(batch, key=lambda sample: len(sample[0]), reverse=True)
    seqs = [s for s, _ in batch]
    padded = nn.utils.rnn.pad_sequence(seqs, batch_first=True, padding_value=pad_value)
    lengths = torch.tensor([len(s) for s in seqs])
    mask = torch.arange(padded.shape[1]) < lengths[:, None]
    return (padded, mask), torch.tensor([int(t) for _, t in batch])
