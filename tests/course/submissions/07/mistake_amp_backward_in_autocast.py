# Corpus: the guide's old example taken literally: the whole step, backward and step included,
# inside autocast; and clipping the gradients while they are still scaled.
# %% ch07_amp_step points=0 feedback="backward() ran inside autocast"
def amp_step(model, optimizer, loss_fn, inputs, targets, scaler, device_type, dtype):
    optimizer.zero_grad()
    with torch.autocast(device_type=device_type, dtype=dtype):
        loss = loss_fn(model(inputs), targets)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            optimizer.step()
    return loss.item()
# %% ch07_clip_and_step points=0 feedback="scaled gradients"
def clip_and_step(model, optimizer, scaler, max_norm):
    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    if scaler is not None:
        scaler.step(optimizer)
        scaler.update()
    else:
        optimizer.step()
    return norm.item()
