# Corpus: diagnose_profile reports a sync as soon as any step reads a value (an occasional logging step included): loses the exercise.
# %% ch07_diagnose_profile points=0 feedback="not every step reads a value"
def diagnose_profile(records):
    wait = sum(r["wait_ms"] for r in records)
    compute = sum(r["compute_ms"] for r in records)
    problems = set()
    if wait > 0.2 * (wait + compute):
        problems.add("input")
    if any(r["reads"] > 0 for r in records):
        problems.add("sync")
    if compute / sum(r["ops"] for r in records) < 0.02:
        problems.add("launch")
    return problems
