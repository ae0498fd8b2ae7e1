# Corpus: the `if` kept per row, with .item(): equal to Router in eager mode, but the exporter still
# meets a decision on a tensor's value and cannot export it.
# %% ch08_exportable_router points=0 feedback="could not export"
class ExportableRouter(Router):
    def forward(self, x):
        h = self.body(x)
        return torch.stack([self.high(row) if row.mean().item() > 0 else self.low(row) for row in h])
