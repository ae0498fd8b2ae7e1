"""nbgrader's configuration for the Validate button of the learner's lab (`make lab`).

Validate runs the whole notebook in a fresh kernel, as grading does. nbgrader reads this file from
the folders on JUPYTER_CONFIG_PATH; the instructor's configuration is `course/nbgrader_config.py`.
"""

from autograder.lab import encrypt_kernels

c = get_config()  # noqa: F821 (provided by traitlets when nbgrader loads this file)

# The course's own limit per cell (course/nbgrader_config.py, `autograder grade --timeout`):
# nbgrader's default of 30 s interrupts a chapter's longest cell on a busy machine.
c.Execute.timeout = 120
c.Execute.interrupt_on_timeout = True

# Validate starts its kernel itself: the same encrypted channels as the lab's kernels.
encrypt_kernels(c)
