# Corpus: Exercise 2 reasoned in milliseconds per batch (a sorted scan, not a dict): full marks.
# %% ch05_choose_num_workers points=3 feedback=passed
def choose_num_workers(table, batch_size, step_samples_per_s, cores, tolerance=0.1):
    step_ms = 1000 * batch_size / step_samples_per_s
    usable = sorted((r["num_workers"], 1000 * batch_size / r["samples_per_s"]) for r in table
                    if r["batch_size"] == batch_size and 0 <= r["num_workers"] < cores
                    and not np.isnan(r["samples_per_s"]))
    if not usable:
        raise ValueError(f"nothing measured at batch {batch_size} with a core left to train")
    # ms per batch of the whole run: in turn without workers, side by side with them
    run_ms = [(w, load_ms + step_ms if w == 0 else max(load_ms, step_ms)) for w, load_ms in usable]
    best_ms = min(ms for _, ms in run_ms)
    for w, ms in run_ms:
        if batch_size / ms >= (1 - tolerance) * batch_size / best_ms:
            return int(w)
