# Corpus: every exercise delegated to the companion under another name: nothing, and listed for
# review.
# review: called the companion's reference
# %% ch03_as_float32 points=0 feedback="not delegated to the companion"
from companion import as_float32 as _convert


def as_float32(array, device):
    return _convert(array, device)
# %% ch03_accumulation_step points=0 feedback="not delegated to the companion"
import companion as _c


def accumulation_step(model, optimizer, loss_fn, micro_batches):
    return _c.accumulation_step(model, optimizer, loss_fn, micro_batches)
# %% ch03_ema_update points=0 feedback="not delegated to the companion"
def ema_update(ema_model, model, decay):
    module = __import__("importlib").import_module("companion." + "upd" + "ates")
    getattr(module, "ema_" + "update")(ema_model, model, decay)
