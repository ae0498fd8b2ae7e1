# Corpus: more correct styles: a summed loss divided by the group size, itertools.batched-like
# grouping with islice, the norm from clip_grad_norm_'s return, and a disabled-scaler fallback.
# %% ch07_amp_step points=4 feedback=passed
def amp_step(model, optimizer, loss_fn, inputs, targets, scaler, device_type, dtype):
    if scaler is None:
        scaler = torch.amp.GradScaler(device_type, enabled=False)  # scale() and step() pass through
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device_type, dtype):
        loss = loss_fn(model(inputs), targets)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return loss.detach().float().item()
# %% ch07_clip_and_step points=4 feedback=passed
def clip_and_step(model, optimizer, scaler, max_norm):
    params = [p for p in model.parameters()]
    if scaler is not None:
        scaler.unscale_(optimizer)
    norm = torch.nn.utils.clip_grad_norm_(params, max_norm=max_norm, norm_type=2.0)
    (scaler.step if scaler is not None else lambda opt: math.isfinite(norm) and opt.step())(optimizer)
    if scaler is not None:
        scaler.update()
    return norm.item()
# %% ch07_train_epoch_amp points=4 feedback=passed
import itertools


def train_epoch_amp(model, loader, optimizer, loss_fn, scaler, accumulate, device_type, dtype, scheduler=None):
    iterator = iter(loader)
    loss_sum = 0.0
    count = 0
    while True:
        group = list(itertools.islice(iterator, accumulate))
        if not group:
            break
        size = sum(int(t.numel()) for _, t in group)
        optimizer.zero_grad()
        for x, t in group:
            with torch.autocast(device_type=device_type, dtype=dtype):
                summed = loss_fn(model(x), t) * t.numel()  # the batch's summed loss
            loss = summed / size
            if scaler:
                scaler.scale(loss).backward()
            else:
                loss.backward()
            loss_sum += summed.item()
            count += int(t.numel())
        finite = True
        if scaler:
            scaler.unscale_(optimizer)  # inf stays inf: the gradients tell whether step will skip
            grads = [p.grad for g in optimizer.param_groups for p in g["params"] if p.grad is not None]
            finite = bool(torch.stack([torch.isfinite(gr).all() for gr in grads]).all())
            scaler.step(optimizer)
            scaler.update()
        else:
            optimizer.step()
        if finite and scheduler:
            scheduler.step()
    return loss_sum / count
