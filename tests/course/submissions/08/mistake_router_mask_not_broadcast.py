# Corpus: one choice per row, but the condition left as shape (B,): against the heads' (B, 4)
# outputs it lines up with the classes, so it raises on most batch sizes and mixes the rows'
# choices across the classes on a batch of 4.
# %% ch08_exportable_router points=0 feedback="give it the shape (B, 1)"
class ExportableRouter(Router):
    def forward(self, x):
        h = self.body(x)
        return torch.where(h.mean(dim=1) > 0, self.high(h), self.low(h))
