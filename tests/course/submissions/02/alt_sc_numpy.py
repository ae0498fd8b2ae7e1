# Corpus: self_check with backends.cuda.is_built(), a device comparison by torch.device, NumPy's generator for the matrices and NumPy for the error: full marks.
# %% ch02_self_check points=4 feedback=passed
def self_check(device, place=None, matmul=torch.matmul, size=64, scale=1.0):
    target = torch.device(device)
    if target.type == "cuda":
        if not torch.backends.cuda.is_built():
            return "not_built"
        wanted = target.index if target.index is not None else 0
        if not torch.cuda.is_available() or wanted >= torch.cuda.device_count():
            return "not_available"
    elif target.type == "mps":
        if not torch.backends.mps.is_built():
            return "not_built"
        if not torch.backends.mps.is_available():
            return "not_available"
    move = place or (lambda t: t.to(target))
    rng = np.random.default_rng()
    a = torch.from_numpy(rng.standard_normal((size, size)) * scale).float()
    b = torch.from_numpy(rng.standard_normal((size, size)) * scale).float()
    try:
        a_on, b_on = move(a), move(b)
        out = matmul(a_on, b_on)
    except Exception:
        return "crashed"
    got = out.device
    if got.type != target.type or (target.index is not None and got.index != target.index):
        return "wrong_device"
    exact = a.numpy().astype(np.float64) @ b.numpy().astype(np.float64)
    diff = np.linalg.norm(out.detach().cpu().numpy().astype(np.float64) - exact)
    error = diff / np.linalg.norm(exact)
    if not np.isfinite(error) or error >= 0.01:
        return "wrong_result"
    return "ok"
