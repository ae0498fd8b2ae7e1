# Corpus: the branches swapped in torch.where: exportable, but each row goes through the other
# head.
# %% ch08_exportable_router points=0 feedback="differs from Router"
class ExportableRouter(Router):
    def forward(self, x):
        h = self.body(x)
        return torch.where(h.mean(dim=1, keepdim=True) > 0, self.low(h), self.high(h))
