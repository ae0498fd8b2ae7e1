# Corpus: NumPy copied safely, but the uint16 token ids kept as uint16 (nn.Embedding rejects them) and the targets tensor built from the class ids as given: loses pad_collate on the dtype of padded, int64 named.
# %% ch05_pad_collate points=0 feedback="integer sequences come out as int64"
def pad_collate(batch, pad_value=0):
    sequences = [torch.from_numpy(np.array(s)) if isinstance(s, np.ndarray) else s for s, _ in batch]
    padded = nn.utils.rnn.pad_sequence(sequences, batch_first=True, padding_value=pad_value)
    mask = torch.arange(padded.shape[1]) < torch.tensor([len(s) for s in sequences])[:, None]
    return (padded, mask), torch.tensor([t for _, t in batch])
