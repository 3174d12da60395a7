"""Strict numbers in the Python API (docs/cli.md, "Numbers"): a count or size is an exact integer or an
error — a float count is a TypeError as in the original (never rounded), a size string reads the way
--memory-limit reads it ("1e9" is 10^9 bytes, never 1), and overflowing, negative or fractional values
are refused with the offending value quoted."""


import numpy as np
import pytest

import paulistrings as ps
from paulistrings import interop, io, truncation
from paulistrings import _run_args


def test_counts_are_integers_never_rounded():
    assert truncation.topn(10**7) is not None
    for bad in (1e7, 2.5, "10"):
        with pytest.raises(TypeError):
            truncation.topn(bad)
    with pytest.raises(OverflowError):
        truncation.topn(-1)
    with pytest.raises(OverflowError):
        truncation.topn(2**64)
    with pytest.raises(TypeError):
        ps.PauliSum(3.0)


def test_memory_limit_strings_read_like_the_command_line():
    assert _run_args._parse_size("1e9") == 10**9
    assert _run_args._parse_size("1.5G") == 3 << 29
    assert _run_args._parse_size("64KiB") == 65536
    assert _run_args._parse_size("512M") == 512 << 20
    assert _run_args._parse_size(1024) == 1024
    for bad, reason in (("12Q", "is not a byte size"), ("1.3K", "is not a whole number"),
                        ("-1G", "is negative"), (" 2G", "is not a byte size"), ("2G ", "is not a byte size"),
                        ("99999999999999999999999G", "is too large"), ("nan", "is not a byte size")):
        with pytest.raises(ValueError, match=f"memory_limit: '{bad}' {reason}"):
            _run_args._parse_size(bad)
    with pytest.raises(OverflowError):
        _run_args._parse_size(2**64)
    with pytest.raises(TypeError):
        _run_args._parse_size(1.5e9)


def test_rayon_num_threads_is_a_count_or_ignored(monkeypatch):
    for text, threads in (("4", 4), ("0", 0), ("007", 7), ("4_0", 0), ("-2", 0), (" 4", 0), ("4.0", 0),
                          ("1e2", 0), ("99999999999", 0), ("", 0)):
        monkeypatch.setenv("RAYON_NUM_THREADS", text)
        assert _run_args._threads(None) == threads, text


def test_circuit_readers_take_integer_qubit_counts():
    text = 'OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[2];\nh q[0];\n'
    assert interop.circuit_from_qasm(text, num_qubits=np.int64(3)).num_qubits == 3
    with pytest.raises(TypeError):
        interop.circuit_from_qasm(text, num_qubits=2.9)
    with pytest.raises(OverflowError):
        interop.circuit_from_qasm(text, num_qubits=-1)


def test_npz_counts_and_words_are_integers(tmp_path):
    good = dict(format="paulistrings-npz-v1", x=np.array([[1]], np.uint64), z=np.array([[0]], np.uint64),
                coefficients=np.array([0.5], np.complex128))
    np.savez(tmp_path / "ok.npz", num_qubits=np.int64(2), **good)
    assert io.load(tmp_path / "ok.npz").num_qubits == 2
    np.savez(tmp_path / "float_n.npz", num_qubits=np.float64(2.7), **good)
    with pytest.raises(ValueError, match="'num_qubits' must be a non-negative integer"):
        io.load(tmp_path / "float_n.npz")
    np.savez(tmp_path / "negative_n.npz", num_qubits=np.int64(-2), **good)
    with pytest.raises(ValueError, match="'num_qubits' must be a non-negative integer"):
        io.load(tmp_path / "negative_n.npz")
    fields = dict(good, num_qubits=np.int64(2))
    fields["x"] = np.array([[1.5]])
    np.savez(tmp_path / "float_x.npz", **fields)
    with pytest.raises(ValueError, match="'x' must hold unsigned 64-bit words"):
        io.load(tmp_path / "float_x.npz")
    fields["x"] = np.array([[-1]], np.int64)
    np.savez(tmp_path / "negative_x.npz", **fields)
    with pytest.raises(ValueError, match="'x' must hold unsigned 64-bit words"):
        io.load(tmp_path / "negative_x.npz")
    fields["x"] = np.array([[1]], np.int64)  # signed but exact: read as before
    np.savez(tmp_path / "signed_x.npz", **fields)
    assert io.load(tmp_path / "signed_x.npz").num_qubits == 2
