# Corpus: sequences right (NumPy copied, ids int64), but the targets tensor built from the class ids as they come (np.uint8, np.int32): cross_entropy needs int64; loses pad_collate, the targets' dtype named.
# %% ch05_pad_collate points=0 feedback="targets must be an int64 tensor"
def pad_collate(batch, pad_value=0):
    sequences = []
    for s, _ in batch:
        s = torch.tensor(np.array(s)) if isinstance(s, np.ndarray) else s
        sequences.append(s.float() if s.is_floating_point() else s.long())
    padded = nn.utils.rnn.pad_sequence(sequences, batch_first=True, padding_value=pad_value)
    mask = torch.arange(padded.shape[1]) < torch.tensor([len(s) for s in sequences])[:, None]
    return (padded, mask), torch.stack([torch.as_tensor(t) for _, t in batch])
