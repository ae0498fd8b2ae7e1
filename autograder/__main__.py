"""Command line: ``python -m autograder {release,grade,verify,book}`` (also the ``autograder`` script)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from autograder.grader.pool import skip_slow_imports

_EPILOG = """\
examples:
  python -m autograder release            regenerate notebooks/ from course/source/
  python -m autograder release --check    exit 1 if notebooks/ is out of date
  python -m autograder grade notebooks/04-training-loop.ipynb
  python -m autograder grade submissions/*/04-training-loop.ipynb --jobs 4 --json-file marks.json
  python -m autograder grade submissions/ --feedback feedback/   every notebook under a folder
                                          (progress on stderr: a bar on a terminal, else a line
                                          per notebook)
  python -m autograder check notebooks/04-training-loop.ipynb evaluate
                                          one exercise's hidden tests, in seconds (the lab's Check)
  python -m autograder progress           your best points and hints, chapter by chapter
  python -m autograder grade submitted/ --shard 3/8 --json-file shards/3.json
                                          the 3rd of 8 shards (a cluster's task)
  python -m autograder merge shards/*.json --out marks.json
  python -m autograder report marks.json --out report/   the class report (report/index.html)
  python -m autograder export marks.json --csv marks.csv --gradebook course/gradebook.db
  python -m autograder verify             what `make test` runs after pytest
  python -m autograder book               the course as a static HTML site (build/book/html)
"""


class UsageError(Exception):
    """Bad command-line input: reported on one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line naming the problem and where help is."""

    def error(self, message):
        raise UsageError(f"{message} (see `{self.prog} --help`)")


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 a check failed, 2 bad usage).

    Bad input never ends in a traceback: it is one line on stderr and a non-zero status. Set
    ``AUTOGRADER_DEBUG=1`` to see the traceback of an unexpected error.
    """
    skip_slow_imports()
    from autograder.course import CourseError

    try:
        parser = _parser()
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 2
        from autograder.course import Course, default_course_root

        language = getattr(args, "lang", "en")
        course = Course(Path(args.course) if args.course else default_course_root(), language)
        folder = "notebooks" if language == "en" else f"notebooks-{language}"
        notebooks = Path(args.notebooks) if args.notebooks else course.root.parent / folder
        return args.run(args, course, notebooks)
    except UsageError as exc:
        print(f"autograder: error: {exc}", file=sys.stderr)
        return 2
    except CourseError as exc:
        print(f"autograder: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("autograder: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if os.environ.get("AUTOGRADER_DEBUG"):
            raise
        print(
            f"autograder: unexpected error: {type(exc).__name__}: {exc} "
            "(set AUTOGRADER_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return 3


def _release(args, course, notebooks) -> int:
    from autograder.release import release

    report = release(course, notebooks, check=args.check, force=args.force)
    for message in report.messages:
        kept = message.startswith(("kept", "extra", "out of date", "missing", "not released"))
        if kept or not args.quiet:
            print(message, file=sys.stderr if kept else sys.stdout)
    if args.trust and not args.check:
        _trust(notebooks, quiet=args.quiet)
    if args.check:
        if report.in_sync:
            if not args.quiet:
                print(f"{notebooks}/ is up to date with {course.source_dir}/")
            return 0
        again = "" if course.language == "en" else f" --lang {course.language}"
        print(
            f"{notebooks}/ is out of date: run `python -m autograder release{again}`",
            file=sys.stderr,
        )
        return 1
    if not args.quiet and not report.written and not report.removed and report.in_sync:
        print(f"{notebooks}/ is up to date")
    return 0 if course.language == "en" or report.in_sync else 1


def _trust(notebooks: Path, *, quiet: bool) -> None:
    from autograder.release import trust_untouched

    try:
        signed = trust_untouched(notebooks)
    except Exception as exc:  # a read-only or broken signature database: the lab still works
        print(
            f"note: could not mark the released notebooks as trusted ({type(exc).__name__}: "
            f"{exc}); Jupyter will say they are not trusted, which is harmless",
            file=sys.stderr,
        )
        return
    if not quiet:
        for path in signed:
            print(f"trusted {path}")


def _grade(args, course, notebooks) -> int:
    from autograder.grader.grade import feedback_html
    from autograder.grader.pool import grade_paths

    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {args.jobs}")
    if args.timeout <= 0:
        raise UsageError(f"--timeout must be positive seconds, got {args.timeout:g}")
    if args.submission_timeout is not None and args.submission_timeout <= 0:
        raise UsageError(
            f"--submission-timeout must be positive seconds, got {args.submission_timeout:g}"
        )
    paths = _leave_out_sources(_expand(args.paths), course)
    inputs, shard = paths, None
    if args.shard is not None:
        from autograder.marks import parse_shard, shard_of

        try:
            shard = parse_shard(args.shard)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if not args.json_file:
            raise UsageError(
                f"--shard {args.shard} needs --json-file FILE: `autograder merge` joins the "
                "shards' files"
            )
        paths = shard_of(inputs, *shard)
    json_file = _output_file(args.json_file) if args.json_file else None
    feedback = _output_dir(args.feedback) if args.feedback else None
    from autograder.grader.sandbox import SandboxUnavailable, resolve

    try:
        from autograder.grader.sandbox import Limits

        if args.memory <= 0 or args.processes < 8:
            raise UsageError(
                f"--memory must be positive GiB and --processes at least 8, got "
                f"{args.memory:g} and {args.processes}"
            )
        limits = Limits(memory_bytes=int(args.memory * 2**30), processes=args.processes)
        isolation = resolve("none" if args.no_sandbox else "sandbox", limits)
    except SandboxUnavailable as exc:
        raise UsageError(f"cannot grade in a sandbox: {exc}") from None
    print(isolation.describe(), file=sys.stderr, flush=True)
    to_stdout = args.json
    from autograder.grader.pool import default_jobs

    jobs = max(1, min(args.jobs or default_jobs(), len(paths)))
    progress = _Progress(len(paths), jobs, show_results=not to_stdout)
    try:
        results = grade_paths(
            paths,
            course,
            jobs=jobs,
            chapter=args.chapter,
            timeout=args.timeout,
            fast=not args.no_fast,
            submission_timeout=args.submission_timeout,
            on_result=progress,
            isolation=isolation,
        )
    finally:
        progress.close()
    from autograder.marks import marks_document

    pages = _feedback_names(inputs) if feedback is not None else None
    document = marks_document(
        results, course, shard=shard, inputs=inputs, feedback_dir=feedback, feedback_names=pages
    )
    data = json.dumps(document, indent=1)
    if to_stdout:
        print(data)
    status = 0
    if json_file is not None:
        status |= _save(json_file, data + "\n")
    if feedback is not None:
        try:
            _write_feedback(feedback, results, feedback_html, pages)
        except OSError as exc:
            print(f"autograder: could not write the feedback pages: {exc}", file=sys.stderr)
            status |= 1
    graded = sum(r.graded for r in results)
    if len(results) > 1 and not to_stdout:
        print(f"graded {graded} of {len(results)} notebooks")
    return 1 if status or graded != len(results) else 0


_NO_HIDDEN_TESTS = (
    "the hidden tests are not on this machine (no {root}/source/ folder): Check needs the "
    "course's source notebooks. Use Validate for the visible tests, and submit the notebook to "
    "be graded"
)


def _hidden_tests_here(course) -> bool:
    return course.source_dir.is_dir()


def _check(args, course, notebooks) -> int:
    from autograder.progress import record_check, record_hint

    if args.timeout <= 0:
        raise UsageError(f"--timeout must be positive seconds, got {args.timeout:g}")
    path = Path(args.notebook)
    if not path.is_file():
        raise UsageError(
            f"NOTEBOOK {args.notebook!r} is not a file: give the path of a saved .ipynb"
        )
    if not _hidden_tests_here(course):
        print(f"autograder: {_NO_HIDDEN_TESTS.format(root=course.root)}", file=sys.stderr)
        return 1
    from autograder.grader.check import check_exercise

    result = check_exercise(path, course, args.exercise, timeout=args.timeout)
    if not args.no_record and result.error is None:
        try:
            record_check(path, result)
            if args.hint and result.failures:
                record_hint(path, result.chapter, result.name, args.hint)
        except OSError as exc:
            print(f"autograder: could not record your progress: {exc}", file=sys.stderr)
    if args.json:
        print(json.dumps(result.to_dict(), indent=1, ensure_ascii=False))
    else:
        print(result.text(hints_shown=args.hint))
    if result.error is not None:
        return 1
    return 0 if result.points == result.max_points else 1


def _check_server(args, course, notebooks) -> int:
    import asyncio

    from autograder.grader.check import serve

    if not _hidden_tests_here(course):
        for line in sys.stdin:
            if line.strip():
                message = _NO_HIDDEN_TESTS.format(root=course.root)
                print(json.dumps({"error": message, "no_hidden_tests": True}), flush=True)
        return 0
    asyncio.run(serve(course, timeout=args.timeout, notebook=args.notebook))
    return 0


def _check_service(args, course, notebooks) -> int:
    from autograder.grader.sandbox import SandboxUnavailable, resolve
    from autograder.grader.service import CheckService, make_server

    try:
        token = Path(args.token_file).read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise UsageError(f"--token-file {args.token_file!r} cannot be read: {exc}") from None
    if not _hidden_tests_here(course):
        raise UsageError(_NO_HIDDEN_TESTS.format(root=course.root))
    if args.jobs < 1 or args.timeout <= 0 or args.max_mb <= 0:
        raise UsageError(
            f"--jobs must be at least 1, --timeout and --max-mb positive; got {args.jobs}, "
            f"{args.timeout:g} and {args.max_mb:g}"
        )
    try:
        isolation = resolve("none" if args.no_sandbox else "sandbox")
        service = CheckService(
            course,
            token,
            isolation,
            jobs=args.jobs,
            timeout=args.timeout,
            max_bytes=int(args.max_mb * 2**20),
        )
    except SandboxUnavailable as exc:
        raise UsageError(f"a check service needs the sandbox: {exc}") from None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    server = make_server(service, args.host, args.port)
    print(isolation.describe(), file=sys.stderr)
    print(f"checking at http://{args.host}:{server.server_port}/check (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0


def _progress(args, course, notebooks) -> int:
    from autograder.progress import FILE_NAME, course_exercises, load, summary_text

    folder = Path(args.folder) if args.folder else notebooks
    if not folder.is_dir():
        raise UsageError(f"FOLDER {str(folder)!r} is not a folder of notebooks")
    data = load(folder / FILE_NAME)
    if args.json:
        print(json.dumps(data, indent=1, ensure_ascii=False))
        return 0
    print(summary_text(data, args.lang, course_exercises(folder)))
    if not data.get("chapters"):
        print(f"(no checks recorded yet in {folder / FILE_NAME})")
    return 0


class _Progress:
    """Each result as soon as it is known, and how far a batch has got.

    On a terminal, a tqdm bar on stderr (graded so far of the total, elapsed time, time left);
    otherwise one line per finished notebook on stderr, with the same figures. The result
    tables go to stdout as they come (in the order the notebooks finish).
    """

    def __init__(self, total: int, jobs: int, *, show_results: bool):
        self.total, self.done, self.show_results = total, 0, show_results
        self.started = time.monotonic()
        self.bar = None
        if total < 2:
            return
        if sys.stderr.isatty():
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, unit="notebook", desc="grading", file=sys.stderr)
        else:
            print(f"grading {total} notebooks, {jobs} at a time", file=sys.stderr, flush=True)

    def __call__(self, result) -> None:
        self.done += 1
        if self.show_results:
            text = f"{result}\n"
            if self.bar is not None:
                self.bar.write(text, file=sys.stdout)
            else:
                print(text, flush=True)
        if self.bar is not None:
            self.bar.update(1)
        elif self.total > 1:
            elapsed = time.monotonic() - self.started
            left = elapsed / self.done * (self.total - self.done)
            score = f"{result.points:g} / {result.max_points:g}" if result.graded else "not graded"
            print(
                f"[{self.done}/{self.total}] {result.path}: {score} ({result.seconds:.0f} s); "
                f"{_clock(elapsed)} elapsed, about {_clock(left)} left",
                file=sys.stderr,
                flush=True,
            )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _clock(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}:{rest:02d}"


def _leave_out_sources(paths: list[str], course) -> list[str]:
    """The submissions among ``paths``: the course's own source notebooks are not graded.

    Raises:
        UsageError: when every path is a source notebook (``grade course/``), in one line.
    """
    source = course.source_dir.resolve()
    sources = [p for p in paths if Path(p).resolve().is_relative_to(source)]
    if not sources:
        return paths
    if len(sources) == len(paths):
        raise UsageError(
            f"{', '.join(sorted({str(Path(p).parent.parent) for p in sources}))} holds the "
            "course's source notebooks (with the solutions and hidden tests), not submissions: "
            "grade the learners' notebooks (notebooks/, or nbgrader's submitted/), or run "
            "`python -m autograder verify` to check that the sources score full marks"
        )
    print(
        f"note: left out {len(sources)} of the course's source notebooks (in {source}: "
        "solutions, not submissions)",
        file=sys.stderr,
        flush=True,
    )
    return [p for p in paths if p not in sources]


def _expand(paths: list[str]) -> list[str]:
    """Files as given; a folder stands for the notebooks under it (checkpoints left out)."""
    found = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            inside = sorted(
                p
                for p in path.rglob("*.ipynb")
                if not {".ipynb_checkpoints", "backup"} & set(p.relative_to(path).parts)
            )
            if not inside:
                raise UsageError(f"{name} is a folder with no .ipynb notebooks in it")
            found += [str(p) for p in inside]
        else:
            found.append(name)
    return found


def _output_file(name: str) -> Path:
    """A writable place for the JSON results, checked (and its folder made) before grading."""
    path = Path(name)
    if path.suffix == ".ipynb":
        raise UsageError(f"--json-file {name} would overwrite a notebook")
    if path.is_dir():
        raise UsageError(f"--json-file {name} is a folder; give a file name such as marks.json")
    _make_folder(path.parent, f"--json-file {name}")
    if path.exists() and not os.access(path, os.W_OK) or not os.access(path.parent, os.W_OK):
        raise UsageError(f"--json-file {name} is not writable")
    return path


def _output_dir(name: str) -> Path:
    path = Path(name)
    if path.exists() and not path.is_dir():
        raise UsageError(f"--feedback {name} is a file; give a folder for the feedback pages")
    _make_folder(path, f"--feedback {name}")
    if not os.access(path, os.W_OK):
        raise UsageError(f"--feedback {name} is not writable")
    return path


def _make_folder(path: Path, what: str) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{what}: cannot create the folder {path} ({exc.strerror})") from None


def _save(path: Path, text: str) -> int:
    """Write the results; if that fails, keep them in a temporary file and say where."""
    try:
        path.write_text(text, encoding="utf-8")
        return 0
    except OSError as exc:
        import tempfile

        fd, spare = tempfile.mkstemp(prefix="autograder-results-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        print(
            f"autograder: could not write {path} ({exc.strerror}); the results are in {spare}",
            file=sys.stderr,
        )
        return 1


def _feedback_names(inputs: list[str]) -> dict[str, str]:
    """Each input's feedback page, relative to the --feedback folder: its path below the
    inputs' common folder (over every input of the run, so the shards of a run agree)."""
    paths = [Path(p).resolve() for p in inputs]
    base = Path(os.path.commonpath([p.parent for p in paths])) if paths else Path.cwd()
    return {
        given: path.relative_to(base).with_suffix(".html").as_posix()
        for given, path in zip(inputs, paths, strict=True)
    }


def _write_feedback(folder: Path, results, render, pages: dict[str, str] | None = None) -> None:
    from autograder.course import CourseError, read_json_notebook

    pages = pages or _feedback_names([r.path for r in results])
    for result in results:
        try:
            submission = read_json_notebook(Path(result.path))
        except CourseError:
            submission = None
        target = folder / pages[result.path]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render(result, submission), encoding="utf-8")


def _marks_files(names: list[str]):
    from autograder.marks import read_marks

    return [read_marks(name) for name in names]


def _fresh(path: Path, what: str, force: bool) -> Path:
    """An output path that may be written: refuses an existing one without --force."""
    if path.exists() and not force:
        raise UsageError(f"{what} {path} exists; pass --force to replace it")
    if path.exists() and path.is_dir() != (what == "--out DIR"):
        kind = "a folder" if path.is_dir() else "a file"
        raise UsageError(f"{what} {path} is {kind}")
    _make_folder(path if what == "--out DIR" else path.parent, f"{what} {path}")
    return path


def _merge(args, course, notebooks) -> int:
    from autograder.marks import merge

    document = merge(_marks_files(args.shards))
    out = _fresh(Path(args.out), "--out", args.force)
    out.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    graded = sum(entry["graded"] for entry in document["submissions"])
    print(
        f"merged {len(args.shards)} shards into {out}: {len(document['submissions'])} "
        f"submissions, {graded} graded"
    )
    return 0


def _report(args, course, notebooks) -> int:
    from autograder.marks import combine
    from autograder.report import build_report, write_report

    files = _marks_files(args.marks)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file; give a folder for the report")
    taken = [out / name for name in ("index.html", "report.json") if (out / name).exists()]
    if taken and not args.force:
        raise UsageError(f"--out {out} already holds a report ({taken[0].name}); pass --force")
    if not 0 < args.threshold <= 1:
        raise UsageError(f"--threshold must be in (0, 1], got {args.threshold:g}")
    submissions, versions, notes = combine(files)
    feedback = args.feedback
    if feedback is None:
        recorded = {m.feedback_dir for m in files if m.feedback_dir}
        feedback = recorded.pop() if len(recorded) == 1 else None
    elif not Path(feedback).is_dir():
        raise UsageError(f"--feedback {feedback} is not a folder of feedback pages")
    roots = [Path(r) for r in args.root] + sorted({m.path.resolve().parent for m in files})
    report = build_report(
        submissions,
        versions=versions,
        notes=notes,
        roots=roots,
        feedback_dir=str(Path(feedback).resolve()) if feedback else None,
        similarity=not args.no_similarity,
        threshold=args.threshold,
    )
    _make_folder(out, f"--out {out}")
    write_report(report, out)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    print(
        f"{out / 'index.html'}: {report['graded']} of {report['submissions']} graded, "
        f"{len(report['reviews'])} review flags, {len(report['copies'])} similar pairs, "
        f"{len(report['companion'])} companion matches"
    )
    return 0


def _export(args, course, notebooks) -> int:
    from autograder.marks import combine

    if not args.csv and not args.gradebook:
        raise UsageError("export needs --csv FILE or --gradebook FILE (or both)")
    files = _marks_files(args.marks)
    submissions, _, notes = combine(files)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    roots = [m.path.resolve().parent for m in files]
    if args.csv:
        from autograder.gradebook import marks_table, write_csv

        target = _fresh(Path(args.csv), "--csv", args.force)
        rows = marks_table(submissions, course)
        write_csv(rows, target)
        print(f"{target}: {len(rows) - 1} learners, {len(rows[0]) - 2} columns of marks")
    if args.gradebook:
        from autograder.gradebook import export_gradebook

        db = Path(args.gradebook)
        if db.suffix != ".db":
            raise UsageError(f"--gradebook {db} should be nbgrader's gradebook.db file")
        _make_folder(db.parent, f"--gradebook {db}")
        copy_to = Path(args.autograded) if args.autograded else None
        for line in export_gradebook(
            submissions, course, db, force=args.force, copy_to=copy_to, roots=roots
        ):
            print(f"{db}: {line}")
    return 0


def _verify(args, course, notebooks) -> int:
    from autograder.grader.sandbox import resolve
    from autograder.verify import verify

    isolation = resolve("auto")
    print(f"verifying {course.root} and {notebooks} ...", flush=True)
    print(isolation.describe(), flush=True)
    report = verify(
        course,
        notebooks,
        jobs=args.jobs,
        timeout=args.timeout,
        isolation=isolation,
        only=args.chapter,
    )
    print(report)
    return 0 if report.passed else 1


def _book(args, course, notebooks) -> int:
    from autograder.book import build_book

    if args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {args.jobs}")
    result = build_book(
        course,
        notebooks,
        Path(args.out),
        fast=args.fast,
        jobs=args.jobs,
        timeout=args.timeout,
        log=lambda line: print(line, flush=True),
    )
    print(result.summary())
    return 0


def _translate(args, course, notebooks) -> int:
    from autograder import i18n

    english = Course_of(course)
    chapters = english.chapters()
    if args.chapter:
        chapters = [english.chapter(key) for key in args.chapter]
    total = 0
    for chapter in chapters:
        nb = chapter.read_source()
        path = i18n.catalog_path(english.root, chapter.name, args.lang)
        catalog = i18n.load_catalog(path, args.lang) if path.is_file() else None
        if args.action == "skeleton":
            new = i18n.skeleton(nb, catalog, args.lang)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(i18n.dump_catalog(new, chapter.name), encoding="utf-8")
            added = len(new.cells) - (len(catalog.cells) if catalog else 0)
            print(f"{path}: {len(new.cells)} entries ({added} new to translate)")
            continue
        if catalog is None:
            print(f"{chapter.name}: no catalog ({path}); start one with `translate skeleton`")
            total += 1
            continue
        if args.action == "stamp":
            stamped = i18n.stamp(nb, catalog, args.cell)
            path.write_text(i18n.dump_catalog(catalog, chapter.name), encoding="utf-8")
            print(f"{path}: stamped {len(stamped)} cells {' '.join(stamped)}".rstrip())
            continue
        found = i18n.problems(nb, catalog)
        total += len(found)
        sources = {c.get("id"): c["source"] for c in nb["cells"]}
        for problem in found:
            print(f"{chapter.name}: {problem}")
            if args.show and problem.cell in sources:
                print("    | " + sources[problem.cell].replace("\n", "\n    | "))
        if not found:
            print(f"{chapter.name}: complete and current ({len(catalog.cells)} cells)")
    return 1 if total and args.action == "status" else 0


def Course_of(course):  # noqa: N802 - the English course behind any edition
    from autograder.course import Course

    return Course(course.root)


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--course", metavar="DIR", help="nbgrader course root (default: ./course or the repo's)"
    )
    common.add_argument(
        "--notebooks", metavar="DIR", help="learner notebooks folder (default: next to the course)"
    )
    from autograder.i18n import LANGUAGES

    editions = ", ".join(f"{code} ({name})" for code, name in LANGUAGES.items())
    edition = argparse.ArgumentParser(add_help=False)
    edition.add_argument(
        "--lang",
        default="en",
        choices=sorted(LANGUAGES),
        help=f"the course's edition: {editions}; another edition's notebooks go to "
        "notebooks-LANG/ (default: en)",
    )
    parser = _Parser(
        prog="autograder",
        description="Release, grade and verify the PyTorch in Practice notebooks, and build its book.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(
        dest="command",
        metavar="{release,grade,merge,report,export,check,progress,check-service,verify,book,translate}",
        parser_class=_Parser,
    )
    parser.set_defaults(command=None)

    rel = sub.add_parser(
        "release", parents=[common, edition], help="regenerate notebooks/ with nbgrader"
    )
    rel.add_argument("--check", action="store_true", help="write nothing; exit 1 if out of date")
    rel.add_argument("--quiet", action="store_true", help="print only warnings")
    rel.add_argument(
        "--trust",
        action="store_true",
        help="sign the untouched notebooks (jupyter trust), as `make lab` does",
    )
    rel.add_argument(
        "--force", action="store_true", help="replace notebooks holding edits (backed up first)"
    )
    rel.set_defaults(run=_release)

    grade = sub.add_parser(
        "grade", parents=[common], help="grade learner notebooks with the hidden tests"
    )
    grade.add_argument(
        "paths", nargs="+", metavar="PATH", help="submitted .ipynb files, or folders of them"
    )
    grade.add_argument(
        "--json", action="store_true", help="print the results as JSON instead of tables"
    )
    grade.add_argument("--json-file", metavar="FILE", help="also write the results as JSON to FILE")
    grade.add_argument("--feedback", metavar="DIR", help="write an HTML feedback page per notebook")
    grade.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="parallel grading processes (default: CPU cores); progress goes to stderr",
    )
    grade.add_argument(
        "--timeout", type=float, default=60.0, metavar="S", help="seconds per cell (default: 60)"
    )
    grade.add_argument(
        "--submission-timeout",
        type=float,
        metavar="S",
        help="with --jobs: seconds per notebook before its process is killed "
        "(default: max(600, 20 x --timeout))",
    )
    grade.add_argument("--chapter", help="require this chapter (name or number), e.g. 04")
    grade.add_argument(
        "--shard",
        metavar="K/N",
        help="grade only the K-th of N shards of the inputs (every N-th, from the K-th; needs "
        "--json-file); join the N files with `autograder merge`",
    )
    grade.add_argument(
        "--no-fast", action="store_true", help="do not set COURSE_FAST=1 in the kernel"
    )
    grade.add_argument(
        "--memory", type=float, default=4.0, metavar="GIB", help="sandbox memory limit (default 4)"
    )
    grade.add_argument(
        "--processes", type=int, default=256, metavar="N", help="sandbox process limit (256)"
    )
    grade.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run learner code unconfined, as you (default: a bubblewrap sandbox with no "
        "course files, no home folder, no network, and memory and process limits)",
    )
    grade.set_defaults(run=_grade)

    chk = sub.add_parser(
        "check",
        parents=[common],
        help="check one exercise of a notebook with its hidden tests (what the lab's Check does)",
        description="Run one exercise's hidden tests on a notebook as saved and print the "
        "verdict grading would give it: points, and each failing check with its feedback. Only "
        "the cells the exercise needs run (the setup, the cells it reads names from, its "
        "solution and its tests), in the grading sandbox. The result is recorded in "
        "progress.json beside the notebook (see `autograder progress`).",
        epilog="examples:\n"
        "  python -m autograder check notebooks/04-training-loop.ipynb evaluate\n"
        "  python -m autograder check notebooks/04-training-loop.ipynb ResidualBlock --hint 2\n"
        "  python -m autograder check notebooks/04-training-loop.ipynb evaluate --json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    chk.add_argument("notebook", metavar="NOTEBOOK", help="the learner's .ipynb file")
    chk.add_argument(
        "exercise",
        metavar="EXERCISE",
        help="the exercise: its name (evaluate), grade_id (ch04_evaluate) or what it defines "
        "(ResidualBlock)",
    )
    chk.add_argument("--json", action="store_true", help="print the verdict as JSON")
    chk.add_argument(
        "--hint",
        type=int,
        default=0,
        choices=[0, 1, 2],
        help="hint steps to show for each failing check: 1 the contract clause it breaks, 2 also "
        "the chapter's section that teaches it (recorded in the progress file; default 0)",
    )
    chk.add_argument(
        "--timeout", type=float, default=60.0, metavar="S", help="seconds per cell (default: 60)"
    )
    chk.add_argument(
        "--no-record", action="store_true", help="do not write the result to progress.json"
    )
    chk.set_defaults(run=_check)

    srv = sub.add_parser(
        "check-server",
        parents=[common],
        help="answer checks on standard input, one JSON request per line (the lab's Check)",
    )
    srv.add_argument("--notebook", help="start a kernel for this notebook's chapter at once")
    srv.add_argument("--timeout", type=float, default=60.0, metavar="S", help="seconds per cell")
    srv.set_defaults(run=_check_server)

    svc = sub.add_parser(
        "check-service",
        parents=[common],
        help="serve Check over HTTP for a class whose machines lack the hidden tests",
        description="Answer POST /check (a notebook as JSON, an exercise) with the verdict "
        "`autograder check` gives, always in the grading sandbox. Learners' labs use it when "
        "their kernels have AUTOGRADER_CHECK_URL (http://HOST:PORT/check) and "
        "AUTOGRADER_CHECK_TOKEN set (JupyterHub: c.Spawner.environment). One line per check "
        "goes to stdout.",
    )
    svc.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    svc.add_argument("--port", type=int, default=8765, help="port (default: 8765)")
    svc.add_argument(
        "--token-file",
        required=True,
        metavar="FILE",
        help="a file holding the class's token (at least 16 characters; requests must carry it "
        "as 'Authorization: Bearer TOKEN')",
    )
    svc.add_argument("--jobs", type=int, default=1, metavar="N", help="checks at once (1)")
    svc.add_argument("--timeout", type=float, default=60.0, metavar="S", help="seconds per cell")
    svc.add_argument("--max-mb", type=float, default=32.0, help="largest request body (32 MB)")
    svc.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run learners' code unconfined, as you (only for a test on your own machine)",
    )
    svc.set_defaults(run=_check_service)

    prog = sub.add_parser(
        "progress",
        parents=[common, edition],
        help="your progress: each exercise's best points from Check, and the hints taken",
    )
    prog.add_argument(
        "folder",
        nargs="?",
        metavar="FOLDER",
        help="the folder of your notebooks and their progress.json (default: the edition's "
        "notebooks/ folder)",
    )
    prog.add_argument("--json", action="store_true", help="print the record as JSON")
    prog.set_defaults(run=_progress)

    mrg = sub.add_parser(
        "merge",
        help="join the marks files of `grade --shard K/N` into one, as a single run writes it",
    )
    mrg.add_argument("shards", nargs="+", metavar="SHARD.json", help="every shard's marks file")
    mrg.add_argument("--out", required=True, metavar="FILE", help="the merged marks file")
    mrg.add_argument("--force", action="store_true", help="replace FILE if it exists")
    mrg.set_defaults(run=_merge, course=None, notebooks=None)

    rep = sub.add_parser(
        "report",
        parents=[common],
        help="a class report (HTML and JSON): points, failing checks, hints, reviews, copying",
    )
    rep.add_argument("marks", nargs="+", metavar="MARKS.json", help="marks files of `grade`")
    rep.add_argument("--out", required=True, metavar="DIR", help="folder for index.html")
    rep.add_argument("--force", action="store_true", help="replace a report already in DIR")
    rep.add_argument(
        "--feedback",
        metavar="DIR",
        help="the feedback pages' folder, for the review links (default: the one grade wrote)",
    )
    rep.add_argument(
        "--root",
        action="append",
        default=[],
        metavar="DIR",
        help="where `grade` ran, to find the notebooks by their relative paths (repeatable)",
    )
    rep.add_argument(
        "--threshold",
        type=float,
        default=0.9,
        help="structural similarity from which code is listed as alike (default 0.9)",
    )
    rep.add_argument(
        "--no-similarity", action="store_true", help="do not compare the learners' code"
    )
    rep.set_defaults(run=_report)

    exp = sub.add_parser(
        "export",
        parents=[common],
        help="marks to a CSV table and/or nbgrader's gradebook.db (for formgrader)",
    )
    exp.add_argument("marks", nargs="+", metavar="MARKS.json", help="marks files of `grade`")
    exp.add_argument("--csv", metavar="FILE", help="one row per learner, a column per exercise")
    exp.add_argument("--gradebook", metavar="FILE", help="nbgrader's gradebook.db (made if new)")
    exp.add_argument(
        "--autograded",
        metavar="DIR",
        help="with --gradebook: copy each submission to DIR/<student>/<chapter>/ (nbgrader's "
        "autograded/ folder, which formgrader shows)",
    )
    exp.add_argument(
        "--force", action="store_true", help="replace the CSV, submissions in the gradebook, copies"
    )
    exp.set_defaults(run=_export)

    ver = sub.add_parser("verify", parents=[common, edition], help="check every chapter end to end")
    ver.add_argument("--jobs", type=int, metavar="N", help="parallel grading processes")
    ver.add_argument(
        "--chapter",
        action="append",
        metavar="NN",
        help="grade only this chapter (a number like 05 or a folder name; repeatable)",
    )
    ver.add_argument(
        "--timeout", type=float, default=120.0, metavar="S", help="seconds per cell (default: 120)"
    )
    ver.set_defaults(run=_verify)

    book = sub.add_parser(
        "book",
        parents=[common],
        help="build the course as a static HTML book with companion's API reference",
        description="Run every released notebook (notebooks/: what learners get, no solutions) "
        "and build, offline, a static site of the chapters and companion's API reference with "
        "Sphinx and MyST-NB; its links are checked and its pages leak-scanned. Open "
        "OUT/html/index.html in a browser, or serve OUT/html from any static host.",
    )
    book.add_argument(
        "--out", default="build/book", metavar="DIR", help="build folder (default: build/book)"
    )
    book.add_argument(
        "--fast", action="store_true", help="run the chapters in fast mode (COURSE_FAST=1)"
    )
    book.add_argument(
        "--jobs", type=int, default=2, metavar="N", help="chapters run side by side (default: 2)"
    )
    book.add_argument(
        "--timeout", type=int, default=600, metavar="S", help="seconds per cell (default: 600)"
    )
    book.set_defaults(run=_book)

    tr = sub.add_parser(
        "translate",
        parents=[common],
        help="keep another edition's catalogs complete and current",
        description="Each chapter's translation lives in course/translations/LANG/NN-name.yml, "
        "keyed by cell id, with a hash of the English cell it translates (see "
        "autograder/i18n.py). status: list missing, stale and untranslated cells (exit 1 if "
        "any). skeleton: add an entry for every cell that has none, with the English to "
        "translate. stamp: record that stale cells were revisited.",
    )
    tr.add_argument("action", choices=["status", "skeleton", "stamp"])
    tr.add_argument("--lang", default="zh", choices=sorted(set(LANGUAGES) - {"en"}))
    tr.add_argument("--chapter", action="append", metavar="NN", help="only this chapter")
    tr.add_argument("--cell", action="append", metavar="ID", help="stamp: only these cells")
    tr.add_argument(
        "--show", action="store_true", help="status: print the English text of each problem cell"
    )
    tr.set_defaults(run=_translate)
    return parser


if __name__ == "__main__":
    sys.exit(main())
