# Corpus: diagnose_profile calls a step launch-bound when it runs more than 300 operators, however long each one takes: loses the exercise.
# %% ch07_diagnose_profile points=0 feedback="rather than at the number of operators"
def diagnose_profile(records):
    wait = sum(r["wait_ms"] for r in records)
    step = wait + sum(r["compute_ms"] for r in records)
    problems = set()
    if wait > 0.2 * step:
        problems.add("input")
    if all(r["reads"] > 0 for r in records):
        problems.add("sync")
    if max(r["ops"] for r in records) > 300:
        problems.add("launch")
    return problems
