"""Shared pytest setup for the package's tests."""

import signal

import pytest


@pytest.fixture(autouse=True)
def python_sigint_handler():
    """Python's own SIGINT handler during each test. A shell starts a background job with SIGINT
    ignored, and Python then installs no handler of its own; the Ctrl-C tests (test_threads_signals.py,
    test_partitions.py) send SIGINT and expect KeyboardInterrupt, as in a terminal."""
    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)
