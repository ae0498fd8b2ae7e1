# Corpus: section 2's RescaleWhere retyped: one 0-d condition (the mean over the whole batch), so
# every row goes through one head, where Router chooses for each sample from its own features.
# %% ch08_exportable_router points=0 feedback="whole batch went through one head"
class ExportableRouter(Router):
    def forward(self, x):
        h = self.body(x)
        return torch.where(h.mean() > 0, self.high(h), self.low(h))
