# Corpus: Router's loop kept, with torch.where on each row's 0-d condition: right in eager mode and
# it exports, but iterating over the rows fixes the batch size at the example's, so the file does
# not run on other batch sizes.
# %% ch08_exportable_router points=0 feedback="fixed the batch size"
class ExportableRouter(Router):
    def forward(self, x):
        h = self.body(x)
        return torch.stack([torch.where(row.mean() > 0, self.high(row), self.low(row)) for row in h])
