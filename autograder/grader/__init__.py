"""What decides grades, in the grader's own process, which learner code never reaches.

:mod:`~autograder.grader.grade` merges a submission with the source and scores it,
:mod:`~autograder.grader.execute` drives the kernel (confined by :mod:`~autograder.grader.sandbox`
and :mod:`~autograder.grader.confine`), :mod:`~autograder.grader.judge` reaches each verdict by
running the instructor's ``check`` halves on the data the kernel wrote, and
:mod:`~autograder.grader.pool` grades many notebooks at once. Its only input from a kernel is
that data, read by :func:`autograder.transport.load` (``weights_only`` tensors or JSON), so
nothing a submission writes runs here. The kernel side (:mod:`autograder.kernel`) never imports
this package.
"""
