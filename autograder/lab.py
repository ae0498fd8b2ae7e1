"""JupyterLab as learners use it: released notebooks that behave there, and quiet kernels.

A released notebook needs two things, applied by ``python -m autograder release`` and, through ``course/nbgrader_config.py``,
by nbgrader's own ``generate_assignment``, so both workflows still give the same cells:

- **Run All reaches the end.** Every test cell gets the ``raises-exception`` tag. JupyterLab (and
  nbclient) then keep executing after a test that fails, which on a fresh notebook is every test:
  the exercises are stubs that raise ``NotImplementedError``, and later cells fall back to the
  companion's reference. Errors still show in the test cell, and grading, nbgrader's Validate and
  autograde ignore the tag: they record every test's outcome whatever it is.
- **The notebook opens unmodified.** On connecting, JupyterLab writes the kernel's
  ``language_info`` into the notebook and marks it modified unless it is already exactly that.
  The released notebook carries ipykernel's ``language_info`` for the Python that releases it,
  which under ``make lab`` is the Python of the learner's kernel.

:func:`encrypt_kernels` is for the configuration of the course's labs (``lab/``).
``LabReady`` is built on first use, so importing this module does not load nbgrader.
"""

from __future__ import annotations

import functools
import sys

__all__ = [
    "RUN_ALL_TAG",
    "LabReady",
    "current_python",
    "encrypt_kernels",
    "language_info",
    "learner_kernels",
]

RUN_ALL_TAG = "raises-exception"
LabReady: type  # the nbgrader preprocessor, built by the module's __getattr__ on first use


def learner_kernels(config) -> None:
    """Give the learner's lab kernels that show Check under each exercise's tests.

    The lab's Python kernels start with the IPython extension :mod:`autograder.inlab` (Check,
    hints, progress). Nothing else about them changes; nbgrader's Validate starts its own
    kernels and does not load it.

    Args:
        config: the traitlets ``Config`` of the learner lab's ``jupyter_server_config.py``.
    """
    config.ServerApp.kernel_spec_manager_class = "autograder.lab.LearnerKernelSpecs"


@functools.cache
def _learner_kernel_specs():
    from jupyter_client.kernelspec import KernelSpecManager

    class LearnerKernelSpecs(KernelSpecManager):
        """Kernel specs whose ipykernel kernels load :mod:`autograder.inlab`."""

        def get_kernel_spec(self, kernel_name):
            spec = super().get_kernel_spec(kernel_name)
            if spec.language == "python" and any("ipykernel" in part for part in spec.argv):
                extension = "--IPKernelApp.extra_extensions=autograder.inlab"
                if extension not in spec.argv:
                    spec.argv = [*spec.argv, extension]
            return spec

    return LearnerKernelSpecs


def current_python() -> str:
    """This interpreter's version as ipykernel reports it (``"3.11.7"``, ``"3.13.0rc1"``).

    Example:
        >>> current_python().count(".")
        2
    """
    return sys.version.split()[0]


def language_info(version: str | None = None) -> dict:
    """The ``language_info`` that ipykernel's Python kernel reports, for Python ``version``.

    Args:
        version: the kernel's Python version; None for this interpreter's.

    Returns:
        A new dict, equal to ``ipykernel.ipkernel.IPythonKernel.language_info`` for that version
        (a test keeps the two equal).

    Example:
        >>> language_info("3.12.1")["version"], language_info("3.12.1")["pygments_lexer"]
        ('3.12.1', 'ipython3')
    """
    return {
        "codemirror_mode": {"name": "ipython", "version": 3},
        "file_extension": ".py",
        "mimetype": "text/x-python",
        "name": "python",
        "nbconvert_exporter": "python",
        "pygments_lexer": "ipython3",
        "version": version or current_python(),
    }


def encrypt_kernels(config) -> bool:
    """Ask jupyter_client to give kernels CurveZMQ keys, where every piece supports it.

    The course's labs (``lab/``) and the learner's Validate call it from their configuration.
    A kernel talks to its server over TCP on this machine; with keys that traffic is encrypted,
    and ipykernel (7 and later) no longer warns about it in the terminal at every kernel start.
    Kernels whose kernelspec does not declare support are started as before.

    Args:
        config: the traitlets ``Config`` of a config file (``c = get_config()``).

    Returns:
        True when the setting was made; False with a jupyter_client or pyzmq that cannot do it.

    Example:
        >>> from traitlets.config import Config
        >>> c = Config()
        >>> encrypt_kernels(c) == (c.KernelManager.get("transport_encryption") == "auto")
        True
    """
    try:
        import zmq
        from jupyter_client.manager import KernelManager
    except ImportError:
        return False
    if not (KernelManager.class_traits().get("transport_encryption") and zmq.has("curve")):
        return False
    config.KernelManager.transport_encryption = "auto"
    return True


def __getattr__(name: str):
    if name == "LabReady":
        return _lab_ready()
    if name == "LearnerKernelSpecs":
        return _learner_kernel_specs()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def _lab_ready() -> type:
    from nbgrader import utils
    from nbgrader.preprocessors import NbGraderPreprocessor
    from traitlets import Unicode

    class LabReady(NbGraderPreprocessor):
        """Tag every test cell ``raises-exception`` and set ipykernel's ``language_info``.

        Example:
            In ``nbgrader_config.py``, after nbgrader's own steps::

                c.GenerateAssignment.preprocessors = [
                    *GenerateAssignment.preprocessors.default(), LabReady
                ]
        """

        python_version = Unicode(
            "", help="Python version written into language_info; empty for this interpreter's"
        ).tag(config=True)

        def preprocess(self, nb, resources):
            nb.metadata["language_info"] = language_info(self.python_version or None)
            return super().preprocess(nb, resources)

        def preprocess_cell(self, cell, resources, index):
            if cell.cell_type == "code" and utils.is_grade(cell):
                tags = list(cell.metadata.get("tags", []))
                if RUN_ALL_TAG not in tags:
                    cell.metadata["tags"] = [*tags, RUN_ALL_TAG]
            return cell, resources

    LabReady.__module__, LabReady.__qualname__ = __name__, "LabReady"
    return LabReady
