# Corpus: the inputs loaded whole in __init__; the run's fastest setting taken, with no tolerance;
# pad_sequence left time-first.
# %% ch05_memmap_dataset points=0 feedback="__init__ read the whole inputs"
class MemmapDataset(Dataset):
    def __init__(self, folder):
        self.inputs = np.load(os.path.join(folder, "inputs.npy"))  # the whole file, once
        self.targets = np.load(os.path.join(folder, "targets.npy"))

    def __len__(self):
        return len(self.inputs)

    def __getitem__(self, i):
        return torch.tensor(self.inputs[i], dtype=torch.float32), torch.tensor(int(self.targets[i]))
# %% ch05_choose_num_workers points=0 feedback="fewest workers among them win"
def choose_num_workers(table, batch_size, step_samples_per_s, cores, tolerance=0.1):
    best, best_speed = None, -1.0
    for row in sorted(table, key=lambda r: r["num_workers"]):
        w, s = row["num_workers"], row["samples_per_s"]
        if row["batch_size"] != batch_size or w > cores - 1 or math.isnan(s):
            continue
        run = s * step_samples_per_s / (s + step_samples_per_s) if w == 0 else min(s, step_samples_per_s)
        if run > best_speed:
            best, best_speed = w, run
    if best is None:
        raise ValueError("nothing fits")
    return best
# %% ch05_pad_collate points=0 feedback="batch first"
def pad_collate(batch, pad_value=0):
    seqs = [s for s, _ in batch]
    padded = nn.utils.rnn.pad_sequence(seqs, padding_value=pad_value)  # (T, B): time first
    lengths = torch.tensor([len(s) for s in seqs])
    mask = torch.arange(padded.shape[0])[:, None] < lengths[None, :]
    return (padded, mask), torch.tensor([int(t) for _, t in batch])
