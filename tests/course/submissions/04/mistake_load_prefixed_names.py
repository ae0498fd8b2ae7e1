# Corpus: the wrapping found by trying each stack of prefixes for an exact fit; when none fits,
# the file is loaded as it is, so the error names the keys with their wrapper prefixes.
# %% ch04_load_unwrapped points=0 feedback="as the model names them"
import itertools


def load_unwrapped(model, state_dict):
    wanted = set(model.state_dict())
    for depth in range(4):
        for stack in itertools.product(("module.", "_orig_mod."), repeat=depth):
            prefix = "".join(stack)
            if {prefix + k for k in wanted} == set(state_dict):
                model.load_state_dict({k[len(prefix):]: v for k, v in state_dict.items()})
                return
    model.load_state_dict(state_dict)  # does not fit: let PyTorch say why
