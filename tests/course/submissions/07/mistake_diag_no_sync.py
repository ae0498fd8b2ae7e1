# Corpus: diagnose_profile lets one read per step pass as harmless logging and reports a sync only from two reads a step: loses the exercise.
# %% ch07_diagnose_profile points=0 feedback="each reading the loss once"
def diagnose_profile(records):
    wait = sum(r["wait_ms"] for r in records)
    compute = sum(r["compute_ms"] for r in records)
    problems = set()
    if wait > 0.2 * (wait + compute):
        problems.add("input")
    if all(r["reads"] >= 2 for r in records):  # one .item() a step is just the logged loss
        problems.add("sync")
    if compute / sum(r["ops"] for r in records) < 0.02:
        problems.add("launch")
    return problems
