"""The GIL is released during propagation, and Ctrl-C (SIGINT) interrupts a long propagate with
KeyboardInterrupt, leaving the interpreter usable.

Each long run below would take many seconds if it were not interrupted; the tests trigger the
interrupt as soon as propagation is known to be running (a threading.Event set from a logging
handler at DEBUG, or from a profile hook on the call into the engine) — no fixed sleeps.
"""

import logging
import signal
import sys
import threading
import time

import pytest

from paulistrings import Circuit, Parameter, PauliSum, _core

N = 10


def brickwork(steps, n=N):
    c = Circuit(n)
    for layer in range(steps):
        for q in range(n):
            c.rx(0.7, q)
        for q in range(layer % 2, n - 1, 2):
            c.pauli_rotation("ZZ", [q, q + 1], 0.9)
    return c


def observable(n=N):
    return PauliSum.from_strings({"Z" * n: 1.0})


class EventOnDebug(logging.Handler):
    def __init__(self, event):
        super().__init__(level=logging.DEBUG)
        self.event = event

    def emit(self, record):
        if record.levelno == logging.DEBUG:
            self.event.set()


def send_sigint_when(event, deadline=60.0):
    def run():
        if event.wait(deadline):
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def check_interpreter_usable():
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    small = Circuit(1)
    small.rz(0.3, 0)
    out = PauliSum.from_strings({"X": 1.0}).propagate(small, direction="heisenberg")
    assert out.coefficients() == [0.955336489125606, -0.29552020666133955]
    assert sum(range(10)) == 45


def test_gil_is_released_during_propagate():
    c = brickwork(16)  # a couple of hundred layers of ~10^5 terms: well over 50 ms
    result = {}

    def work():
        result["start"] = time.monotonic()
        result["sum"] = observable().propagate(c, direction="heisenberg", threads=1)
        result["end"] = time.monotonic()

    worker = threading.Thread(target=work)
    ticks = []
    worker.start()
    while worker.is_alive():
        ticks.append(time.monotonic())
        sum(range(200))
    worker.join()
    assert result["end"] - result["start"] > 0.05
    during = [t for t in ticks if result["start"] < t < result["end"]]
    # The main thread kept running Python code all through the run (it would be starved if the
    # worker held the GIL for the whole propagate).
    assert len(during) > 100
    assert during[-1] - during[0] > 0.8 * (result["end"] - result["start"]) - 0.01
    assert len(result["sum"]) > 1000


def assert_ctrl_c_stops_and_checkpoints(run, path):
    """Sends SIGINT once the engine logs its first layer (DEBUG logging on); ``run()`` must raise
    KeyboardInterrupt within 10 s, after writing the checkpoint ``path``, and leave the interpreter
    usable."""
    started = threading.Event()
    handler = EventOnDebug(started)
    logger = logging.getLogger("paulistrings.propagate")
    old_level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    sender = send_sigint_when(started)
    began = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            run()
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
        started.set()
        sender.join()
    assert time.monotonic() - began < 10
    # the run stopped inside the engine, which wrote the state it had reached
    assert path.exists()
    check_interpreter_usable()


def test_ctrl_c_interrupts_with_debug_logging_and_checkpoints(tmp_path):
    c = brickwork(2000)  # ~30 000 layers: minutes if not interrupted
    path = tmp_path / "interrupted.ckpt"
    assert_ctrl_c_stops_and_checkpoints(
        lambda: observable().propagate(c, direction="heisenberg", threads=1, checkpoint=path), path)


def test_ctrl_c_stops_a_sweep_with_its_checkpoint(tmp_path):
    c = brickwork(2000)
    c.rx(Parameter("th"), 0)
    path = tmp_path / "sweep.ckpt"
    assert_ctrl_c_stops_and_checkpoints(
        lambda: observable().propagate(c, direction="heisenberg", threads=1, checkpoint=path,
                                       sweep={"th": [0.1, 0.2]}), path)


def test_ctrl_c_interrupts_without_logging(tmp_path):
    c = brickwork(2000)
    entered = threading.Event()
    engine_call = _core.propagate

    def profile(frame, event, arg):
        if event == "c_call" and arg is engine_call:
            entered.set()  # the next thing the main thread does is enter the engine

    path = tmp_path / "poll.ckpt"
    sender = send_sigint_when(entered)
    began = time.monotonic()
    sys.setprofile(profile)
    try:
        with pytest.raises(KeyboardInterrupt):
            observable().propagate(c, direction="heisenberg", threads=1, checkpoint=path)
    finally:
        sys.setprofile(None)
        entered.set()
        sender.join()
    assert time.monotonic() - began < 10
    assert path.exists()  # stopped by the engine's own poll, after a layer, with a checkpoint
    check_interpreter_usable()


def test_resume_after_interrupt_finishes_the_run(tmp_path):
    c = brickwork(12)
    full = observable().propagate(c, direction="heisenberg")
    started = threading.Event()
    handler = EventOnDebug(started)
    logger = logging.getLogger("paulistrings.propagate")
    old_level = logger.level
    path = tmp_path / "resume.ckpt"
    # a slow observer: every DEBUG record sleeps 1 ms, so the 160-layer run outlasts the signal
    slow = logging.Handler(level=logging.DEBUG)
    slow.emit = lambda record: time.sleep(0.001)
    logger.addHandler(handler)
    logger.addHandler(slow)
    logger.setLevel(logging.DEBUG)
    sender = send_sigint_when(started)
    try:
        with pytest.raises(KeyboardInterrupt):
            observable().propagate(c, direction="heisenberg", threads=1, checkpoint=path)
    finally:
        logger.removeHandler(handler)
        logger.removeHandler(slow)
        logger.setLevel(old_level)
        started.set()
        sender.join()
    assert path.exists()
    resumed, stats = observable().propagate_with_stats(c, direction="heisenberg", resume=path)
    assert 0 < stats.layers < len(c)
    a, b = resumed.coefficients_array(), full.coefficients_array()
    assert len(a) == len(b)
    assert (resumed.x_array() == full.x_array()).all()
    assert max(abs(a - b)) < 1e-12
