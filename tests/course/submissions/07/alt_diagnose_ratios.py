# Corpus: diagnose_profile as ratios of means (compute per millisecond of wait, operators per millisecond), a frozenset built from a dict of verdicts: full marks.
# %% ch07_diagnose_profile points=3 feedback=passed
from statistics import fmean


def diagnose_profile(records):
    wait = fmean(r["wait_ms"] for r in records)
    compute = fmean(r["compute_ms"] for r in records)
    ops = fmean(r["ops"] for r in records)
    verdicts = {
        "input": compute < 4 * wait,  # computing less than four fifths of the step
        "sync": not any(r["reads"] == 0 for r in records),
        "launch": ops > 40 * compute,  # more than 40 operators per millisecond
    }
    return frozenset(name for name, shown in verdicts.items() if shown)
