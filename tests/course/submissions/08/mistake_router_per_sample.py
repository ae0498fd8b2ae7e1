# Corpus: the condition computed per sample (mean over the features of each row): each row picks
# its own head, where Router decides once for the whole batch.
# %% ch08_exportable_router points=0 feedback="whole batch"
class ExportableRouter(Router):
    def forward(self, x):
        h = self.body(x)
        return torch.where(h.mean(dim=1, keepdim=True) > 0, self.high(h), self.low(h))
