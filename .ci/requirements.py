"""Print the project's requirements for a second test environment, one per line.

Reads them from the installed project's metadata (pyproject.toml, via the main venv), keeps the
base dependencies and the extras asked for, and leaves out the packages named with --without.
The Makefile's `oldest` environment uses it: torch pinned to the oldest tested release, no
torchvision (PyPI's torchvision does not import beside the torch 2.13 CPU wheel).

    .venv/bin/python .ci/requirements.py --extra dev --without torch torchvision
"""

from __future__ import annotations

import argparse
import re
from importlib.metadata import requires

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_EXTRA = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extra", action="append", default=[], help="an extra to include")
    parser.add_argument("--without", nargs="*", default=[], help="package names to leave out")
    args = parser.parse_args()
    for line in requires("pytorch-in-practice") or []:
        spec, _, marker = line.partition(";")
        extra = _EXTRA.search(marker)
        if extra and extra.group(1) not in args.extra:
            continue
        name = _NAME.match(spec).group(1).lower().replace("_", "-")
        if name not in {w.lower() for w in args.without}:
            print(spec.strip().replace(" ", ""))


if __name__ == "__main__":
    main()
