# Corpus: forged values: a str that equals every key, a product checked with a matmul of the
# learner's own instead of the one passed in. The data boundary and the recorder stop both.
# %% ch02_error_cause points=0 feedback="returned a"
class _Key(str):
    def __eq__(self, other):
        return True

    __hash__ = str.__hash__


def error_cause(message):
    return _Key("unknown")
# %% ch02_self_check points=0 feedback="was never called"
def self_check(device, size=256, matmul=torch.matmul):
    dev = torch.device(device)
    usable = dev.type == "cpu" or (dev.type == "cuda" and torch.cuda.is_available()
                                   and (dev.index or 0) < torch.cuda.device_count())
    if not usable:
        return {"torch": str(torch.__version__), "cuda_runtime": torch.version.cuda,
                "device": "SKIP", "compute": "SKIP", "seconds": None}
    start = time.perf_counter()
    torch.matmul(torch.randn(size, size, device=dev), torch.randn(size, size, device=dev))
    return {"torch": str(torch.__version__), "cuda_runtime": torch.version.cuda,
            "device": "OK", "compute": "OK", "seconds": time.perf_counter() - start}
