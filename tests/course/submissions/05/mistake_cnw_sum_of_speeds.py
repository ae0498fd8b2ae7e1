# Corpus: without workers, the loader's and the step's speeds added (instead of their times per
# sample); with workers, the slower side sets the pace. Only Exercise 2 is wrong, and its
# visible check already catches it (the 0-worker estimate beats both speeds there).
# %% ch05_choose_num_workers points=0 feedback="the run's choice is 2 workers"
def choose_num_workers(table, batch_size, step_samples_per_s, cores, tolerance=0.1):
    run = {}
    for r in table:
        w, s = r["num_workers"], r["samples_per_s"]
        if r["batch_size"] != batch_size or w > cores - 1 or math.isnan(s):
            continue
        # one process does both jobs, so both speeds count
        run[w] = s + step_samples_per_s if w == 0 else min(s, step_samples_per_s)
    if not run:
        raise ValueError("no row fits this run")
    best = max(run.values())
    return min(w for w, v in run.items() if v >= (1 - tolerance) * best)
