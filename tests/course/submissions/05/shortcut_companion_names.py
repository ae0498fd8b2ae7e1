# Corpus: the companion's references under other names: a subclass of companion.MemmapDataset,
# the table's recommend(), and pad_collate imported from its module.
# review: called the companion's reference
# %% ch05_memmap_dataset points=0 feedback="not delegated to the companion"
class MemmapDataset(companion.MemmapDataset):
    pass
# %% ch05_choose_num_workers points=0 feedback="not delegated to the companion"
def choose_num_workers(throughput, tolerance=0.1):
    rows = [{"num_workers": w, "pin_memory": False, "samples_per_s": s}
            for w, s in throughput.items()]
    return companion.ThroughputTable(rows).recommend(tolerance=tolerance)
# %% ch05_pad_collate points=0 feedback="not delegated to the companion"
from companion.loaders import pad_collate as _padder


def pad_collate(batch, pad_value=0):
    return _padder(batch, pad_value=pad_value)
