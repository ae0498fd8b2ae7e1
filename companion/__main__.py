"""Command line: ``python -m companion <command>`` (or the ``companion`` console script).

Commands:
    doctor     check the installation: versions, devices, a matmul on each device
    diagnose   explain an error message: its likely cause and the fix

Each command is one ``_add_<name>`` function that builds its subparser and sets the function
that runs it, so a new command (``train``, ``export``) is one more such pair.
"""

from __future__ import annotations

import argparse
import sys

_EPILOG = """examples:
  python -m companion doctor            check this installation (exit 1 if a check fails)
  python -m companion doctor --json     the same report as JSON
  python -m companion diagnose "RuntimeError: CUDA error: device-side assert triggered"
"""


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _run_doctor(args: argparse.Namespace) -> int:
    from companion.env import doctor

    report = doctor(size=args.size, matmul=not args.no_matmul, verbose=False)
    print(report.to_json() if args.json else report)
    return 0 if report.ok else 1


def _add_doctor(commands) -> None:
    parser = commands.add_parser(
        "doctor",
        help="check the installation: versions, devices, a matmul on each device",
        description=(
            "Run the three self-checks after installing PyTorch: versions (Python, torch, "
            "torchvision, CUDA runtime, cuDNN, NVIDIA driver), the devices PyTorch can use "
            "(CUDA, MPS, CPU), and a matrix multiplication on each, checked against float64 "
            "on the CPU and timed. A missing GPU is SKIP, not a failure. Exit status: 0 when "
            "nothing FAILs, 1 otherwise."
        ),
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--size",
        type=_positive_int,
        default=512,
        help="matrix size for the matmul check (default: 512)",
    )
    parser.add_argument(
        "--no-matmul",
        action="store_true",
        help="skip the matmul checks (versions and devices only)",
    )
    parser.set_defaults(run=_run_doctor)


def _run_diagnose(args: argparse.Namespace) -> int:
    from companion.env import diagnose

    if args.message:
        text = " ".join(args.message)
    else:  # a pasted traceback may hold any bytes (a log file, another encoding)
        raw = getattr(sys.stdin, "buffer", None)  # None for a text-only stream (StringIO)
        text = raw.read().decode("utf-8", errors="replace") if raw else sys.stdin.read()
    result = diagnose(text)
    if args.json:
        import json

        print(json.dumps(result.to_dict(), indent=2))
    else:
        print(result)
    return 0


def _add_diagnose(commands) -> None:
    parser = commands.add_parser(
        "diagnose",
        help="explain an error message: its likely cause and the fix",
        description=(
            "Match an error message against the common environment errors (CPU-only wheel, "
            "driver too old, out of memory, device-side assert, DataLoader worker killed, ...) "
            "and print the likely cause and the fix. Reads the message from the arguments, or "
            "from standard input when there are none (paste a traceback, then Ctrl-D)."
        ),
    )
    parser.add_argument("message", nargs="*", help="the error message (default: read stdin)")
    parser.add_argument("--json", action="store_true", help="print the diagnosis as JSON")
    parser.set_defaults(run=_run_diagnose)


def build_parser() -> argparse.ArgumentParser:
    """The ``companion`` argument parser, with one subparser per command."""
    parser = argparse.ArgumentParser(
        prog="python -m companion",
        description="Tools of the PyTorch in Practice companion library.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", metavar="<command>")
    _add_doctor(commands)
    _add_diagnose(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); returns the exit status.

    Example:
        >>> main(["doctor", "--no-matmul"])  # doctest: +SKIP
        0
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
