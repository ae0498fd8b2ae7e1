# Corpus: a pad_collate written for tensors only (the visible batch), given NumPy slices of a read-only memory map: loses pad_collate, told that a sequence can be a NumPy array.
# %% ch05_pad_collate points=0 feedback="can be a NumPy array"
def pad_collate(batch, pad_value=0):
    sequences = [sequence for sequence, _ in batch]
    padded = nn.utils.rnn.pad_sequence(sequences, batch_first=True, padding_value=pad_value)
    lengths = torch.tensor([len(s) for s in sequences])
    mask = torch.arange(padded.shape[1]) < lengths[:, None]
    return (padded, mask), torch.tensor([int(t) for _, t in batch])
