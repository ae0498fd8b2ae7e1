"""Drive JupyterLab in the browser: open a notebook, Run All from the menu, Validate, read cells.

Clicks go where a learner clicks (the Run menu, the Validate button); what the notebook holds
afterwards is read from JupyterLab's own models (``window.jupyterapp``) and from the rendered page.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

# Seconds. The chapters run with COURSE_FAST=1; these bounds allow for a loaded 2-core machine.
OPEN_TIMEOUT = 180  # notebook shown and its kernel idle
RUN_ALL_TIMEOUT = 480  # Run All, from the click to the last cell
STALL_S = 20  # kernel idle with no cell finishing for this long: Run All has stopped
VALIDATE_TIMEOUT = 480  # nbgrader runs the whole notebook in a kernel of its own

_CURRENT = "window.jupyterapp.shell.currentWidget"

# Opening returns as soon as the panel exists; readiness is polled from Python. Awaiting
# ``widget.context.ready`` inside one evaluate() let Chromium collect the pending promise on a
# loaded machine ("Resulting promise was garbage collected"), which failed a whole chapter.
_OPEN = """async (path) => {
  const app = window.jupyterapp;
  const widget = await app.commands.execute('docmanager:open', {path, factory: 'Notebook'});
  app.shell.activateById(widget.id);
  return widget.id;
}"""

_READY = f"""(id) => {{
  const w = {_CURRENT};
  return !!(w && w.id === id && w.context && w.context.isReady);
}}"""

OPEN_ATTEMPTS = 3

_KERNEL_IDLE = f"""() => {{
  const w = {_CURRENT};
  return !!(w && w.sessionContext && w.sessionContext.session
            && w.sessionContext.session.kernel
            && w.sessionContext.session.kernel.status === 'idle');
}}"""

_PROGRESS = f"""() => {{
  const w = {_CURRENT};
  const code = w.content.widgets.filter(c => c.model.type === 'code');
  return {{
    executed: code.filter(c => c.model.executionCount !== null).length,
    total: code.length,
    status: w.sessionContext.session?.kernel?.status ?? 'none',
  }};
}}"""

# One record per cell: what the model holds and what the page shows. Each cell's node is
# labelled data-test-cell=<index> so screenshots can find it.
_CELLS = f"""() => {{
  const w = {_CURRENT};
  return w.content.widgets.map((cell, index) => {{
    cell.node.setAttribute('data-test-cell', String(index));
    const model = cell.model;
    const nbgrader = model.getMetadata('nbgrader') ?? {{}};
    const record = {{
      index, type: model.type, source: model.sharedModel.getSource(),
      tags: model.getMetadata('tags') ?? [], nbgrader,
      count: model.type === 'code' ? model.executionCount : null, outputs: [],
      images_shown: 0, images_broken: 0, widgets_shown: 0, widget_errors: 0, panels_shown: 0,
    }};
    if (model.type !== 'code') return record;
    record.outputs = model.outputs.toJSON().map(o => ({{
      type: o.output_type, ename: o.ename ?? null, evalue: o.evalue ?? null,
      name: o.name ?? null, text: Array.isArray(o.text) ? o.text.join('') : (o.text ?? ''),
      mimes: Object.keys(o.data ?? {{}}),
    }}));
    const area = cell.node.querySelector('.jp-OutputArea');
    if (area) {{
      for (const img of area.querySelectorAll('img')) {{
        if (img.complete && img.naturalWidth > 0) record.images_shown += 1;
        else record.images_broken += 1;
      }}
      record.widgets_shown = area.querySelectorAll('.widget-progress, .widget-hprogress').length;
      record.panels_shown = area.querySelectorAll('.autograder-panel').length;  // Check, Hint...
      const text = area.innerText;
      record.widget_errors = (text.match(/Error displaying widget|Loading widget/g) ?? []).length;
    }}
    return record;
  }});
}}"""

_SCROLL_TO = """([index, block]) => {
  const node = document.querySelector(`[data-test-cell="${index}"]`);
  node.scrollIntoView({block});
}"""

# Closing, like opening, returns at once and is then polled: no promise left pending in evaluate().
_CLOSE = f"""() => {{
  const w = {_CURRENT};
  w.sessionContext.shutdown().finally(() => {{
    w.context.model.dirty = false;  // the outputs are not kept: close without the save dialog
    w.dispose();
  }});
  return w.id;
}}"""

_CLOSED = """(id) => !Array.from(window.jupyterapp.shell.widgets('main')).some(w => w.id === id)"""


@dataclass
class Opened:
    """A notebook open in the lab: its panel's id, and whether it was modified on opening."""

    panel_id: str
    dirty_after_open: bool
    tab_marked_dirty: bool
    seconds: float


