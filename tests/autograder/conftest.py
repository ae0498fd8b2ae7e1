"""Fixtures for the autograder tests: a tiny released course built in a temporary folder."""

from __future__ import annotations

import pytest

from autograder.course import Course
from autograder.release import release

from .fixture_course import build_course, load


@pytest.fixture(scope="session")
def demo(tmp_path_factory):
    """(Course, notebooks dir, released 01-demo stub as JSON) of a freshly released fixture course."""
    root = tmp_path_factory.mktemp("demo-course")
    course_dir, notebooks = build_course(root)
    course = Course(course_dir)
    release(course, notebooks)
    return course, notebooks, load(notebooks / "01-demo.ipynb")
