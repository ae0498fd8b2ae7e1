# Corpus: diagnose_profile reports a sync when the steps read one value or more on average, so one logging step that reads several values counts as a sync per step: loses the exercise.
# %% ch07_diagnose_profile points=0 feedback="even one that reads several values"
def diagnose_profile(records):
    wait = sum(r["wait_ms"] for r in records)
    compute = sum(r["compute_ms"] for r in records)
    problems = set()
    if wait > 0.2 * (wait + compute):
        problems.add("input")
    if sum(r["reads"] for r in records) / len(records) >= 1:
        problems.add("sync")
    if compute / sum(r["ops"] for r in records) < 0.02:
        problems.add("launch")
    return problems
