# Corpus: every leading wrapper prefix stripped from every key (the helper of a plain state-dict
# renamer), so a submodule really called `module` loses its name in a plain file.
# %% ch04_load_unwrapped points=0 feedback="a submodule of that name"
def load_unwrapped(model, state_dict):
    result = {}
    for name, tensor in state_dict.items():
        changed = True
        while changed:
            changed = False
            for prefix in ("module.", "_orig_mod."):
                if name.startswith(prefix):
                    name = name[len(prefix):]
                    changed = True
        result[name] = tensor
    model.load_state_dict(result)
