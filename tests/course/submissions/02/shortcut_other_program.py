# Corpus: self_check asks a fresh Python in a subprocess whether the device works: nothing earned, listed for review.
# review: other programs
# %% ch02_self_check points=0 feedback="another program"
import subprocess
import sys


def self_check(device, place=None, matmul=torch.matmul, size=64, scale=1.0):
    probe = (f"import torch; d = torch.device({device!r}); x = torch.ones(2, 2, device=d); "
             "print((x @ x).sum().item())")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    if done.returncode != 0:
        return "not_available"
    return "ok"
