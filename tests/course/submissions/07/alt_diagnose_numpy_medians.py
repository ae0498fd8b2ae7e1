# Corpus: diagnose_profile with NumPy, judging the median step (share of the wait, milliseconds per operator) and the fewest reads: full marks.
# %% ch07_diagnose_profile points=3 feedback=passed
import numpy as np


def diagnose_profile(records):
    wait = np.array([r["wait_ms"] for r in records], dtype=float)
    compute = np.array([r["compute_ms"] for r in records], dtype=float)
    ops = np.array([r["ops"] for r in records], dtype=float)
    reads = np.array([r["reads"] for r in records])
    problems = set()
    if np.median(wait / (wait + compute)) > 0.15:
        problems.add("input")
    if reads.min() > 0:
        problems.add("sync")
    if np.median(compute / np.maximum(ops, 1)) < 0.03:
        problems.add("launch")
    return problems
