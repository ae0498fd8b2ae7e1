# Corpus: wrappers are peeled while the keys do not fit and every key shares one, so a file saved
# from DataParallel around a model with a child really called `module`, and lacking the head, is
# peeled once too often: the error names the child's keys as missing and their peeled names as
# unexpected, instead of the head alone (a learner's first answer, found in a learner's pass).
# %% ch04_load_unwrapped points=0 feedback="peeled off as if it were a wrapper's prefix"
def load_unwrapped(model, state_dict):
    wanted = list(model.state_dict())
    sd = dict(state_dict)
    while set(sd) != set(wanted):
        for prefix in ("module.", "_orig_mod."):
            if sd and all(k.startswith(prefix) for k in sd):
                sd = {k[len(prefix):]: v for k, v in sd.items()}
                break
        else:
            break
    missing = [k for k in wanted if k not in sd]
    unexpected = [k for k in sd if k not in wanted]
    if missing or unexpected:
        raise RuntimeError(
            f"checkpoint does not match the model. Missing: {missing}. Unexpected: {unexpected}"
        )
    model.load_state_dict(sd)