@dataclass
class RunAll:
    """What Run All did: cells executed of the total, and how it ended."""

    executed: int
    total: int
    finished: bool
    seconds: float
    cells: list[dict] = field(default_factory=list)


@dataclass
class Validation:
    """The Validate dialog: ``kind`` is its class (validation-success, validation-failed...)."""

    kind: str
    text: str
    failed_sources: list[str]
    failed_errors: list[str]
    seconds: float


def open_notebook(page, path: str) -> Opened:
    """Open ``path`` as the file browser does; wait for its kernel; say if it came up modified."""
    start = time.monotonic()
    for attempt in range(1, OPEN_ATTEMPTS + 1):
        try:
            panel_id = page.evaluate(_OPEN, path)
            break
        except Exception as error:  # playwright's Error: its message says what happened
            # opening an already open file only activates it, so a retry is safe
            if "garbage collected" not in str(error) or attempt == OPEN_ATTEMPTS:
                raise
            page.wait_for_timeout(1000)
    page.wait_for_function(_READY, arg=panel_id, timeout=OPEN_TIMEOUT * 1000, polling=250)
    page.wait_for_function(_KERNEL_IDLE, timeout=OPEN_TIMEOUT * 1000, polling=250)
    # JupyterLab applies the kernel's language_info once the kernel answers: give it a moment.
    page.wait_for_timeout(1500)
    dirty = page.evaluate(f"() => {_CURRENT}.context.model.dirty")
    tab = page.locator(f'.lm-DockPanel-tabBar li.lm-TabBar-tab[data-id="{panel_id}"]')
    marked = "jp-mod-dirty" in (tab.first.get_attribute("class") or "")
    return Opened(panel_id, dirty, marked, time.monotonic() - start)


def run_all(page) -> RunAll:
    """Click Run > Run All Cells and wait until the last cell ran or execution stopped."""
    start = time.monotonic()
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    deadline = start + RUN_ALL_TIMEOUT
    last_change, last_executed = time.monotonic(), -1
    state = page.evaluate(_PROGRESS)
    while time.monotonic() < deadline:
        state = page.evaluate(_PROGRESS)
        if state["executed"] == state["total"] and state["status"] == "idle":
            break
        if state["executed"] != last_executed or state["status"] != "idle":
            last_change, last_executed = time.monotonic(), state["executed"]
        elif time.monotonic() - last_change > STALL_S:
            break  # idle and nothing finishing: Run All stopped before the end
        page.wait_for_timeout(500)
    finished = state["executed"] == state["total"]
    return RunAll(
        state["executed"], state["total"], finished, time.monotonic() - start, cells(page)
    )


def cells(page) -> list[dict]:
    """Every cell of the current notebook, with its outputs and what the page shows of them."""
    return page.evaluate(_CELLS)


def scroll_to(page, index: int, block: str = "start") -> None:
    page.evaluate(_SCROLL_TO, [index, block])
    page.wait_for_timeout(300)


def validate(page, panel_id: str) -> Validation:
    """Click the notebook's Validate button and read the dialog nbgrader shows."""
    start = time.monotonic()
    page.locator(f'[id="{panel_id}"] .validate-button').first.click()
    message = page.locator("#validation-message")
    message.wait_for(timeout=VALIDATE_TIMEOUT * 1000)
    kind = " ".join(
        c for c in (message.get_attribute("class") or "").split() if c.startswith("validation-")
    )
    text = message.inner_text()
    blocks = message.locator(".jp-RenderedText pre").all_inner_texts()
    seconds = time.monotonic() - start
    page.locator(".jp-Dialog .jp-mod-accept").first.click()
    page.locator(".jp-Dialog").first.wait_for(state="detached", timeout=30_000)
    # nbgrader shows each failed cell as two blocks: its source, then its error
    return Validation(kind, text, blocks[0::2], blocks[1::2], seconds)


def close_current(page) -> None:
    """Shut the current notebook's kernel down and close it without saving."""
    panel_id = page.evaluate(_CLOSE)
    page.wait_for_function(_CLOSED, arg=panel_id, timeout=60_000, polling=250)
