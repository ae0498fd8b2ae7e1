# Corpus: untouched stubs plus in-kernel cheats: the comparison helpers replaced, and the
# companion's functions replaced by the (stub) exercises.
# base: stub
# review: assignment to a library's attribute
# %% cell after=setup
import autograder.checks

autograder.checks.close = lambda *args, **kwargs: None
torch.testing.assert_close = lambda *args, **kwargs: None
# %% cell after=ch05_pad_collate
companion.pad_collate = pad_collate
companion.MemmapDataset = MemmapDataset
