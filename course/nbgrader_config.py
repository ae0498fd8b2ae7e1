"""nbgrader configuration of the PyTorch in Practice course.

Used by nbgrader's own workflow (run from this folder: ``cd course && nbgrader generate_assignment
04-training-loop``, ``nbgrader autograde 04-training-loop``, ``nbgrader formgrader``) and by
``python -m autograder release``, which runs the same preprocessors with this configuration.
"""

import os

c = get_config()  # noqa: F821 (provided by traitlets when nbgrader loads this file)
_root = os.path.dirname(os.path.abspath(__file__))

# Layout: course/source/<chapter>/<chapter>.ipynb, e.g. source/04-training-loop/04-training-loop.ipynb.
c.CourseDirectory.course_id = "pytorch-in-practice"
c.CourseDirectory.root = _root
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(_root, "gradebook.db")

# What a released stub holds in place of a solution (nbgrader's default, spelled out).
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# Released notebooks suit JupyterLab: Run All goes on past failing tests (they carry the
# raises-exception tag) and a notebook opens unmodified (ipykernel's language_info). `python -m
# autograder release` applies the same step after the same preprocessors. Named by import path,
# so the configuration stays plain data (the formgrader shows it).
from nbgrader.converters import GenerateAssignment  # noqa: E402

c.GenerateAssignment.preprocessors = [
    f"{step.__module__}.{step.__name__}" for step in GenerateAssignment.preprocessors.default()
] + ["autograder.lab.LabReady"]

# Where release_assignment/collect exchange notebooks. On one machine (`make instructor`, which
# creates it) a folder of the course; on a JupyterHub, the folder shared with the learners.
c.Exchange.root = os.path.join(_root, "exchange")

# Autograding runs each chapter end to end; set COURSE_FAST=1 in the environment to shrink the
# demonstration loops (the hidden tests do not depend on it).
c.Execute.timeout = 120
c.Execute.interrupt_on_timeout = True
