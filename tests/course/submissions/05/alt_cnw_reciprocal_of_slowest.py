# Corpus: Exercise 2 with the run's speed with workers written as the reciprocal of the slower
# side's time per sample, 1 / max(1 / loader, 1 / step): full marks. On the exact-boundary case
# this once lost the exercise (1 / (1 / 875) is 874.9999999999999 < 875): the boundary cases now
# use speeds whose reciprocals round back exactly, so floating point cannot cross them.
# %% ch05_choose_num_workers points=3 feedback=passed
def choose_num_workers(table, batch_size, step_samples_per_s, cores, tolerance=0.1):
    run = {}
    for row in table:
        speed = row["samples_per_s"]
        if row["batch_size"] != batch_size or row["num_workers"] >= cores or speed != speed:
            continue
        per_sample = [1 / speed, 1 / step_samples_per_s]
        # without workers the two times add up; with them the slower side sets the pace
        run[row["num_workers"]] = 1 / (sum(per_sample) if row["num_workers"] == 0 else max(per_sample))
    if not run:
        raise ValueError(f"no measured row fits batch_size={batch_size} and cores={cores}")
    best = max(run.values())
    return min(w for w, speed in run.items() if speed >= (1 - tolerance) * best)
