# Corpus: the natural first answer after one reading: every sequence through torch.as_tensor (NumPy included), integer ids made int64, the mask from the lengths. It passes the visible checks and loses pad_collate on the first reversed NumPy view (negative strides: torch cannot wrap it); the feedback names the view.
# %% ch05_pad_collate points=0 feedback="reversed"
def pad_collate(batch, pad_value=0):
    sequences = []
    for sequence, _ in batch:
        sequence = torch.as_tensor(sequence)  # NumPy arrays from the dataset become tensors
        if not sequence.is_floating_point():
            sequence = sequence.long()  # token ids as int64, for nn.Embedding
        sequences.append(sequence)
    padded = nn.utils.rnn.pad_sequence(sequences, batch_first=True, padding_value=pad_value)
    lengths = torch.tensor([len(s) for s in sequences])
    mask = torch.arange(padded.shape[1]) < lengths[:, None]
    targets = torch.tensor([int(t) for _, t in batch], dtype=torch.int64)
    return (padded, mask), targets
