"""Submission corpora: learner answers that prove a chapter's exercises and its grading.

``tests/course/submissions/NN/`` holds one small file per submission: only the exercise cells,
written as a learner would from the released notebook's docstrings. A file looks like::

    # Corpus: what this submission proves (first line).
    # base: stub            (optional; default "correct": _base.py fills the other exercises)
    # review: some words    (optional, repeatable: a review flag must contain them)
    # %% ch04_train_one_epoch points=0 feedback="zero_grad"
    def train_one_epoch(...):
        ...
    # %% ch07_amp_step points=0 feedback="old gradients" unlike="scaler.update()"
    def amp_step(...):    (unlike: words the feedback must NOT hold, a cause wrongly named)
        ...
    # %% cell after=setup    (an extra cell: after the setup cell or after a grade_id's cell)
    ...

Every exercise a file does not list gets the answer in ``_base.py`` (the learner's correct
answers, so each file also proves that its mistakes cost only their own exercises) and must keep
full marks; with ``base: stub`` it keeps the released stub and must score 0. A file without
``review:`` lines must raise no review flag at all.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent / "submissions"
BASE = "_base.py"


@dataclass
class Block:
    """One ``# %%`` block: an exercise answer or an extra cell."""

    kind: str  # "exercise" or "cell"
    target: str  # the grade_id answered, or where the cell goes ("setup" or a grade_id)
    code: str
    points: float | None = None
    feedback: str = ""
    unlike: str = ""  # words the feedback must not hold (a cause that is not this file's)


@dataclass
class Submission:
    """A parsed corpus file."""

    path: Path
    about: str
    base: str = "correct"
    review: list[str] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def exercises(self) -> dict[str, Block]:
        return {b.target: b for b in self.blocks if b.kind == "exercise"}


def parse(path: Path) -> Submission:
    """Read a corpus file; raises ValueError naming the line when it breaks the format."""
    lines = path.read_text(encoding="utf-8").split("\n")
    if not lines[0].startswith("# Corpus: "):
        raise ValueError(f"{path}:1: the first line must be '# Corpus: <what it proves>'")
    sub = Submission(path, lines[0][len("# Corpus: ") :])
    current: Block | None = None
    body: list[str] = []
    for number, line in enumerate(lines[1:], start=2):
        if line.startswith("# %% "):
            if current is not None:
                current.code = "\n".join(body).strip("\n") + "\n"
            current, body = _block(path, number, line[len("# %% ") :]), []
            sub.blocks.append(current)
        elif current is None:
            if line.startswith("# base: "):
                sub.base = line[len("# base: ") :].strip()
            elif line.startswith("# review: "):
                sub.review.append(line[len("# review: ") :].strip())
            elif line and not line.startswith("#"):
                raise ValueError(f"{path}:{number}: code before the first '# %%' block")
        else:
            body.append(line)
    if current is not None:
        current.code = "\n".join(body).strip("\n") + "\n"
    if sub.base not in ("correct", "stub"):
        raise ValueError(f"{path}: base must be 'correct' or 'stub', got {sub.base!r}")
    return sub


def _block(path: Path, number: int, header: str) -> Block:
    words = shlex.split(header)
    if words[0] == "cell":
        options = dict(w.split("=", 1) for w in words[1:])
        return Block("cell", options.get("after", "setup"), "")
    options = dict(w.split("=", 1) for w in words[1:])
    if "points" not in options or "feedback" not in options:
        raise ValueError(f"{path}:{number}: an exercise block needs points=N and feedback=WORDS")
    unknown = set(options) - {"points", "feedback", "unlike"}
    if unknown:
        raise ValueError(f"{path}:{number}: unknown options {sorted(unknown)}")
    return Block(
        "exercise",
        words[0],
        "",
        float(options["points"]),
        options["feedback"],
        options.get("unlike", ""),
    )


def submissions(chapter: str) -> list[Submission]:
    """Every corpus file of a chapter number (``"04"``), the base first."""
    folder = ROOT / chapter
    paths = sorted(folder.glob("*.py"), key=lambda p: (p.name != BASE, p.name))
    return [parse(p) for p in paths]


def build(released: dict, sub: Submission, base: Submission) -> dict:
    """The learner notebook ``sub`` describes, made from the released notebook (JSON data)."""
    nb = json.loads(json.dumps(released))
    answers = {} if sub.base == "stub" else {k: b.code for k, b in base.exercises.items()}
    answers.update({k: b.code for k, b in sub.exercises.items()})
    for grade_id, code in answers.items():
        nb["cells"][_index(nb, grade_id)]["source"] = code
    for block in (b for b in sub.blocks if b.kind == "cell"):
        if block.target == "setup":
            at = next(i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code") + 1
        else:
            at = _index(nb, block.target) + 2  # after the exercise's test cell
        cell = nbformat.v4.new_code_cell(block.code)
        cell["id"] = f"corpus-{at}-{len(nb['cells'])}"
        nb["cells"].insert(at, cell)
    return nb


def _index(nb: dict, grade_id: str) -> int:
    for index, cell in enumerate(nb["cells"]):
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id:
            return index
    raise KeyError(f"no cell with grade_id {grade_id!r} in the released notebook")


# --- Leaving out demonstration cells ------------------------------------------------------------
#
# A corpus file changes exercise cells only; the chapter's demonstrations (its plots, timings,
# exports and training runs) are the same in all of them and earn no points, yet they cost most
# of a grading (chapter 8: about 40 of 80 s per file). ``trim`` drops every code cell without
# nbgrader metadata that nothing graded needs: working backwards from the exercise and test cells
# (the source's, hidden tests included) and the file's extra cells, a cell stays when it binds or
# changes a name a kept cell reads, or when it sets global state (a seed, a switch, an environment
# variable). The grader sees a learner who deleted some demonstration cells, which it allows and
# ignores. Every corpus file, base included, is graded this way; `autograder verify` and the
# browser tests run the chapters whole.

from autograder.grader.deps import needed  # noqa: E402


def trim(nb: dict, source: dict) -> dict:
    """``nb`` without the demonstration cells no graded cell needs (see above)."""
    tests = {
        c.get("metadata", {}).get("nbgrader", {}).get("grade_id"): _text(c)
        for c in source["cells"]
        if c.get("metadata", {}).get("nbgrader", {}).get("grade")
    }
    codes, roots, where = [], set(), []
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        meta = cell.get("metadata", {}).get("nbgrader")
        if meta or cell.get("id", "").startswith("corpus-"):
            roots.add(len(codes))
        codes.append(tests.get(meta.get("grade_id"), _text(cell)) if meta else _text(cell))
        where.append(index)
    dropped = {where[i] for i, keep in enumerate(needed(codes, roots)) if not keep}
    nb = dict(nb)
    nb["cells"] = [c for i, c in enumerate(nb["cells"]) if i not in dropped]
    return nb


def _text(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source
