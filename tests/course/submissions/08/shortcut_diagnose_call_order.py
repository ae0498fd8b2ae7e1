# Corpus: a hostile learner's diagnosis: the answers read from earlier feedback replayed in the
# order of the calls, without opening the files (the grader hands them over in a random order).
# %% ch08_diagnose_export points=0 feedback="a file with"
_ANSWERS = [
    set(),  # the visible test's file
    set(), {"names"}, {"fixed_batch"}, {"training_mode"}, {"stale_weights"},
    {"fixed_batch", "stale_weights"}, {"training_mode", "names", "stale_weights"},
    {"fixed_batch"}, {"fixed_batch", "training_mode"},
    set(), {"names"}, {"fixed_batch", "stale_weights"}, {"training_mode", "fixed_batch"},
    {"stale_weights", "names"}, {"training_mode", "stale_weights"}, {"fixed_batch", "stale_weights"},
]
_calls = []


def diagnose_export(model, path, batches, atol=1e-4):
    _calls.append(str(path))
    return set(_ANSWERS[(len(_calls) - 1) % len(_ANSWERS)])
