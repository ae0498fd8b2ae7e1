# Corpus: untouched stubs plus the classic in-kernel cheats: comparison helpers, the error
# display, ONNX Runtime's session and the companion's functions replaced by the learner's.
# base: stub
# review: IPython's error display
# review: assignment to a library's attribute
# %% cell after=setup
import autograder.checks
import torch.testing

torch.testing.assert_close = lambda *args, **kwargs: None
autograder.checks.close = lambda *args, **kwargs: None
ort.InferenceSession.run = lambda self, *args, **kwargs: [np.zeros((1, 3), dtype=np.float32)]
get_ipython().showtraceback = lambda *args, **kwargs: None
# %% cell after=ch08_diagnose_export
companion.export_onnx = diagnose_export
companion.export.verify_onnx.__code__ = diagnose_export.__code__
