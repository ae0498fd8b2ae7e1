# Corpus: diagnose_profile answers {"healthy"} when nothing stands out, instead of an empty set: loses the exercise (the visible test says so).
# %% ch07_diagnose_profile points=0 feedback="an empty set when nothing stands out"
def diagnose_profile(records):
    wait = sum(r["wait_ms"] for r in records)
    compute = sum(r["compute_ms"] for r in records)
    problems = set()
    if wait > 0.2 * (wait + compute):
        problems.add("input")
    if all(r["reads"] > 0 for r in records):
        problems.add("sync")
    if compute / sum(r["ops"] for r in records) < 0.02:
        problems.add("launch")
    return problems or {"healthy"}
