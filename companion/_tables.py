"""Plain-text and HTML tables, and shape formatting, shared by the debugging reports."""

from __future__ import annotations

import html
from collections.abc import Iterable


def text_table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    out = [line.rstrip(), "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(out)


def html_table(headers: list[str], rows: list[list[str]], marked: Iterable[int] = ()) -> str:
    marked = set(marked)
    head = "".join(f"<th style='text-align:left'>{html.escape(h)}</th>" for h in headers)
    body = []
    for i, row in enumerate(rows):
        style = " style='background:#fdd'" if i in marked else ""
        cells = "".join(
            f"<td style='text-align:left;font-family:monospace'>{html.escape(c)}</td>" for c in row
        )
        body.append(f"<tr{style}>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def clip_text(text: str, width: int = 48) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def format_shape(shape) -> str:
    if isinstance(shape, tuple):
        return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
    if isinstance(shape, list):
        return ", ".join(format_shape(s) for s in shape) if shape else "-"
    if isinstance(shape, dict):
        return ", ".join(f"{k}={format_shape(v)}" for k, v in shape.items())
    return "None" if shape is None else str(shape)
