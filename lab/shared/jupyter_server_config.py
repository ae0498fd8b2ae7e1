"""Jupyter server settings for both course labs (`make lab` and `make instructor`).

The Makefile puts this folder on JUPYTER_CONFIG_PATH.
"""

from autograder.lab import encrypt_kernels

c = get_config()  # noqa: F821 (provided by traitlets when Jupyter loads this file)

# ipykernel 7 warns at every kernel start that its TCP traffic is not encrypted: give kernels
# CurveZMQ keys where jupyter_client, pyzmq and the kernelspec support them.
encrypt_kernels(c)
