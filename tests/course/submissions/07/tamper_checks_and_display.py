# Corpus: untouched stubs plus the classic in-kernel cheats: comparison helpers, the error
# display, the autocast query, and the companion's functions replaced by the learner's.
# base: stub
# review: IPython's error display
# review: assignment to a library's attribute
# %% cell after=setup
import autograder.checks
import torch.testing

torch.testing.assert_close = lambda *args, **kwargs: None
autograder.checks.close = lambda *args, **kwargs: None
torch.is_autocast_enabled = lambda *args, **kwargs: True
get_ipython().showtraceback = lambda *args, **kwargs: None
# %% cell after=ch07_amp_step
companion.amp_step = amp_step
companion.amp.amp_step.__code__ = amp_step.__code__
