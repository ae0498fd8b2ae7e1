# Corpus: seconds per sample of loader and step added for every count, workers too (as if the
# training process waited for each batch even with workers). Only Exercise 2 is wrong.
# %% ch05_choose_num_workers points=0 feedback="loading does not wait for the step"
def choose_num_workers(table, batch_size, step_samples_per_s, cores, tolerance=0.1):
    seconds = {}
    for r in table:
        w, s = r["num_workers"], r["samples_per_s"]
        if r["batch_size"] == batch_size and w < cores and s == s:  # s == s: not NaN
            seconds[w] = 1 / s + 1 / step_samples_per_s
    if not seconds:
        raise ValueError("no measured row fits")
    fastest = min(seconds.values())
    return sorted(w for w, t in seconds.items() if 1 / t >= (1 - tolerance) / fastest)[0]
