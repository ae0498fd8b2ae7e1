"""The autograd graph: what autograd recorded for a tensor, as a table or a drawing.

- :func:`graph_ops`: the recorded nodes and edges, walked from ``tensor.grad_fn``;
- :func:`draw_graph`: the same graph drawn with matplotlib (no graphviz needed).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field

import torch

from companion._extras import need
from companion._tables import format_shape, html_table, text_table

__all__ = ["GraphNode", "AutogradGraph", "graph_ops", "draw_graph"]


@dataclass
class GraphNode:
    """One node of the recorded graph.

    Attributes:
        id: position in :attr:`AutogradGraph.nodes` (0 is the tensor's own ``grad_fn``).
        name: the node's class name, e.g. ``"MulBackward0"`` or ``"AccumulateGrad"``.
        kind: ``"leaf"`` for ``AccumulateGrad`` (where a leaf's ``.grad`` is written),
            ``"op"`` otherwise.
        label: the name, or for a leaf its given name (or ``"leaf"``) and shape.
        next: ids of the nodes in this node's ``next_functions`` (towards the leaves).
    """

    id: int
    name: str
    kind: str
    label: str
    next: list[int] = field(default_factory=list)


@dataclass
class AutogradGraph:
    """The graph :func:`graph_ops` recorded, in breadth-first order from the output.

    ``edges`` are ``(node, next_node)`` pairs following ``next_functions``: the direction
    backward walks, from the output towards the leaves (data flowed the other way).
    """

    nodes: list[GraphNode]

    @property
    def names(self) -> list[str]:
        """Every node's name, output first: ``["MulBackward0", "AccumulateGrad", ...]``."""
        return [n.name for n in self.nodes]

    @property
    def ops(self) -> list[str]:
        """The recorded operations only (leaves left out)."""
        return [n.name for n in self.nodes if n.kind == "op"]

    @property
    def leaves(self) -> list[GraphNode]:
        """The ``AccumulateGrad`` nodes: one per leaf tensor that will receive a ``.grad``."""
        return [n for n in self.nodes if n.kind == "leaf"]

    @property
    def edges(self) -> list[tuple[int, int]]:
        """``(node, next_node)`` id pairs."""
        return [(n.id, m) for n in self.nodes for m in n.next]

    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self) -> Iterator[GraphNode]:
        return iter(self.nodes)

    def __getitem__(self, index: int) -> GraphNode:
        return self.nodes[index]

    def __str__(self) -> str:
        rows = [
            [str(n.id), n.label, n.kind, ", ".join(str(m) for m in n.next) or "-"]
            for n in self.nodes
        ]
        return text_table(["id", "node", "kind", "next"], rows)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        rows = [
            [str(n.id), n.label, n.kind, ", ".join(str(m) for m in n.next) or "-"]
            for n in self.nodes
        ]
        return html_table(["id", "node", "kind", "next"], rows)

    def to_dict(self) -> dict:
        """Plain data: ``{"nodes": [dict, ...], "edges": [[a, b], ...]}``."""
        return {"nodes": [asdict(n) for n in self.nodes], "edges": [list(e) for e in self.edges]}

    def plot(self, ax=None):
        """Draw the graph with :func:`draw_graph`; returns the matplotlib Axes."""
        return draw_graph(self, ax=ax)


def _leaf_names(names) -> dict[int, str]:
    if names is None:
        return {}
    items = names.items() if isinstance(names, Mapping) else names
    try:
        return {id(t): str(n) for n, t in items}
    except (TypeError, ValueError):
        raise TypeError(
            "names must map names to tensors, e.g. dict(model.named_parameters()) or "
            "{'x': x, 'w': w}"
        ) from None


def graph_ops(tensor: torch.Tensor, *, names=None) -> AutogradGraph:
    """Walk ``tensor.grad_fn`` through ``next_functions`` and list what autograd recorded.

    Every node appears once (a node reached twice, as in ``x * x``, is listed once with two
    edges into it), in breadth-first order from the tensor's own ``grad_fn``. Inputs that
    did not require grad have no node and do not appear.

    Args:
        tensor: a tensor produced by operations on tensors that require grad.
        names: optional names for the leaves, as a mapping or pairs of name and tensor
            (``dict(model.named_parameters())``, ``{"w": w}``).

    Returns:
        An :class:`AutogradGraph`; ``.names`` lists the node names, ``.ops`` the operations
        without the leaves, ``.edges`` the structure.

    Raises:
        TypeError: if ``tensor`` is not a tensor.
        ValueError: if it has no ``grad_fn`` (a leaf, or made without grad tracking).

    Example:
        >>> w = torch.ones(3, requires_grad=True)
        >>> graph_ops((w * 2).sum()).names
        ['SumBackward0', 'MulBackward0', 'AccumulateGrad']
    """
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"graph_ops needs a tensor, got {type(tensor).__name__}")
    if tensor.grad_fn is None:
        why = (
            "it is a leaf (created by you, not by an operation): graph_ops(leaf * 1) shows its "
            "AccumulateGrad"
            if tensor.requires_grad
            else "nothing it was computed from requires grad, or it was computed under "
            "torch.no_grad() or detached"
        )
        raise ValueError(f"the tensor has no grad_fn, so autograd recorded no graph: {why}")
    labels = _leaf_names(names)
    index: dict[int, int] = {}
    keep = []  # holds the Python node objects so that their ids stay unique during the walk
    nodes: list[GraphNode] = []
    queue = [tensor.grad_fn]
    index[id(tensor.grad_fn)] = 0
    keep.append(tensor.grad_fn)
    head = 0
    while head < len(queue):
        fn = queue[head]
        head += 1
        name = type(fn).__name__
        kind = "leaf" if name == "AccumulateGrad" else "op"
        label = name
        if kind == "leaf":
            var = fn.variable
            label = f"{labels.get(id(var), 'leaf')} {format_shape(tuple(var.shape))}"
        node = GraphNode(index[id(fn)], name, kind, label)
        for nxt, _ in fn.next_functions:
            if nxt is None:
                continue
            if id(nxt) not in index:
                index[id(nxt)] = len(queue)
                queue.append(nxt)
                keep.append(nxt)
            node.next.append(index[id(nxt)])
        nodes.append(node)
    return AutogradGraph(nodes)


