# Corpus: diagnose_profile stops at the first problem it finds (an if/elif chain), so a run with two or three problems gets one: loses the exercise.
# %% ch07_diagnose_profile points=0 feedback="is missing"
def diagnose_profile(records):
    wait = sum(r["wait_ms"] for r in records)
    compute = sum(r["compute_ms"] for r in records)
    if wait > 0.2 * (wait + compute):
        return {"input"}
    elif all(r["reads"] > 0 for r in records):
        return {"sync"}
    elif compute / sum(r["ops"] for r in records) < 0.02:
        return {"launch"}
    return set()
