# Corpus: torch.cond, which takes one boolean per call: the choice can only be made for the whole
# batch (the mean of all its rows), so mixed batches go wrong although it exports.
# %% ch08_exportable_router points=0 feedback="whole batch went through one head"
class ExportableRouter(Router):
    def forward(self, x):
        h = self.body(x)
        return torch.cond(h.mean() > 0, lambda h: self.high(h), lambda h: self.low(h), (h,))
