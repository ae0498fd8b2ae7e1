# Corpus: the map opened in __init__ and reopened after unpickling (__getstate__/__setstate__); a
# NumPy-vectorised rule; F.pad per sequence and a mask from the lengths.
# %% ch05_memmap_dataset points=4 feedback=passed
class MemmapDataset(Dataset):
    def __init__(self, folder):
        self.folder = str(folder)
        self._open()
        self.targets = np.load(os.path.join(self.folder, "targets.npy")).astype(np.int64)

    def _open(self):
        self.inputs = np.load(os.path.join(self.folder, "inputs.npy"), mmap_mode="r")

    def __len__(self):
        return len(self.inputs)

    def __getitem__(self, index):
        x = torch.tensor(self.inputs[index], dtype=torch.float32)  # torch.tensor always copies
        y = torch.tensor(self.targets[index])
        return x, y

    def __getstate__(self):
        return {"folder": self.folder, "targets": self.targets}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._open()
# %% ch05_choose_num_workers points=3 feedback=passed
def choose_num_workers(table, batch_size, step_samples_per_s, cores, tolerance=0.1):
    w = np.array([r["num_workers"] for r in table])
    b = np.array([r["batch_size"] for r in table])
    s = np.array([r["samples_per_s"] for r in table], dtype=float)
    ok = (b == batch_size) & (w + 1 <= cores) & ~np.isnan(s)
    if not ok.any():
        raise ValueError("no measured setting fits")
    w, s = w[ok], s[ok]
    run = np.where(w == 0, s * step_samples_per_s / (s + step_samples_per_s),
                   np.minimum(s, step_samples_per_s))
    good = run >= (1 - tolerance) * run.max()
    return int(w[good].min())
# %% ch05_pad_collate points=3 feedback=passed
import torch.nn.functional as F


def pad_collate(batch, pad_value=0):
    batch = [(torch.tensor(np.array(x)) if isinstance(x, np.ndarray) else x, y) for x, y in batch]
    batch = [(x if torch.is_floating_point(x) else x.long(), y) for x, y in batch]
    lengths = torch.tensor([len(x) for x, _ in batch])
    T = int(lengths.max())
    rows = []
    for x, _ in batch:
        widths = [0, 0] * (x.dim() - 1) + [0, T - len(x)]  # F.pad counts from the last dim
        rows.append(F.pad(x, widths, value=pad_value))
    padded = torch.stack(rows)
    mask = torch.arange(T).unsqueeze(0) < lengths.unsqueeze(1)
    targets = torch.stack([torch.as_tensor(t, dtype=torch.long) for _, t in batch])
    return (padded, mask), targets
