"""The lab server's log: which lines the browser tests report as trouble (no browser needed)."""

from __future__ import annotations

from ._lab import LabServer

# ipykernel 7.4's traceback when a kernel publishes its status after its IOPub pipe closed, as the
# learner's lab printed it after closing chapter 9 (paths shortened).
SHUTDOWN_RACE = (
    "ERROR:tornado.general:Uncaught exception in ZMQStream callback\n"
    "Traceback (most recent call last):\n"
    '  File "/venv/lib/python3.11/site-packages/zmq/eventloop/zmqstream.py", line 585, in _log_error\n'
    "    f.result()\n"
    '  File "/venv/lib/python3.11/site-packages/ipykernel/kernelbase.py", line 372, in dispatch_control\n'
    "    await self.process_control(msg)\n"
    '  File "/venv/lib/python3.11/site-packages/ipykernel/kernelbase.py", line 409, in process_control\n'
    '    self._publish_status_and_flush("idle", "control", self.control_stream)\n'
    '  File "/venv/lib/python3.11/site-packages/ipykernel/kernelbase.py", line 718, in _publish_status_and_flush\n'
    "    self._publish_status(status, channel, parent)\n"
    '  File "/venv/lib/python3.11/site-packages/ipykernel/kernelbase.py", line 708, in _publish_status\n'
    "    self.session.send(\n"
    '  File "/venv/lib/python3.11/site-packages/jupyter_client/session.py", line 867, in send\n'
    "    stream.send_multipart(to_send, copy=copy)\n"
    '  File "/venv/lib/python3.11/site-packages/ipykernel/iostream.py", line 434, in send_multipart\n'
    "    return self.io_thread.send_multipart(*args, **kwargs)\n"
    "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
    '  File "/venv/lib/python3.11/site-packages/ipykernel/iostream.py", line 352, in send_multipart\n'
    "    self.schedule(lambda: self._really_send(*args, **kwargs))\n"
    '  File "/venv/lib/python3.11/site-packages/ipykernel/iostream.py", line 343, in schedule\n'
    '    self._event_pipe.send(b"")\n'
    '  File "/venv/lib/python3.11/site-packages/zmq/sugar/socket.py", line 713, in send\n'
    "    return super().send(data, flags=flags, copy=copy, track=track)\n"
    "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
    '  File "zmq/backend/cython/_zmq.py", line 1152, in zmq.backend.cython._zmq.Socket.send\n'
    '  File "zmq/backend/cython/_zmq.py", line 1200, in zmq.backend.cython._zmq.Socket.send\n'
    '  File "zmq/backend/cython/_zmq.py", line 1473, in zmq.backend.cython._zmq._send_copy\n'
    '  File "zmq/backend/cython/_zmq.py", line 1468, in zmq.backend.cython._zmq._send_copy\n'
    '  File "zmq/backend/cython/_zmq.py", line 190, in zmq.backend.cython._zmq._check_rc\n'
    "zmq.error.ZMQError: Socket operation on non-socket\n"
)


def test_trouble_leaves_out_the_kernel_shutdown_race_and_keeps_other_tracebacks(tmp_path):
    lab = LabServer(tmp_path, tmp_path, [], tmp_path)
    other = "ERROR:tornado.general:Uncaught exception in ZMQStream callback\n"
    other += "Traceback (most recent call last):\n"
    other += '  File "/venv/site-packages/jupyter_server/x.py", line 1, in f\n'
    other += "ValueError: something else\n"
    lab.log_path.write_text(
        "[I 03:25:04 ServerApp] Kernel shutdown: 50d48ed8\n"
        + SHUTDOWN_RACE
        + other
        + "[W 03:26:00 ServerApp] a warning\n",
        encoding="utf-8",
    )
    assert lab.trouble() == [
        "ERROR:tornado.general:Uncaught exception in ZMQStream callback",
        "Traceback (most recent call last):",
        "[W 03:26:00 ServerApp] a warning",
    ]
