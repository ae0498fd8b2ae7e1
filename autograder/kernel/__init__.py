"""What runs inside the learner's kernel: the code a submission can reach and tamper with.

:mod:`autograder.kernel.harness` is installed in every grading kernel before the learner's first
cell; it guards the reference and runs the learner's half of each hidden test, and hands back
plain data through :mod:`autograder.transport`. It decides nothing: learner code runs beside it
and may change anything here, so nothing in this package may import from
:mod:`autograder.grader` (tests/autograder/test_layout.py checks it). It may use only the two
straddling modules, :mod:`autograder.checks` and :mod:`autograder.transport`.
"""
