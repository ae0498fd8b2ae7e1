"""Run a submission's cells in a fresh ipykernel with nbclient: timeouts, crashes and verdicts.

Policy (documented in the README):

- Every cell has a timeout. When it expires the kernel is interrupted; if it does not come back
  within a short grace period (code that swallows ``KeyboardInterrupt``), it is restarted.
- When the kernel dies (``os._exit``, a segfault, out of memory) or has to be restarted, the grader
  starts a new one, replays the cells that ran before (all but test cells and the cells that hung
  or crashed) and carries on after the cell that killed it. Only the exercise that cell belongs to
  loses its points. After ``max_restarts`` restarts the remaining exercises are not run, and say so.
- A test step's results come back as a data file (:mod:`autograder.transport`), never as printed
  output: the grader (:mod:`autograder.grader.judge`) decides in its own process whether they pass.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from autograder.grader.sandbox import Isolation, kernel_command, release_cgroup
from autograder.transport import TransportError, load

__all__ = ["GradingError", "Step", "StepOutcome", "WarmKernel", "run_steps", "start_warm"]

_TIMEOUT_ENAME = "CellTimeout"
_INTERRUPT_GRACE_S = 5.0
# what a cell printed that `autograder verify` refuses in the course's own source
_DEPRECATED = re.compile(r"\b(DeprecationWarning|FutureWarning)\b")
OUTPUT_LIMIT_BYTES = 8 * 2**20  # what one cell may print before it is stopped


class GradingError(RuntimeError):
    """The grader itself could not run a submission (no kernel could be started)."""


@dataclass(frozen=True)
class Step:
    """One unit of execution.

    Attributes:
        kind: ``"cell"`` (learner or teaching code, run as it is) or ``"test"`` (a test cell, run
            by the harness from the source's version).
        source: the code (for a cell) or the test's grade_id (for a test).
        label: how messages name it ("your solution cell for train_one_epoch", "cell 12").
        grade_id: the nbgrader grade_id, when the cell has one.
    """

    kind: str
    source: str
    label: str
    grade_id: str | None = None


@dataclass
class StepOutcome:
    """What happened when a step ran.

    ``status`` is one of ``ok``, ``error``, ``timeout``, ``died``, ``not-run``;
    ``ename``/``evalue`` describe the error (never a traceback). For a test step, ``data`` holds
    the results the kernel wrote (see :func:`autograder.kernel.harness.run_test`), or None when it
    wrote none (then ``ename``/``evalue`` say why).
    """

    status: str
    passed: bool | None = None
    ename: str = ""
    evalue: str = ""
    flags: list[str] = field(default_factory=list)
    stdout: str = field(default="", repr=False)
    warnings: list[str] = field(default_factory=list, repr=False)
    data: dict | None = field(default=None, repr=False)


@dataclass
class RunReport:
    """Outcomes of every step, plus notes on restarts for the instructor."""

    outcomes: list[StepOutcome]
    notes: list[str]
    restarts: int


async def run_steps(
    steps: list[Step],
    tests: dict[str, tuple[str, str]],
    *,
    protect: list[str],
    references: tuple[str, ...] = ("companion",),
    isolation: Isolation | None = None,
    course_root: Path | None = None,
    timeout: float,
    env: dict[str, str] | None = None,
    max_restarts: int = 3,
    startup_timeout: float = 60.0,
    warm: WarmKernel | None = None,
) -> RunReport:
    """Run ``steps`` in order in a fresh kernel, restarting it after crashes and hangs.

    Args:
        steps: what to run.
        tests: every test cell's ``(visible source, hidden source)`` by grade_id, sent to the
            kernel only when that test step runs.
        protect: modules whose attributes the harness restores before each test.
        references: packages whose code the harness keeps out of the learner's reach.
        isolation: how kernels are confined (see :mod:`autograder.grader.sandbox`); None:
            unconfined.
        course_root: the course folder, which a confined kernel must not see.
        timeout: seconds each step may run.
        env: extra environment variables for the kernel.
        max_restarts: kernel restarts allowed before the remaining steps are given up.
        startup_timeout: seconds to wait for a kernel to start.
        warm: a kernel started ahead with :func:`start_warm` for the same ``protect``,
            ``references``, ``isolation``, ``course_root``, ``timeout`` and ``env``: the first
            steps run there (a kernel that starts after a crash is a new one, as usual). It is
            used up either way. The steps it ran ahead (``warm.ran``) are not run again: they
            must be the first of ``steps``.

    Returns:
        A :class:`RunReport` with one :class:`StepOutcome` per step.

    Raises:
        GradingError: if no kernel can be started or the harness cannot be installed.
    """
    outcomes: list[StepOutcome | None] = [None] * len(steps)
    notes: list[str] = []
    skip: set[int] = set()
    restarts, position = 0, 0
    warm_folder = warm.folder if warm is not None else None
    if warm is not None and warm.ran:
        ahead = [step for step, _ in warm.ran]
        if steps[: len(ahead)] != ahead:
            raise ValueError("warm: the kernel ran other steps ahead than the first of these")
        for index, (_, outcome) in enumerate(warm.ran):
            outcomes[index] = outcome
        position = len(ahead)
    with tempfile.TemporaryDirectory(prefix="autograder-") as workdir:
        work = Path(warm.work) if warm is not None else Path(workdir)
        while position < len(steps):
            if warm is not None:  # it ran the steps before ``position`` ahead: none replayed
                session, warm, replayed = warm.session, None, position
                session.tests = tests
            else:
                replayed = 0
                session = _Session(
                    work, tests, (protect, references), timeout, env or {}, startup_timeout
                )
                session.isolation = isolation or Isolation("none")
                session.course_root = course_root
            try:
                if not session.alive:
                    await session.start()
                broken = False
                for index in range(replayed, position):
                    if steps[index].kind != "cell" or index in skip:
                        continue
                    replay = await session.run(steps[index])
                    if replay.status in ("died", "timeout") and not session.alive:
                        skip.add(index)
                        notes.append(f"the kernel died again while re-running {steps[index].label}")
                        broken = True
                        break
                while not broken and position < len(steps):
                    outcome = await session.run(steps[position])
                    outcomes[position] = outcome
                    position += 1
                    if not session.alive:
                        skip.add(position - 1)
                        what = "died" if outcome.status == "died" else "was stuck and restarted"
                        notes.append(f"the kernel {what} while running {steps[position - 1].label}")
                        break
            finally:
                await session.close()
            if position < len(steps):
                restarts += 1
                if restarts > max_restarts:
                    reason = (
                        f"not run: the kernel died or hung {restarts} times (last while running "
                        f"{steps[position - 1].label}); fix that cell and grade again"
                    )
                    for index in range(position, len(steps)):
                        outcomes[index] = StepOutcome("not-run", ename="NotRun", evalue=reason)
                    break
    if warm_folder is not None:
        warm_folder.cleanup()
    final = [o if o is not None else StepOutcome("not-run") for o in outcomes]
    return RunReport(final, notes, restarts)


@dataclass
class WarmKernel:
    """A kernel started, harness installed, before the steps it will run are known.

    Made by :func:`start_warm`; handed to :func:`run_steps` once (``warm=``), or closed with
    :meth:`close` when it is not needed. Its folder goes with it. ``ran`` holds the steps it ran
    ahead (``start_warm(ahead=...)``) with their outcomes: a run it is handed to must begin with
    exactly those steps.
    """

    session: _Session
    work: str
    folder: tempfile.TemporaryDirectory
    ran: list[tuple[Step, StepOutcome]] = field(default_factory=list)

    async def close(self) -> None:
        """Shut the kernel down and remove its folder."""
        await self.session.close()
        self.folder.cleanup()


async def start_warm(
    *,
    protect: list[str],
    references: tuple[str, ...] = ("companion",),
    isolation: Isolation | None = None,
    course_root: Path | None = None,
    timeout: float,
    env: dict[str, str] | None = None,
    startup_timeout: float = 60.0,
    ahead: list[Step] | tuple[Step, ...] = (),
) -> WarmKernel:
    """Start a kernel for :func:`run_steps` ahead of time (arguments as there), and run the
    ``ahead`` cells in it (the first steps of the run it is meant for, all of kind ``"cell"``).

    Raises:
        GradingError: if no kernel can be started or the harness cannot be installed, or if a
            cell run ahead killed the kernel or hung (the run then starts from scratch).
    """
    if any(step.kind != "cell" for step in ahead):
        raise ValueError(f"ahead: only cells run ahead, got {[s.kind for s in ahead]}")
    folder = tempfile.TemporaryDirectory(prefix="autograder-")
    session = _Session(
        Path(folder.name), {}, (protect, references), timeout, env or {}, startup_timeout
    )
    session.isolation = isolation or Isolation("none")
    session.course_root = course_root
    warm = WarmKernel(session, folder.name, folder)
    try:
        await session.start()
        for step in ahead:
            outcome = await session.run(step)
            warm.ran.append((step, outcome))
            if not session.alive:
                raise GradingError(f"the kernel died or hung while running {step.label} ahead")
    except BaseException:
        await session.close()
        folder.cleanup()
        raise
    return warm


class _Session:
    """One kernel: start, install the harness, run steps, tell whether it is still usable."""

    def __init__(self, work: Path, tests, protect, timeout, env, startup_timeout):
        self.work, self.tests, self.protect = work, tests, protect
        self.timeout, self.env, self.startup_timeout = timeout, env, startup_timeout
        self.client = None
        self.alive = False
        self._output: _KernelOutput | None = None
        self._cgroup = None
        self.isolation = Isolation("none")
        self.course_root = None

    async def start(self) -> None:
        import nbformat
        from jupyter_client.manager import AsyncKernelManager

        cwd = self.work / "cwd"
        ipc = self.work / "ipc"
        for folder in (cwd, ipc):
            folder.mkdir(exist_ok=True)
        argv, env, self._cgroup = kernel_command(
            self.isolation, self.work, self.env, self.course_root
        )
        confined = self.isolation.confined
        km = AsyncKernelManager(
            kernel_name="python3", kernel_spec_manager=_spec_manager(argv, confined)
        )
        if confined:  # the sandbox has no network: kernel and grader talk over Unix sockets
            km.transport = "ipc"
            km.ip = str(ipc / "k")
            km.connection_file = str(ipc / f"kernel-{secrets.token_hex(4)}.json")
        self.client = _LimitedClient(
            nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("")]),
            km=km,
            timeout=int(max(1, round(self.timeout))),
            startup_timeout=int(self.startup_timeout),
            interrupt_on_timeout=True,
            error_on_timeout={
                "ename": _TIMEOUT_ENAME,
                "evalue": f"stopped after {self.timeout:g} s",
            },
            allow_errors=True,
            record_timing=False,
            iopub_timeout=4,
            resources={"metadata": {"path": str(cwd)}},
        )
        # The kernel's stdout and stderr: a pipe drained here, not a file, so the descriptors it
        # inherits reach nothing of the grader's (a file could be reopened through /proc/self/fd)
        self._output = _KernelOutput()
        try:
            try:
                await self.client.async_start_new_kernel(
                    env=env, stdout=self._output.fd, stderr=self._output.fd
                )
            finally:
                self._output.started()
            await self.client.async_start_new_kernel_client()
        except Exception as exc:
            said = self._output.tail()
            why = f"; it said: {said}" if said else ""
            raise GradingError(f"could not start a Python kernel: {exc}{why}") from exc
        self.alive = True
        payload = self.work / "ipc" / f"payload-{secrets.token_hex(8)}.json"
        protect, references = self.protect
        payload.write_text(json.dumps({"protect": protect, "references": list(references)}))
        code = f"__import__('autograder.kernel.harness', fromlist=['_']).install({str(payload)!r})"
        # preparing imports the chapter's packages: on a busy machine that can take longer than
        # a learner's cell may, so it has the kernel's start-up time
        self.client.timeout = int(max(self.timeout, self.startup_timeout))
        try:
            outcome = await self._execute(code, store_history=False)
        finally:
            self.client.timeout = int(max(1, round(self.timeout)))
        if outcome.status != "ok":
            raise GradingError(
                f"could not prepare the kernel for grading ({outcome.ename}: {outcome.evalue}); "
                "is the autograder installed in this Python environment?"
            )

    async def run(self, step: Step) -> StepOutcome:
        if step.kind == "test":
            return await self._run_test(step)
        return await self._execute(step.source, store_history=True)

    async def _run_test(self, step: Step) -> StepOutcome:
        visible, hidden = self.tests[step.source]
        base = str(self.work / "ipc" / f"results-{secrets.token_hex(16)}")
        code = (
            "__import__('autograder.kernel.harness', fromlist=['_']).run_test("
            f"{step.source!r}, {visible!r}, {hidden!r}, {base!r})"
        )
        outcome = await self._execute(code, store_history=False)
        # a test that printed past the limit fails even when it finished before the interrupt
        # reached it (its results may exist then, but were not obtained within the rules)
        if outcome.status in ("died", "timeout") or outcome.ename == "OutputLimit":
            outcome.passed = False
            for suffix in (".pt", ".json"):
                Path(base + suffix).unlink(missing_ok=True)
            return outcome
        try:
            data = load(base)
        except TransportError as exc:
            if outcome.status == "error":  # the harness call itself failed
                return StepOutcome(
                    "error", passed=False, ename=outcome.ename, evalue=outcome.evalue
                )
            return StepOutcome(
                "error",
                passed=False,
                ename="NoResult",
                evalue=f"the tests' results could not be read ({exc})",
                flags=["the test results file was missing or not plain data (tampering?)"],
            )
        finally:
            for suffix in (".pt", ".json"):
                Path(base + suffix).unlink(missing_ok=True)
        if not isinstance(data, dict) or data.get("grade_id") != step.source:
            return StepOutcome(
                "error",
                passed=False,
                ename="TamperingSuspected",
                evalue="the tests' results were not written by the grader",
                flags=["the test results file was forged"],
            )
        return StepOutcome("ok", data=data)

    async def _execute(self, code: str, *, store_history: bool) -> StepOutcome:
        import nbformat
        from nbclient.exceptions import CellTimeoutError, DeadKernelError

        client = self.client
        cell = nbformat.v4.new_code_cell(code)
        replies: list[dict] = []
        client.on_cell_executed = lambda **kw: replies.append(kw.get("execute_reply") or {})
        client.output_bytes, client.output_stopped = 0, False
        try:
            await client.async_execute_cell(cell, 0, store_history=store_history)
        except DeadKernelError:
            self.alive = False
            return StepOutcome("died", ename="KernelDied", evalue=await self._death_reason())
        except CellTimeoutError:
            return await self._after_timeout()
        content = (replies[-1] if replies else {}).get("content", {})
        if content.get("ename") == _TIMEOUT_ENAME:
            return await self._after_timeout()
        if client.output_stopped:
            await self._drain()
            return StepOutcome(
                "error",
                ename="OutputLimit",
                evalue=(
                    f"the cell printed more than {OUTPUT_LIMIT_BYTES // 2**20} MB and was stopped: "
                    "print a summary, not every value inside a loop"
                ),
            )
        stdout = "".join(
            o.get("text", "")
            for o in cell.outputs
            if o.get("output_type") == "stream" and o.get("name") == "stdout"
        )
        warned = [
            line.strip()
            for o in cell.outputs
            if o.get("output_type") == "stream"
            for line in o.get("text", "").splitlines()
            if _DEPRECATED.search(line)
        ]
        errors = [o for o in cell.outputs if o.get("output_type") == "error"]
        if content.get("status") == "ok" and not errors:
            return StepOutcome("ok", stdout=stdout, warnings=warned)
        first = errors[0] if errors else content
        ename, evalue = str(first.get("ename", "Error")), str(first.get("evalue", ""))
        return StepOutcome("error", ename=ename, evalue=evalue, stdout=stdout, warnings=warned)

    async def _after_timeout(self) -> StepOutcome:
        """The kernel was interrupted; keep it if it answers, else mark it for restart."""
        evalue = (
            f"the cell ran for more than {self.timeout:g} s and was stopped: is there an "
            "infinite loop, or a loop over far more data than needed?"
        )
        try:
            await asyncio.wait_for(
                self.client.kc.kernel_info(reply=True, timeout=_INTERRUPT_GRACE_S),
                _INTERRUPT_GRACE_S + 1,
            )
            await self._drain()
        except Exception:  # no reply: the code ignored the interrupt
            self.alive = False
            evalue += " (it ignored the interrupt, so the kernel was restarted)"
        return StepOutcome("timeout", ename="TimeoutError", evalue=evalue)

    async def _drain(self) -> None:
        """Drop messages left over from an interrupted cell."""
        from queue import Empty

        for channel in (self.client.kc.shell_channel, self.client.kc.iopub_channel):
            while True:
                try:
                    await channel.get_msg(timeout=0.2)
                except (Empty, asyncio.TimeoutError):
                    break

    async def _death_reason(self) -> str:
        code = None
        try:
            provisioner = self.client.km.provisioner
            code = await provisioner.poll() if provisioner is not None else None
        except Exception:  # the kernel is gone; the exit code is only a nicety
            code = None
        detail = f" (exit code {code})" if code is not None else ""
        return (
            f"the Python kernel died{detail}: does the code call os._exit(), or crash the "
            "interpreter (a segfault, running out of memory)?"
        )

    async def close(self) -> None:
        client, self.client = self.client, None
        if client is not None:
            try:
                if client.kc is not None:
                    client.kc.stop_channels()
                if client.km is not None and client.km.has_kernel:
                    await client.km.shutdown_kernel(now=True)
            except Exception:  # best effort: the kernel exits with its parent anyway
                pass
        if self._output is not None:
            self._output.close()
            self._output = None
        release_cgroup(self._cgroup)
        self._cgroup = None


class _KernelOutput:
    """A pipe for a kernel's stdout and stderr, drained by a thread that keeps the last 64 KB."""

    LIMIT = 64 * 1024

    def __init__(self):
        self._read, self.fd = os.pipe()
        self._kept = bytearray()
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        try:
            while chunk := os.read(self._read, 65536):
                self._kept += chunk
                del self._kept[: max(0, len(self._kept) - self.LIMIT)]
        finally:  # every writer is gone (the kernel and whatever it started)
            os.close(self._read)

    def started(self) -> None:
        """The kernel holds the write end now: close ours, so the pipe ends when the kernel does."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def tail(self, wait: float = 2.0) -> str:
        """The last non-empty line the kernel wrote (waiting up to ``wait`` s for it to exit)."""
        self._thread.join(wait)
        lines = self._kept.decode("utf-8", "replace").splitlines()
        lines = [line.strip() for line in lines if line.strip()]
        return lines[-1][:300] if lines else ""

    def close(self) -> None:
        self.started()


def _spec_manager(argv: list[str], confined: bool = False):
    """A kernel spec manager whose ``python3`` is this interpreter (the venv's), run by ``argv``."""
    from jupyter_client.kernelspec import KernelSpec, KernelSpecManager

    class _ThisPython(KernelSpecManager):
        def get_kernel_spec(self, kernel_name):
            return KernelSpec(
                argv=list(argv),
                display_name="Python 3 (autograder)",
                language="python",
                resource_dir="",
                # signals do not cross the sandbox's process namespace reliably; messages do
                interrupt_mode="message" if confined else "signal",
            )

    return _ThisPython()


def _limited_client_class():
    from nbclient import NotebookClient

    class LimitedClient(NotebookClient):
        """nbclient, but a cell that prints too much is stopped instead of filling memory."""

        output_bytes = 0
        output_stopped = False

        def output(self, outs, msg, display_id, cell_index):
            content = msg.get("content", {})
            size = len(str(content.get("text", ""))) + sum(
                len(str(v)) for v in content.get("data", {}).values()
            )
            self.output_bytes += size
            if self.output_bytes > OUTPUT_LIMIT_BYTES:
                if not self.output_stopped:
                    self.output_stopped = True
                    asyncio.ensure_future(self.km.interrupt_kernel())
                return None
            return super().output(outs, msg, display_id, cell_index)

    return LimitedClient


def _LimitedClient(*args, **kwargs):  # noqa: N802 (a class, made on first use)
    return _limited_client_class()(*args, **kwargs)
