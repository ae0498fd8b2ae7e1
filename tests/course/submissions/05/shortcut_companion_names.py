# Corpus: the companion's references under other names: a subclass of companion.MemmapDataset,
# plan_num_workers through its module, and pad_collate imported from its module.
# review: called the companion's reference
# %% ch05_memmap_dataset points=0 feedback="not delegated to the companion"
class MemmapDataset(companion.MemmapDataset):
    pass
# %% ch05_choose_num_workers points=0 feedback="not delegated to the companion"
def choose_num_workers(table, batch_size, step_samples_per_s, cores, tolerance=0.1):
    from companion import throughput as _t

    return _t.plan_num_workers(table, batch_size, step_samples_per_s, cores, tolerance)
# %% ch05_pad_collate points=0 feedback="not delegated to the companion"
from companion.loaders import pad_collate as _padder


def pad_collate(batch, pad_value=0):
    return _padder(batch, pad_value=pad_value)
