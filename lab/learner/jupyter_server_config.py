"""The learner's lab (`make lab`): nbgrader's Validate, without the instructor's tools.

The Makefile puts this folder on JUPYTER_CONFIG_PATH, ahead of `lab/shared`. nbgrader installs
four server extensions; a learner needs only `validate_assignment`. The formgrader manages a course
directory (`course/`, outside the learner's `notebooks/`, hence its "course directory root is not a
subdirectory" error), and the assignment and course lists need a JupyterHub exchange that a local
lab does not have. Their JupyterLab plugins are off too (`labconfig/page_config.json`).

The lab's kernels load `autograder.inlab`: under each exercise's tests, Check runs that exercise's
hidden tests in seconds, Hint climbs the hint ladder, Progress shows the course.
"""

from autograder.lab import learner_kernels

c = get_config()  # noqa: F821 (provided by traitlets when Jupyter loads this file)

c.ServerApp.jpserver_extensions = {
    "nbgrader.server_extensions.formgrader": False,
    "nbgrader.server_extensions.assignment_list": False,
    "nbgrader.server_extensions.course_list": False,
}

# Kernels that show Check, Hint and Progress under each exercise's tests (autograder/inlab.py).
learner_kernels(c)
