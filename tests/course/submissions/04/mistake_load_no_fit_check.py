# Corpus: every prefix that all keys share is peeled without looking at the model, so a plain
# file whose every key starts with a submodule really called `module` is renamed.
# %% ch04_load_unwrapped points=0 feedback="yet nothing was wrapped"
def load_unwrapped(model, state_dict):
    sd = dict(state_dict)
    while True:
        shared = [p for p in ("module.", "_orig_mod.") if sd and all(k.startswith(p) for k in sd)]
        if not shared:
            break
        sd = {k[len(shared[0]):]: v for k, v in sd.items()}
    model.load_state_dict(sd)
