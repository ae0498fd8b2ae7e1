# Corpus: a threshold buffer added in a new __init__: the forward exports, but ExportableRouter's
# state dict is no longer Router's, so Router's weights do not load into it.
# %% ch08_exportable_router points=0 feedback="Missing key"
class ExportableRouter(Router):
    def __init__(self):
        super().__init__()
        self.register_buffer("threshold", torch.zeros(()))

    def forward(self, x):
        h = self.body(x)
        return torch.where(h.mean(dim=1, keepdim=True) > self.threshold, self.high(h), self.low(h))
