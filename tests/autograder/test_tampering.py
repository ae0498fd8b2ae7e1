"""Tampering the kernel-side harness notices: library patches, companion leftovers, crawls, signals.

Like test_harness.py, each test runs a script in a fresh Python process with the harness installed
as the grader installs it (companion, and so torch and numpy, imported first), plays the learner,
and prints what the harness reported.
"""

from __future__ import annotations

import json
import textwrap

from autograder.transport import load

from .test_harness import _run

LEARNER = """\
import __main__
harness._state["user_ns"] = vars(__main__)  # this script's globals play the learner's namespace
def report(label, flags):
    print(label, json.dumps(flags))
"""


def _flags(seen: dict, label: str) -> list[str]:
    return json.loads(seen[label])


def test_patched_library_callables_are_named_and_restored(tmp_path):
    seen = _run(
        LEARNER
        + textwrap.dedent(
            """
            import builtins, pickle, torch
            import torch.nn.functional as F
            scaler_class, step = torch.amp.GradScaler, torch.amp.GradScaler.step
            def wrap(step):  # a closure over the original, as a library's own wrappers are
                def step_and_update(self, optimizer, *args, **kwargs):
                    result = step(self, optimizer, *args, **kwargs)
                    self.update()
                    return result
                return step_and_update
            torch.amp.GradScaler.step = wrap(step)
            for owner, names in ((torch, ("allclose", "equal")), (pickle, ("dumps",))):
                for name in names:
                    setattr(owner, name, lambda *args, **kwargs: True)
            report("first", harness.reset())
            print("restored", torch.amp.GradScaler.step is step and torch.allclose.__module__
                  != "__main__" and pickle.dumps(1) != True)
            setattr(builtins, "abs", lambda value: 0)
            torch.amp.GradScaler = type("GradScaler", (scaler_class,), {})
            F.softmax.__code__ = (lambda input, dim=None, **kwargs: input).__code__
            torch.Tensor.allclose_to = lambda self, other: True
            companion.leak_report.LeakReport.leaking = property(lambda self: False)
            report("second", harness.reset())
            print("original", torch.amp.GradScaler is scaler_class and abs(-2) == 2
                  and not hasattr(torch.Tensor, "allclose_to"))
            """
        ),
        tmp_path,
    )
    assert _flags(seen, "first") == [
        "the code replaced pickle.dumps",
        "the code replaced torch.amp.GradScaler.step",
        "the code replaced torch.allclose",
        "the code replaced torch.equal",
    ]
    assert seen["restored"] == "True"
    second = _flags(seen, "second")
    for words in (
        "replaced builtins.abs",
        "replaced torch.amp.GradScaler",
        "added torch.Tensor.allclose_to",
        "replaced companion.leak_report.LeakReport.leaking",
        "replaced the code of torch.nn.functional.softmax",
    ):
        assert any(words in flag for flag in second), (words, second)
    assert seen["original"] == "True"


def test_what_libraries_do_by_themselves_is_not_flagged(tmp_path):
    # torch.optim wraps a class's step on its first instance (AdamW inherits Adam's), and
    # torch._dynamo wraps torch.manual_seed and every optimizer's _init_group when first used,
    # and replaces nn.Module.__init__ and __setstate__ by closures over them (generation
    # tagging: the first torch.export or torch.onnx.export does it, maybe inside a hidden test):
    # none of it is the learner's doing, also where torch is a protected module.
    seen = _run(
        LEARNER
        + textwrap.dedent(
            """
            import torch, torch._dynamo
            harness._state["modules"]["torch"] = (torch, dict(vars(torch)))  # as chapter 4's
            torch._dynamo.eval_frame.TorchPatcher.patch()
            torch._dynamo.mutation_guard.install_generation_tagging_init()
            report("dynamo", harness.reset())
            model = torch.nn.Linear(2, 1)
            for kind in (torch.optim.SGD, torch.optim.Adam, torch.optim.AdamW):
                optimizer = kind(model.parameters(), lr=0.1)
                model(torch.ones(1, 2)).sum().backward()
                optimizer.step()
            scaler = torch.amp.GradScaler("cpu")
            report("flags", harness.reset())
            import threading, tqdm.auto
            for _ in tqdm.auto.tqdm(range(3)):  # a first bar starts no monitor thread
                pass
            print("threads", sorted(t.name for t in threading.enumerate()))
            """
        ),
        tmp_path,
    )
    assert _flags(seen, "dynamo") == []
    assert _flags(seen, "flags") == []
    assert "tqdm_monitor" not in seen["threads"]


