# Corpus: one choice per row, shaped (B, 1), but made from the inputs' mean instead of the mean of
# what the body computes from them: some rows go through the other head (the visible test
# already shows it on one-row batches).
# %% ch08_exportable_router points=0 feedback="differs from Router"
class ExportableRouter(Router):
    def forward(self, x):
        takes_high = x.mean(dim=1, keepdim=True) > 0  # (B, 1)
        h = self.body(x)
        return torch.where(takes_high, self.high(h), self.low(h))
