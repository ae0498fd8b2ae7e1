# Corpus: each node's inputs visited sorted by name "for a stable order", not in next_functions'
# order.
# %% ch01_graph_operations points=0 feedback="another order"
def graph_operations(output):
    names, seen, queue, keep = [], {id(output.grad_fn)}, [output.grad_fn], [output.grad_fn]
    while queue:
        node = queue.pop(0)
        names.append(type(node).__name__)
        children = [c for c, _ in node.next_functions if c is not None]
        for child in sorted(children, key=lambda c: type(c).__name__):
            if id(child) not in seen:
                seen.add(id(child))
                keep.append(child)
                queue.append(child)
    return names
