"""How long `import companion` takes, against `import torch` alone, side by side.

companion's core imports torch, numpy and tqdm; everything else (ONNX, matplotlib, torchvision,
scikit-learn) loads on first use. So `import companion` should cost little more than
`import torch`. Each round starts fresh interpreters for the two imports, in alternating order;
the table gives the medians and the ratio companion / torch (1.00: companion adds nothing).

Usage:
    python benchmarks/import_time.py            # 7 rounds
    python benchmarks/import_time.py --rounds 15
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

_HEAVY = ("onnx", "onnxruntime", "matplotlib", "torchvision", "sklearn", "IPython", "nbgrader")
_CHECK = (
    f"import sys, companion; heavy = [m for m in {_HEAVY!r} if m in sys.modules]; "
    "print(','.join(heavy))"
)


def _seconds(statement: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", statement], check=True)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="fresh-interpreter pairs (7)")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, got {args.rounds}")
    _seconds("import companion")  # warm the file cache once
    torch_s, companion_s = [], []
    for round_ in range(args.rounds):
        pair = [("torch", "import torch"), ("companion", "import companion")]
        for name, statement in pair if round_ % 2 == 0 else pair[::-1]:
            (torch_s if name == "torch" else companion_s).append(_seconds(statement))
    loaded = subprocess.run(
        [sys.executable, "-c", _CHECK], capture_output=True, text=True, check=True
    ).stdout.strip()
    t, c = statistics.median(torch_s), statistics.median(companion_s)
    print(f"{'import':<12}{'median s':>10}{'min s':>8}")
    print(f"{'torch':<12}{t:>10.2f}{min(torch_s):>8.2f}")
    print(f"{'companion':<12}{c:>10.2f}{min(companion_s):>8.2f}")
    print(f"ratio companion / torch: {c / t:.2f} (median of {args.rounds} rounds)")
    print(f"heavy modules loaded by `import companion`: {loaded or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
