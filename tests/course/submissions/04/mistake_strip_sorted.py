# Corpus: the keys stripped right, but the result sorted by name: not the input's order.
# %% ch04_strip_module_prefix points=0 feedback="order"
def strip_module_prefix(state_dict):
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
    return dict(sorted(result.items()))
