# Corpus: the model's weights left out, on the belief that a model rebuilt with the same seed has
# the same weights: the optimizer, scheduler and generator are restored, the weights are fresh.
# %% ch04_checkpoint points=0 feedback="weights should equal the saved ones"
def save_checkpoint(path, model, optimizer, scheduler, epoch):
    torch.save(
        {
            "optimizer_state": optimizer.state_dict(),
            "scheduler_state": scheduler.state_dict(),
            "epoch": epoch,
            "cpu_rng": torch.get_rng_state(),
        },
        path,
    )


def load_checkpoint(path, model, optimizer, scheduler):
    state = torch.load(path, weights_only=True)
    optimizer.load_state_dict(state["optimizer_state"])
    scheduler.load_state_dict(state["scheduler_state"])
    torch.set_rng_state(state["cpu_rng"])
    return state["epoch"]