def test_a_hidden_input_run_while_a_library_was_patched_fails(tmp_path):
    base = tmp_path / "results"
    hidden = textwrap.dedent(
        """
        import torch
        from autograder.checks import hidden_test

        def _run(seed):
            scaler = torch.amp.GradScaler("cpu")
            return {"class": type(scaler).__qualname__, "step": step_once(scaler, seed)}

        hidden_test(_run, lambda got, seed: None, seeds=(0, 1))
        """
    )
    seen = _run(
        LEARNER
        + textwrap.dedent(
            f"""
            import torch
            class Mine(torch.amp.GradScaler):
                pass
            torch.amp.GradScaler = Mine  # replaced at cell time: restored before the tests
            def step_once(scaler, seed):
                if seed == 1:  # replaced while the learner's function runs: that input fails
                    torch.amp.GradScaler.update = lambda self, new_scale=None: None
                return seed
            harness.run_test("ch07_x_tests", "", {hidden!r}, {str(base)!r})
            print("after", torch.amp.GradScaler.update.__module__)
            """
        ),
        tmp_path,
    )
    data = load(base)
    first, second = data["probe"]
    assert first["data"] == {"class": "GradScaler", "step": 0}
    assert second["error"][0] == "TamperingSuspected"
    assert "torch.amp.GradScaler.update" in second["error"][1]
    assert "the code replaced torch.amp.GradScaler" in data["flags"]
    assert "the code replaced torch.amp.GradScaler.update" in data["flags"]
    assert seen["after"] == "torch.amp.grad_scaler"


def test_companion_leftovers_are_blocked_and_copied_tables_named(tmp_path):
    base = tmp_path / "results"
    hidden = textwrap.dedent(
        """
        from autograder.checks import hidden_test

        def _run(seed):
            try:
                return {"kept": kept(seed)}
            except Exception as exc:
                return {"kept": type(exc).__name__}

        hidden_test(_run, lambda got, seed: None, seeds=(0, 1))
        """
    )
    _run(
        LEARNER
        + textwrap.dedent(
            f"""
            import functools
            import companion.env
            # a companion closure made at cell time (the wrapper yours_or_reference returns)
            kept = companion.yours_or_reference(lambda seed: 1 / 0, lambda seed: seed)
            tables = {{"rules": list(companion.env._RULES), "same": companion.env._COMPILED}}
            harness.run_test("ch02_x_tests", "", {hidden!r}, {str(base)!r})
            """
        ),
        tmp_path,
    )
    data = load(base)
    assert [entry["data"]["kept"] for entry in data["probe"]] == ["ReferenceCallError"] * 2
    assert "the code copied the companion's data (companion.env._RULES)" in data["flags"]
    assert "the code copied the companion's data (companion.env._COMPILED)" in data["flags"]
    assert any("companion.notebook" in flag for flag in data["flags"])


def test_an_always_equal_tensor_is_not_called_a_copy_of_companion_data(tmp_path):
    """A tensor whose __eq__ says True to everything made two tensors "equal"
    companion.schedule._PER_STEP (two class names): the review named a copy the code never
    made. Equality with a companion table is now exact: same types, item by item."""
    base = tmp_path / "results"
    hidden = textwrap.dedent(
        """
        from autograder.checks import hidden_test

        hidden_test(lambda seed: {"n": seed}, lambda got, seed: None, seeds=(0,))
        """
    )
    _run(
        LEARNER
        + textwrap.dedent(
            f"""
            import torch
            import companion.schedule
            class Agreeable(torch.Tensor):  # its __eq__ says True to anything
                def __eq__(self, other):
                    return True

            pair = (torch.zeros(1).as_subclass(Agreeable), torch.ones(1).as_subclass(Agreeable))
            names = ("OneCycleLR", "CyclicLR")  # a real copy of the table, by value
            harness.run_test("ch02_x_tests", "", {hidden!r}, {str(base)!r})
            """
        ),
        tmp_path,
    )
    data = load(base)
    copies = [flag for flag in data["flags"] if "copied the companion's data" in flag]
    assert copies == ["the code copied the companion's data (companion.schedule._PER_STEP)"], data[
        "flags"
    ]