def _layout(graph: AutogradGraph) -> dict[int, tuple[float, float]]:
    """Layered layout: the output at the bottom, each node one row above its deepest user."""
    parents: dict[int, list[int]] = {n.id: [] for n in graph.nodes}
    for a, b in graph.edges:
        parents[b].append(a)
    depth = {0: 0}
    indegree = {n.id: len(set(parents[n.id])) for n in graph.nodes}
    ready = [0]
    while ready:
        a = ready.pop()
        for b in dict.fromkeys(graph.nodes[a].next):
            depth[b] = max(depth.get(b, 0), depth[a] + 1)
            indegree[b] -= 1
            if indegree[b] == 0:
                ready.append(b)
    levels: dict[int, list[int]] = {}
    for n in graph.nodes:
        levels.setdefault(depth.get(n.id, 0), []).append(n.id)
    pos: dict[int, tuple[float, float]] = {}
    for d in sorted(levels):
        ids = levels[d]
        if d > 0:  # order each row by where its users sit, to keep edges from crossing
            ids.sort(key=lambda i: sum(pos[p][0] for p in parents[i]) / max(len(parents[i]), 1))
        width = len(ids)
        for k, i in enumerate(ids):
            pos[i] = (k - (width - 1) / 2, float(d))
    return pos


def draw_graph(tensor, *, ax=None, names=None, figsize=None):
    """Draw the autograd graph of ``tensor`` with matplotlib (no graphviz needed).

    The output's ``grad_fn`` sits at the bottom, the leaves (``AccumulateGrad``, blue) above;
    arrows point the way data flowed in the forward pass (backward walks them in reverse).

    Args:
        tensor: a tensor with a ``grad_fn``, or an :class:`AutogradGraph`.
        ax: a matplotlib Axes to draw into; a new figure is made when None.
        names: leaf names, as for :func:`graph_ops`.
        figsize: size of a new figure, in inches; chosen from the graph when None.

    Returns:
        The matplotlib Axes (its figure is ``ax.figure``).

    Raises:
        TypeError, ValueError: as :func:`graph_ops`.

    Example:
        >>> w = torch.ones(3, requires_grad=True)
        >>> ax = draw_graph((w * 2).sum(), names={"w": w})  # doctest: +SKIP
    """
    plt = need("matplotlib.pyplot", "plots", "companion.draw_graph")
    Patch = need("matplotlib.patches", "plots", "companion.draw_graph").Patch

    graph = tensor if isinstance(tensor, AutogradGraph) else graph_ops(tensor, names=names)
    pos = _layout(graph)
    xs = [x for x, _ in pos.values()]
    ys = [y for _, y in pos.values()]
    if ax is None:
        width = max(4.0, 2.2 * (max(xs) - min(xs) + 1))
        height = max(3.0, 1.1 * (max(ys) + 1))
        _, ax = plt.subplots(figsize=figsize or (min(width, 16), min(height, 12)))
    colors = {"leaf": "#cfe3ff", "op": "#eeeeee", "output": "#ffd9a8"}
    for a, b in graph.edges:
        ax.annotate(
            "",
            xy=pos[a],
            xytext=pos[b],
            arrowprops={"arrowstyle": "->", "color": "#555555", "shrinkA": 14, "shrinkB": 14},
        )
    for node in graph.nodes:
        kind = "output" if node.id == 0 else node.kind
        ax.text(
            *pos[node.id],
            node.label,
            ha="center",
            va="center",
            fontsize=9,
            bbox={"boxstyle": "round,pad=0.4", "fc": colors[kind], "ec": "#333333"},
        )
    ax.set_xlim(min(xs) - 0.8, max(xs) + 0.8)
    ax.set_ylim(-0.6, max(ys) + 0.6)
    ax.set_axis_off()
    ax.legend(
        handles=[
            Patch(fc=colors["output"], ec="#333333", label="output's grad_fn"),
            Patch(fc=colors["op"], ec="#333333", label="operation"),
            Patch(fc=colors["leaf"], ec="#333333", label="leaf (AccumulateGrad)"),
        ],
        loc="lower left",
        fontsize=8,
        frameon=False,
    )
    ax.set_title(f"Autograd graph: {len(graph.ops)} operations, {len(graph.leaves)} leaves")
    return ax
