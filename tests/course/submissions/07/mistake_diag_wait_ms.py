# Corpus: diagnose_profile calls a run starved when its steps wait more than 5 ms, whatever the step's length: loses the exercise.
# %% ch07_diagnose_profile points=0 feedback="weigh the wait against the whole step"
def diagnose_profile(records):
    n = len(records)
    problems = set()
    if sum(r["wait_ms"] for r in records) / n > 5:
        problems.add("input")
    if all(r["reads"] for r in records):
        problems.add("sync")
    if sum(r["compute_ms"] for r in records) / sum(r["ops"] for r in records) < 0.02:
        problems.add("launch")
    return problems
