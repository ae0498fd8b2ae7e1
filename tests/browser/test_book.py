"""The book (``make book``) in Chromium, served as any static host would serve it.

``make test`` builds the book in its own stage (full mode, timed) and hands it over in
``BOOK_HTML``; run alone, this builds it in fast mode into a temporary folder first.
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
import time
from pathlib import Path

import pytest

from autograder.book import API_GROUPS, build_book
from autograder.course import Course

from ._lab import ROOT

pytestmark = pytest.mark.requires_browser
CHAPTERS = [c.name for c in Course(ROOT / "course").chapters()]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    given = os.environ.get("BOOK_HTML")
    if given:
        folder = (ROOT / given) if not Path(given).is_absolute() else Path(given)
        assert (folder / "index.html").exists(), f"BOOK_HTML={given} holds no built book"
        return folder
    out = tmp_path_factory.mktemp("book")
    start = time.perf_counter()
    result = build_book(Course(ROOT / "course"), ROOT / "notebooks", out, fast=True, jobs=1)
    print(f"book built in fast mode in {time.perf_counter() - start:.0f} s")
    return result.html


@pytest.fixture(scope="module")
def served(site):
    """The site on a local static server (what any static host does)."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def book_page(browser, served):
    """A tab that records console errors, failed responses and requests that leave the host."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(30_000)
    page = context.new_page()
    page.problems = []
    page.on(
        "console",
        lambda m: page.problems.append(f"console: {m.text}") if m.type == "error" else None,
    )
    page.on("pageerror", lambda err: page.problems.append(f"uncaught: {err}"))
    page.on(
        "response",
        lambda r: page.problems.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None,
    )
    page.on(
        "request",
        lambda r: (
            None
            if r.url.startswith((served, "data:"))
            else page.problems.append(f"offsite: {r.url}")
        ),
    )
    yield page
    context.close()


def _open(page, url: str) -> None:
    page.problems.clear()
    page.goto(url, wait_until="networkidle")


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_each_chapter_page_shows_its_figures_and_links(book_page, served, chapter, artifacts):
    _open(book_page, f"{served}chapters/{chapter}.html")
    images = book_page.evaluate(
        "Array.from(document.querySelectorAll('article img'))"
        ".map(i => [i.getAttribute('src'), i.complete && i.naturalWidth > 0])"
    )
    assert all(ok for _, ok in images), f"images that did not load: {images}"
    links = book_page.evaluate(
        "Array.from(document.querySelectorAll('article a')).map(a => a.href)"
    )
    assert f"{served}_downloads/" in " ".join(links) and any(
        h.endswith(f"{chapter}.ipynb") for h in links
    )
    api = [h for h in links if "/api/" in h]
    assert api, "no link to the companion functions the chapter calls"
    text = book_page.inner_text("article")
    # a stub's test cell shows its code, never the NotImplementedError it raises
    assert book_page.locator(".output.traceback, .output.error").count() == 0
    assert "most recent call last" not in text
    assert "BEGIN SOLUTION" not in text and "CANARY" not in text
    book_page.screenshot(path=str(artifacts / f"book-{chapter}.png"))
    assert book_page.problems == []


def test_chapters_show_their_figures(book_page, served):
    """Six chapters draw pictures; the book would be a printout without them."""
    drawn = 0
    for chapter in CHAPTERS:
        _open(book_page, f"{served}chapters/{chapter}.html")
        drawn += book_page.evaluate("document.querySelectorAll('article img').length") > 0
    assert drawn >= 6


@pytest.mark.parametrize("query", ["GradScaler", "num_workers", "fit"])
def test_search_finds_api_names_and_chapter_topics(book_page, served, query):
    _open(book_page, f"{served}search.html?q={query}")
    book_page.wait_for_selector("#search-results .search li", timeout=30_000)
    found = book_page.inner_text("#search-results")
    assert "found" in found and "did not match any" not in found
    assert book_page.problems == []


def test_the_api_reference_lists_fit_with_its_signature_and_every_group(book_page, served):
    _open(book_page, f"{served}api/index.html")
    text = book_page.inner_text("article")
    for title, _ in API_GROUPS.values():
        assert title in text
    _open(book_page, f"{served}api/training.html")
    signature = book_page.inner_text("#companion\\.fit")
    assert signature.startswith("companion.fit(") and "num_epochs" in signature
    assert book_page.problems == []


def test_the_home_page_has_the_two_commands_and_every_chapter(book_page, served):
    _open(book_page, served)
    text = book_page.inner_text("article")
    assert "make lab" in text and "make test" in text
    hrefs = book_page.evaluate(
        "Array.from(document.querySelectorAll('article a')).map(a => a.href)"
    )
    for chapter in CHAPTERS:
        assert f"{served}chapters/{chapter}.html" in hrefs
    assert book_page.problems == []
