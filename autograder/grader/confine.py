"""Launcher for a confined kernel: resource limits, a process-count group, then the sandbox.

``python -m autograder.grader.confine [--data BYTES] [--nproc N] [--fsize BYTES] [--cgroup DIR]
[--seccomp] -- COMMAND...`` sets the limits on itself, joins the control group ``DIR`` (made by
the grader, whose ``pids.max`` bounds the processes even for root, whom ``RLIMIT_NPROC`` does not
stop), and replaces itself with ``COMMAND`` (``bwrap ... python -m ipykernel_launcher ...``).
Every process the kernel starts inherits all of it. With ``--seccomp``, ``COMMAND`` is ``bwrap``
and gets ``--seccomp FD``: the filter of :func:`autograder.grader.sandbox.seccomp_filter`, in a
memory file that bwrap reads and closes before the kernel starts.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m autograder.grader.confine")
    parser.add_argument("--data", type=int, help="RLIMIT_DATA: bytes of memory")
    parser.add_argument("--nproc", type=int, help="RLIMIT_NPROC: processes of this user")
    parser.add_argument("--fsize", type=int, help="RLIMIT_FSIZE: bytes of one written file")
    parser.add_argument("--cgroup", help="a control group folder to join (cgroup.procs)")
    parser.add_argument(
        "--seccomp", action="store_true", help="pass bwrap (COMMAND) the sandbox's seccomp filter"
    )
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command to run")
    for limit, value in (
        (resource.RLIMIT_DATA, args.data),
        (resource.RLIMIT_NPROC, args.nproc),
        (resource.RLIMIT_FSIZE, args.fsize),
    ):
        if value:
            resource.setrlimit(limit, (value, value))
    if args.cgroup:
        with open(os.path.join(args.cgroup, "cgroup.procs"), "w") as handle:
            handle.write(str(os.getpid()))
    if args.seccomp:
        from autograder.grader.sandbox import seccomp_filter

        program = seccomp_filter()
        if program is not None:
            fd = os.memfd_create("autograder-seccomp", 0)
            os.write(fd, program)
            os.lseek(fd, 0, os.SEEK_SET)
            os.set_inheritable(fd, True)
            command = [command[0], "--seccomp", str(fd), *command[1:]]
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
