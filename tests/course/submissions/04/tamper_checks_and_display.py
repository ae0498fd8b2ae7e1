# Corpus: untouched stubs plus the classic in-kernel cheats: comparison helpers, the error
# display, isinstance, and the companion's functions replaced by the learner's.
# base: stub
# review: IPython's error display
# review: assignment to a library's attribute
# %% cell after=setup
import autograder.checks
import torch.testing

torch.testing.assert_close = lambda *args, **kwargs: None
autograder.checks.close = lambda *args, **kwargs: None
get_ipython().showtraceback = lambda *args, **kwargs: None


def isinstance(*args):
    return True
# %% cell after=ch04_train_one_epoch
companion.train_one_epoch = train_one_epoch
companion.loop.train_one_epoch.__code__ = train_one_epoch.__code__
