"""The course's editions (autograder/i18n.py): catalogs, their checks, release and grading in Chinese.

The fixture course gets a machine-made Chinese catalog ("【译】" put in front of every piece), which
is enough to prove the mechanics; the real chapters' catalogs are checked at the end.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch

from autograder import i18n
from autograder.course import Course, CourseError, read_json_notebook
from autograder.i18n import Catalog, TranslationError, problems, text_hash, translate_notebook
from autograder.release import release

from .fixture_course import CORRECT, WRONG, build_course, cell_index, load, submission, write

REPO = Path(__file__).resolve().parents[2]
CJK = re.compile(r"[\u4e00-\u9fff]")
TAG = "【译】"


def _machine_translation(nb: dict) -> Catalog:
    """Every proposal of the skeleton translated by tagging it (quotes and fields kept)."""
    catalog = i18n.skeleton(nb, None, "zh")
    for entry in catalog.cells.values():
        if "text" in entry:
            entry["text"] = f"{TAG}{entry['text']}"
            continue
        for pair in entry["replace"]:
            en = pair["en"]
            opening = re.match(r"[rbuf]*('''|\"\"\"|'|\"|#\s*)", en)
            pair["zh"] = en[: opening.end()] + TAG + en[opening.end() :]
    return catalog


@pytest.fixture(scope="module")
def editions(tmp_path_factory):
    """The fixture course with a complete zh catalog, released in both editions."""
    root = tmp_path_factory.mktemp("editions")
    course_dir, notebooks = build_course(root)
    english = Course(course_dir)
    for chapter in english.chapters():
        catalog = _machine_translation(chapter.read_source())
        path = i18n.catalog_path(course_dir, chapter.name, "zh")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(i18n.dump_catalog(catalog, chapter.name), encoding="utf-8")
    chinese = Course(course_dir, "zh")
    release(english, notebooks)
    zh_notebooks = root / "notebooks-zh"
    report = release(chinese, zh_notebooks)
    assert report.in_sync and len(report.written) == 2, report.messages
    return english, chinese, notebooks, zh_notebooks


def _demo_source(editions) -> dict:
    english = editions[0]
    return english.chapter("01").read_source()


def test_translation_replaces_text_and_keeps_code(editions):
    english, chinese = editions[0], editions[1]
    en = english.chapter("01").read_source()
    zh = chinese.chapter("01").read_source()
    assert len(en["cells"]) == len(zh["cells"])
    for a, b in zip(en["cells"], zh["cells"], strict=True):
        assert a["id"] == b["id"] and a["metadata"] == b["metadata"]
        if a["cell_type"] == "markdown":
            assert b["source"] == TAG + a["source"]
        else:  # the same code once the translated pieces are taken out
            assert b["source"].replace(TAG, "") == a["source"]
    tests = zh["cells"][cell_index(zh, "ch01_add_tests")]["source"]
    assert f'f"{TAG}add({{a}}, {{b}}) is wrong' in tests  # the hidden test's message
    assert (
        f'"""{TAG}Return the sum of a and b."""'
        in zh["cells"][cell_index(zh, "ch01_add")]["source"]
    )


def test_released_edition_records_its_language_and_is_stable(editions):
    english, chinese, notebooks, zh_notebooks = editions
    nb = load(zh_notebooks / "01-demo.ipynb")
    assert nb["metadata"]["autograder"]["language"] == "zh"
    assert "language" not in load(notebooks / "01-demo.ipynb")["metadata"]["autograder"]
    assert i18n.notebook_language(nb) == "zh"
    assert chinese.chapter_of(nb).language == "zh"
    assert english.chapter_of(nb).language == "zh"  # the notebook decides, not the course
    assert release(chinese, zh_notebooks, check=True).in_sync
    assert TAG in json.dumps(nb, ensure_ascii=False)
    assert "BEGIN HIDDEN" not in json.dumps(nb) and "CANARY" not in json.dumps(nb)


def test_a_changed_catalog_makes_the_release_stale(editions, tmp_path):
    english, chinese, _, zh_notebooks = editions
    chapter = chinese.chapter("02")
    path = chapter.catalog
    original = path.read_text(encoding="utf-8")
    try:
        path.write_text(original.replace(TAG, "【改】", 1), encoding="utf-8")
        report = release(chinese, zh_notebooks, check=True)
        assert [p.name for p in report.stale] == ["02-extra.ipynb"]
    finally:
        path.write_text(original, encoding="utf-8")


def test_grading_in_chinese_gives_the_same_points_with_chinese_feedback(editions, tmp_path):
    from autograder import grade_notebook

    english, chinese, notebooks, zh_notebooks = editions
    results = {}
    for language, folder in (("en", notebooks), ("zh", zh_notebooks)):
        stub = load(folder / "01-demo.ipynb")
        wrong = submission(stub, {**CORRECT, "ch01_add": WRONG["ch01_add"]})
        path = write(tmp_path / f"wrong-{language}.ipynb", wrong)
        results[language] = grade_notebook(path, english, timeout=20)
    en, zh = results["en"], results["zh"]
    assert [e.points for e in en.exercises] == [e.points for e in zh.exercises]
    assert en.points < en.max_points
    add_en, add_zh = en.exercises[0], zh.exercises[0]
    assert "is wrong" in add_en.feedback and TAG not in add_en.feedback
    assert TAG in add_zh.feedback and "is wrong" in add_zh.feedback  # the translated message


def test_the_graders_own_words_reach_a_chinese_learner_in_chinese(editions, tmp_path):
    """What the grader adds (passed, the stub's error, got/expected) follows the notebook."""
    from autograder import GradeResult, grade_notebook
    from autograder.grader.grade import feedback_html

    english, _, notebooks, zh_notebooks = editions
    for language, folder in (("en", notebooks), ("zh", zh_notebooks)):
        stub = load(folder / "01-demo.ipynb")
        half = submission(stub, {"ch01_add": CORRECT["ch01_add"]})  # the rest left as stubs
        result = grade_notebook(
            write(tmp_path / f"half-{language}.ipynb", half), english, timeout=20
        )
        feedback = [e.feedback for e in result.exercises]
        if language == "en":
            assert feedback[0] == "passed" and "not implemented yet" in feedback[1], feedback
        else:
            assert feedback[0] == "通过" and "尚未实现" in feedback[1], feedback
            assert not any("not implemented" in f for f in feedback), feedback
        page = feedback_html(result, half)
        assert GradeResult.from_dict(result.to_dict()).language == language
        if language == "zh":
            assert "<h1>反馈</h1>" in page and "<th>练习</th>" in page and "尚未实现" in page
        else:
            assert "<h1>Feedback</h1>" in page and "<th>exercise</th>" in page


def _grader_source() -> str:
    """The autograder's code with string literals split over lines joined again."""
    source = "\n".join(
        p.read_text(encoding="utf-8")
        for p in (REPO / "autograder").rglob("*.py")
        if p.name != "i18n.py"
    )
    return re.sub(r"[\"']\s*\n\s*[rbf]*[\"']", "", source)


@pytest.mark.parametrize(
    "pattern", [p for p, _ in i18n._GRADER_WORDS["zh"] if not p.startswith(" \\(")]
)
def test_every_grader_phrase_translated_is_one_the_grader_still_writes(pattern):
    """A reworded English message would silently stay English: each pattern's fixed words (its
    text between the groups) must still stand in the autograder's source. close()'s details,
    built from pieces, are checked on close() itself below."""
    pieces = re.split(r"\((?:[^()\\]|\\.)*\)\??|[\^$]", pattern)
    words = [re.sub(r"\\(.)", r"\1", piece).strip() for piece in pieces]
    words = [w for w in words if len(w) >= 6]
    assert words, pattern
    source = _grader_source()
    for w in words:
        assert w in source, (pattern, w)


@pytest.mark.parametrize(
    ("actual", "expected"),
    [
        (1.0, 2.0),
        ("a", "b"),
        (torch.ones(2), 1.0),
        (torch.ones(2), torch.ones(3)),
        (torch.ones(2), torch.ones(2, dtype=torch.float64)),
        ({"loss": torch.ones(1)}, {"loss": torch.zeros(1)}),
        ([1, 2], [1, 2, 3]),
        ({"a": 1}, {"b": 1}),
        ({"a": 1}, {"a": 1, "b": 2}),
        ({"a": 1, "b": 2}, {"a": 1}),
        ({"a": [1.0, 2.0]}, {"a": [1.0, 3.0]}),
    ],
)
def test_closes_details_read_as_chinese(actual, expected):
    from autograder.checks import close

    with pytest.raises(AssertionError) as caught:
        close(actual, expected, "损失不对")
    english = str(caught.value)
    chinese = i18n.translate_feedback(f"AssertionError: {english}", "zh")
    assert chinese != f"AssertionError: {english}", english
    assert not re.search(r"\b(got|expected|shape|length|keys|at|tensor|was)\b", chinese), chinese


def test_problems_name_each_kind_of_gap():
    nb = {
        "cells": [
            {
                "id": "m",
                "cell_type": "markdown",
                "metadata": {},
                "source": "Some English prose here.",
            },
            {
                "id": "c",
                "cell_type": "code",
                "metadata": {},
                "source": 'assert x, f"the value of x is {x} here"',
            },
            {
                "id": "p",
                "cell_type": "code",
                "metadata": {},
                "source": 'print("the loss went down")',
            },
        ]
    }
    good = Catalog("zh", {
        "m": {"en": text_hash(nb["cells"][0]["source"]), "text": "一些中文。"},
        "c": {"en": text_hash(nb["cells"][1]["source"]),
              "replace": [{"en": "the value of x is {x} here", "zh": "x 的值是 {x}"}]},
        "p": {"en": text_hash(nb["cells"][2]["source"]),
              "replace": [{"en": "the loss went down", "zh": "损失下降了"}]},
    })  # fmt: skip
    assert problems(nb, good) == []

    def kinds(change) -> list[str]:
        catalog = Catalog("zh", json.loads(json.dumps(good.cells)))
        change(catalog.cells)
        return sorted(p.kind for p in problems(nb, catalog))

    assert kinds(lambda c: c.pop("m")) == ["missing"]
    assert kinds(lambda c: c["m"].update(en="0" * 12)) == ["stale"]
    assert kinds(lambda c: c["m"].update(text="Still English.")) == ["untranslated"]
    assert kinds(lambda c: c["c"]["replace"][0].update(en="the value of x was {x}")) == [
        "not-found",
        "untranslated",  # and so the message is still English
    ]
    assert kinds(lambda c: c["c"]["replace"][0].update(zh="x 的值是 {y}")) == ["broken"]
    assert kinds(lambda c: c["c"]["replace"][0].update(zh='x 的值是 {x}"')) == ["broken"]
    assert kinds(lambda c: c["p"].update(replace=[])) == ["untranslated"]
    assert kinds(lambda c: c["p"]["replace"][0].update(zh="the loss went down")) == ["untranslated"]
    assert kinds(lambda c: c.update(gone={"en": "x", "text": "旧"})) == ["unknown"]
    assert kinds(lambda c: c["p"].update(text="文", replace=None) or c["p"].pop("replace")) == [
        "malformed"
    ]


def test_strict_translation_refuses_an_incomplete_catalog_and_says_how_to_see_why():
    nb = {"cells": [{"id": "m", "cell_type": "markdown", "metadata": {}, "source": "Hello there."}]}
    with pytest.raises(
        TranslationError, match=r"(?s)1 problems.*translate status --lang zh.*missing"
    ):
        translate_notebook(nb, Catalog("zh", {}))
    loose = translate_notebook(nb, Catalog("zh", {}), strict=False)
    assert loose["cells"][0]["source"] == "Hello there."


@pytest.mark.parametrize(
    ("source", "left"),
    [
        ('ax.set_title("loss")', ["loss"]),  # a label: one word is enough
        ('print("the loss went down")', ["the loss went down"]),
        ('print(f"{n} steps")', []),
        (
            'raise ValueError(f"batch_size must be positive, got {n}")',
            ["batch_size must be positive, got "],
        ),
        ('def f():\n    """Return the sum of both."""', ["Return the sum of both."]),
        ('def _check():\n    """Hidden helper, never shown."""', []),
        ('x = "a plain data string with words"', []),
        ('close(a, b, "the weights differ after a step")', ["the weights differ after a step"]),
        ("%timeit f()\nprint('it works fine now')", ["it works fine now"]),
    ],
)
def test_untranslated_prose_finds_what_a_reader_sees(source, left):
    assert [t.strip() for t in i18n.untranslated_prose(source)] == [t.strip() for t in left]


def test_skeleton_keeps_translations_and_proposes_new_cells(tmp_path):
    nb = {"cells": [
        {"id": "m", "cell_type": "markdown", "metadata": {}, "source": "Prose."},
        {"id": "c", "cell_type": "code", "metadata": {},
         "source": '# Build the model first\nassert ok, "it must be ok by now"\n'},
    ]}  # fmt: skip
    old = Catalog("zh", {"m": {"id": "m", "en": text_hash("Prose."), "text": "散文。"}})
    new = i18n.skeleton(nb, old, "zh")
    assert new.cells["m"]["text"] == "散文。"
    pieces = [p["en"] for p in new.cells["c"]["replace"]]
    assert pieces == ['"it must be ok by now"', "# Build the model first"]
    text = i18n.dump_catalog(new, "00-x")
    assert "散文。" in text  # unicode kept as is, not escaped
    path = tmp_path / "zh" / "00-x.yml"
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")
    reread = i18n.load_catalog(path)
    assert reread.language == "zh" and reread.cells["c"]["replace"] == new.cells["c"]["replace"]
    assert [p.kind for p in problems(nb, reread)] == ["untranslated"] * 2  # placeholders


def test_stamp_records_a_revisit_only_for_stale_cells():
    nb = {"cells": [{"id": "m", "cell_type": "markdown", "metadata": {}, "source": "New prose."}]}
    catalog = Catalog("zh", {"m": {"en": text_hash("Old prose."), "text": "散文。"}})
    assert [p.kind for p in problems(nb, catalog)] == ["stale"]
    assert i18n.stamp(nb, catalog) == ["m"]
    assert problems(nb, catalog) == [] and i18n.stamp(nb, catalog) == []
    with pytest.raises(TranslationError, match="no such cell"):
        i18n.stamp(nb, catalog, ["nope"])


def test_catalog_format_errors_name_the_entry(tmp_path):
    path = tmp_path / "zh" / "01-x.yml"
    path.parent.mkdir()
    with pytest.raises(TranslationError, match="translate skeleton --lang zh --chapter 01"):
        i18n.load_catalog(path)
    path.write_text("cells:\n- id: a\n  text: hi\n", encoding="utf-8")
    with pytest.raises(TranslationError, match=r"entry 1 \(cell a\): 'en'"):
        i18n.load_catalog(path)
    path.write_text("cells:\n- id: a\n  en: x\n  text: hi\n  replace: []\n", encoding="utf-8")
    with pytest.raises(TranslationError, match="exactly one of 'text'"):
        i18n.load_catalog(path)
    path.write_text("cells: [\n", encoding="utf-8")
    with pytest.raises(TranslationError, match="not valid YAML"):
        i18n.load_catalog(path)


def test_an_unknown_edition_is_a_clear_error(editions):
    english = editions[0]
    with pytest.raises(CourseError, match=r"no 'fr' edition.*en \(English\), zh"):
        english.chapter("01").in_language("fr")


# The real course: every chapter has a Chinese catalog, complete and current, and notebooks-zh/
# is what release would write.


def _chapters():
    return Course(REPO / "course").chapters()


@pytest.mark.parametrize("chapter", _chapters(), ids=lambda c: c.name)
def test_every_chapter_has_a_complete_and_current_chinese_catalog(chapter):
    path = i18n.catalog_path(REPO / "course", chapter.name, "zh")
    catalog = i18n.load_catalog(path, "zh")
    found = problems(read_json_notebook(chapter.source), catalog)
    listed = "\n".join(str(p) for p in found[:30])
    assert not found, (
        f"{path}: {len(found)} problems (an English cell changed without its translation being "
        f"revisited, or a cell lacks one); run `python -m autograder translate status --chapter "
        f"{chapter.name[:2]} --show`, fix, then `translate stamp`:\n{listed}"
    )


def test_the_chinese_notebooks_are_released_and_current():
    report = release(Course(REPO / "course", "zh"), REPO / "notebooks-zh", check=True)
    assert report.in_sync, "\n".join(report.messages)


def _cjk_line_breaks(notebook: dict) -> list[str]:
    """Markdown line breaks between two Chinese characters: a renderer shows them as a space."""
    wide = r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]"
    found = []
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown":
            source = "".join(cell["source"])
            found += [
                source[max(0, m.start() - 8) : m.end() + 8]
                for m in re.finditer(wide + r"\n[ \t]*" + wide, source)
            ]
    return found


def test_chinese_markdown_breaks_no_line_between_two_chinese_characters():
    breaks = {}
    for path in sorted((REPO / "notebooks-zh").glob("*.ipynb")):
        found = _cjk_line_breaks(json.loads(path.read_text(encoding="utf-8")))
        if found:
            breaks[path.name] = found[:3]
    assert not breaks, (
        "markdown wrapped between Chinese characters renders as a stray space; join the lines in "
        f"the catalog's text: {breaks}"
    )
    broken = {"cells": [{"cell_type": "markdown", "source": ["训练只需要\n驱动。"]}]}
    assert _cjk_line_breaks(broken), "the check must find a break between two Chinese characters"