def test_crawls_for_notebooks_and_other_processes_are_flagged(tmp_path):
    seen = _run(
        LEARNER
        + textwrap.dedent(
            """
            import glob
            open("/proc/self/status").read()
            open("/proc/cpuinfo").read()
            os.listdir(".")
            report("honest", list(harness._state["violations"]))
            glob.glob("*/**/*.ipynb", recursive=True)
            os.listdir("/proc")
            try:
                open("/proc/1/cmdline", "rb").read()
            except OSError:
                pass
            try:
                open("solved.ipynb").read()
            except OSError:
                pass
            os.listdir("/")
            report("crawl", list(harness._state["violations"]))
            """
        ),
        tmp_path,
    )
    assert _flags(seen, "honest") == []
    crawl = _flags(seen, "crawl")
    assert any("glob" in f and "solved notebooks" in f for f in crawl), crawl
    assert any("listed '/proc'" in f for f in crawl), crawl
    assert any("read '/proc/1/cmdline'" in f for f in crawl), crawl
    assert any("opened 'solved.ipynb'" in f for f in crawl), crawl
    assert any("listed '/'" in f for f in crawl), crawl


def test_ignored_or_caught_stop_signals_are_flagged_and_undone(tmp_path):
    seen = _run(
        LEARNER
        + textwrap.dedent(
            """
            import signal
            from companion.signals import StopRequest
            with StopRequest():  # the companion's own polite handler: not the learner's doing
                pass
            report("honest", list(harness._state["violations"]) + harness.reset())
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGINT, signal.default_int_handler)
            signal.signal(signal.SIGTERM, lambda signum, frame: None)
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            report("tampered", list(harness._state["violations"]) + harness.reset())
            print("undone", signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
                  and signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, []))
            """
        ),
        tmp_path,
    )
    assert _flags(seen, "honest") == []
    tampered = _flags(seen, "tampered")
    assert "the code ignored SIGINT (signal.signal), so it cannot be stopped" in tampered
    assert "the code caught SIGTERM (signal.signal), so it cannot be stopped" in tampered
    assert "the code caught SIGTERM, so it cannot be stopped" in tampered
    assert any("pthread_sigmask" in flag for flag in tampered)
    assert seen["undone"] == "True"


def test_values_whose_comparisons_always_agree_are_flagged(tmp_path):
    base = tmp_path / "results"
    hidden = textwrap.dedent(
        """
        from autograder.checks import hidden_test

        hidden_test(lambda seed: answer(seed), lambda got, seed: None, seeds=(0, 1))
        """
    )
    _run(
        LEARNER
        + textwrap.dedent(
            f"""
            import torch
            class Agree(float):
                def __eq__(self, other):
                    return True
                __hash__ = float.__hash__
            class AgreeTensor(torch.Tensor):
                def allclose(self, *args, **kwargs):
                    return True
            class Report:  # an honest dataclass-like object: equal only to its equals
                def __eq__(self, other):
                    return isinstance(other, Report)
            def answer(seed):
                return [Agree(0.5), torch.zeros(2).as_subclass(AgreeTensor), Report(),
                        torch.nn.Parameter(torch.ones(1)), 0.5]
            harness.run_test("ch03_x_tests", "", {hidden!r}, {str(base)!r})
            """
        ),
        tmp_path,
    )
    flags = load(base)["flags"]
    assert "the code returned a float subclass (Agree), whose comparisons always agree" in flags
    assert (
        "the code returned a tensor subclass (AgreeTensor), whose comparisons always agree" in flags
    )
    assert not any("Report" in flag or "Parameter" in flag for flag in flags), flags
