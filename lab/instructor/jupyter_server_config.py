"""The instructor's lab (`make instructor`): the course source with all of nbgrader's tools.

The Makefile puts this folder on JUPYTER_CONFIG_PATH, ahead of `lab/shared`, and starts the lab
from `course/`, where nbgrader finds the course's own `nbgrader_config.py`.
"""

c = get_config()  # noqa: F821 (provided by traitlets when Jupyter loads this file)

# The formgrader's "Manage Assignments" page shows the loaded configuration as JSON in debug
# mode (its default); jupyter_server keeps part of that configuration as a value JSON cannot
# encode, so every visit printed "Formgrader config is not serializable" instead.
c.FormgradeExtension.debug = False
