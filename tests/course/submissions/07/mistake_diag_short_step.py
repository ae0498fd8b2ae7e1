# Corpus: diagnose_profile calls a step launch-bound when its compute part is short (under 5 ms), however few operators it runs: loses the exercise.
# %% ch07_diagnose_profile points=0 feedback="or a short step"
def diagnose_profile(records):
    wait = sum(r["wait_ms"] for r in records)
    compute = sum(r["compute_ms"] for r in records)
    problems = set()
    if wait > 0.2 * (wait + compute):
        problems.add("input")
    if all(r["reads"] > 0 for r in records):
        problems.add("sync")
    if compute / len(records) < 5:
        problems.add("launch")
    return problems
