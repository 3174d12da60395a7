"""The original's Python surface, item by item: names, constructors, accessors, arithmetic,
reprs, and the exception type (and message) for bad arguments."""

import inspect
import math
import subprocess
import sys

import numpy as np
import pytest

import paulistrings
from paulistrings import Circuit, PauliString, PauliSum, gates, noise, p, truncation


# ---------------------------------------------------------------- module surface


def test_top_level_names():
    for name in ("Circuit", "PauliString", "PauliSum", "p", "PropagationStats", "PartitionStats",
                 "DEFAULT_SMALL_SUM_THRESHOLD", "gates", "noise", "truncation", "interop", "io",
                 "mpi_available", "cuda_available", "numa_nodes", "reset_log_cache", "GpuPauliSum",
                 "diagonal_echo", "Channel", "Truncation"):
        assert hasattr(paulistrings, name), name
    assert isinstance(paulistrings.DEFAULT_SMALL_SUM_THRESHOLD, int)
    assert paulistrings.reset_log_cache() is None


def test_factory_module_names():
    for name in ("h", "s", "sdg", "x", "y", "z", "cnot", "cz", "swap", "rz", "rx", "ry", "pauli_rotation",
                 "unitary_1q", "unitary_2q"):
        assert callable(getattr(gates, name))
    for name in ("depolarize", "dephase", "amplitude_damping", "pauli_channel", "depolarize2"):
        assert callable(getattr(noise, name))
    for name in ("coeff", "weight", "topn", "approx_topn", "collapse_sample"):
        assert callable(getattr(truncation, name))
    for name in ("load_task", "circuit_from_json", "circuit_from_stim", "circuit_from_qiskit",
                 "stabilizers_from_stim", "circuit_from_qasm", "Task"):
        assert hasattr(paulistrings.interop, name)
    assert paulistrings.io.FORMAT == "paulistrings-npz-v1"


def test_build_features_and_numa_nodes():
    assert paulistrings.cuda_available() is (paulistrings._core.cuda_device_count() > 0)  # test_gpu.py
    # comm= needs the MPI build with mpi4py's headers (test_partitions.py runs it), and mpi4py installed.
    import importlib.util

    assert paulistrings.mpi_available() is (
        bool(paulistrings._core.mpi) and importlib.util.find_spec("mpi4py") is not None
    )
    nodes = paulistrings.numa_nodes()
    assert nodes and all(isinstance(cpus, list) and cpus for cpus in nodes)
    flat = [c for cpus in nodes for c in cpus]
    assert len(flat) == len(set(flat))
    import os

    assert set(flat) <= set(os.sched_getaffinity(0))
    for cpus in nodes:
        assert cpus == sorted(cpus)


def test_import_does_not_pull_optional_dependencies():
    probe = subprocess.run(
        [sys.executable, "-c", "import paulistrings, sys; print(any(m in sys.modules for m in "
                               "('mpi4py', 'stim', 'qiskit', 'matplotlib')))"],
        capture_output=True, text=True, check=True,
    )
    assert probe.stdout.strip() == "False"


def test_propagate_signature_follows_the_original():
    params = list(inspect.signature(PauliSum.propagate).parameters)
    assert params[:14] == ["self", "circuit", "policy", "direction", "target_bucket_len", "min_buckets",
                           "partitions", "pin_memory", "partition_row_seed", "partition_row_blocks",
                           "partition_row_exclude", "comm", "result", "device"]
    sig = inspect.signature(PauliSum.propagate)
    assert sig.parameters["direction"].default is None
    assert sig.parameters["result"].default == "gather"
    assert sig.parameters["pin_memory"].default is True
    for extra in ("threads", "checkpoint", "checkpoint_every", "resume", "memory_limit", "auto_truncate"):
        assert sig.parameters[extra].kind is inspect.Parameter.KEYWORD_ONLY
    assert list(inspect.signature(PauliSum.propagate_with_stats).parameters) == params


# ---------------------------------------------------------------- PauliString


def test_pauli_string_constructors_and_attributes():
    s = PauliString.from_label("XIZY")
    assert s.num_qubits == 4 and s.weight == 3 and s.label == "XIZY"
    assert str(s) == repr(s) == "XIZY"
    assert p("XIZY") == s and hash(p("XIZY")) == hash(s)
    assert PauliString.identity(3).label == "III"
    assert PauliString.x(1, 3).label == "IXI"
    assert PauliString.y(0, 2).label == "YI"
    assert PauliString.z(2, 3).label == "IIZ"
    assert p("XI") != p("XII")
    assert p("X") != "X"
    assert len({p("XY"), p("XY"), p("YX")}) == 2


def test_pauli_string_products():
    phase, product = p("X").mul(p("Z"))
    assert phase == -1j and product == p("Y")
    phase, product = p("Z").mul(p("X"))
    assert phase == 1j and product == p("Y")
    assert p("XX").commutes_with(p("ZZ"))
    assert p("XI").anticommutes_with(p("ZI"))
    assert p("X").commutator(p("Z")) == (-2j, p("Y"))
    assert p("X").anticommutator(p("Z")) == (0j, p("Y"))
    assert p("XX").commutator(p("ZZ")) == (0j, p("YY"))
    assert p("XX").anticommutator(p("ZZ"))[0] == -2
    assert p("Y").mul(p("Y")) == (1, p("I"))


def test_pauli_string_times_coefficient_is_a_sum():
    s = p("XZ") * 0.5
    assert isinstance(s, PauliSum) and s.num_qubits == 2 and s.coefficients() == [0.5 + 0j]
    assert (2j * p("Y")).coefficients() == [2j]
    assert len(p("X") * 0) == 0
    big = p("I" * 99 + "X") * 1.5
    assert big.width == 2 and big.coefficients() == [1.5 + 0j]


def test_pauli_string_errors():
    with pytest.raises(ValueError, match="character"):
        p("XA")
    with pytest.raises(ValueError, match="out of range for a 3-qubit Pauli string"):
        PauliString.x(3, 3)
    with pytest.raises(ValueError, match="1024"):
        PauliString.identity(1025)
    with pytest.raises(ValueError, match="num_qubits mismatch"):
        p("X").mul(p("XX"))
    with pytest.raises(TypeError):
        p("X").commutes_with("X")
    with pytest.raises(TypeError):
        PauliString()
    with pytest.raises(TypeError):
        p(5)
    with pytest.raises(TypeError):
        p("X") * "a"


# ---------------------------------------------------------------- PauliSum construction


def test_empty_sum_and_width_dispatch():
    for n, w in ((1, 1), (64, 1), (65, 2), (128, 2), (129, 4), (256, 4), (300, 8), (600, 16), (1024, 16)):
        s = PauliSum(n)
        assert s.num_qubits == n and len(s) == 0 and s.width == w
    with pytest.raises(ValueError, match=r"num_qubits exceeds largest monomorphized width \(1024\)"):
        PauliSum(1025)
    with pytest.raises(OverflowError):
        PauliSum(-1)
    with pytest.raises(TypeError):
        PauliSum(2.0)


def test_from_strings_dict_and_sequences():
    s = PauliSum.from_strings({"XII": 1.0, "ZII": 0.5}, num_qubits=3)
    assert len(s) == 2 and s.num_qubits == 3
    assert s.coefficients() == [0.5 + 0j, 1.0 + 0j]  # ZII (x=0) sorts before XII (x=1)
    t = PauliSum.from_strings(["XII", "ZII", "XII"], [1.0, 0.5, 2.0])
    assert t.num_qubits == 3 and t.coefficients() == [0.5 + 0j, 3.0 + 0j]
    u = PauliSum.from_strings(["X", "X"], [1.0, -1.0])
    assert len(u) == 0  # exact cancellation dropped
    assert PauliSum.from_strings({"Y": 1.0}).coefficients() == [1 + 0j]
    assert PauliSum.from_strings({"XI": np.float64(2), "ZI": np.int64(3), "YI": True}).coefficients() == [3, 2, 1]
    # the original's early positional form from_strings(terms, num_qubits)
    assert PauliSum.from_strings({"XI": 1.0}, 2).num_qubits == 2
    # sparse labels (this implementation's extension) on many qubits
    sparse = PauliSum.from_strings({"Z62": 1.0, "X0 Y100": 0.5}, num_qubits=127)
    dense = PauliSum.from_strings({"I" * 62 + "Z" + "I" * 64: 1.0, "X" + "I" * 99 + "Y" + "I" * 26: 0.5})
    assert sparse.coefficients() == dense.coefficients()
    assert (sparse.x_array() == dense.x_array()).all() and (sparse.z_array() == dense.z_array()).all()


def test_from_strings_storage_is_real_until_needed():
    assert not PauliSum.from_strings({"XY": 1.0}).is_complex
    s = PauliSum.from_strings({"XY": 1.0 + 1e-300j})
    assert s.is_complex
    assert s.coefficients_array().dtype == np.complex128
    t = PauliSum.from_strings({"XY": 2.0}) * 1j
    assert t.is_complex
    assert not (t * -1j).is_complex  # back to real storage once every imaginary part is zero
    assert PauliSum.from_strings({"XY": 2.0}).coefficients_array().dtype == np.complex128


def test_from_strings_errors():
    with pytest.raises(ValueError, match=r'Pauli string "XI" has length 2, expected 3 \(length must match num_qubits\)'):
        PauliSum.from_strings({"XI": 1.0}, num_qubits=3)
    with pytest.raises(ValueError, match=r"unexpected Pauli character 'A' \(expected I/X/Y/Z\)"):
        PauliSum.from_strings({"AB": 1.0}, num_qubits=2)
    with pytest.raises(ValueError, match="1024"):
        PauliSum.from_strings({"X": 1.0}, num_qubits=1025)
    with pytest.raises(TypeError, match="not a dict plus coefficients"):
        PauliSum.from_strings({"X": 1.0}, [1.0])
    with pytest.raises(TypeError, match="keys must be str"):
        PauliSum.from_strings({1: 1.0}, num_qubits=1)
    with pytest.raises(TypeError, match="expected complex, float, or int coefficient"):
        PauliSum.from_strings({"X": "1"})
    with pytest.raises(TypeError, match="expected complex, float, or int coefficient"):
        PauliSum.from_strings({"X": None})
    with pytest.raises(ValueError, match="num_qubits"):
        PauliSum.from_strings({})
    with pytest.raises(ValueError, match="2 labels but 1 coefficients"):
        PauliSum.from_strings(["X", "Y"], [1.0])
    with pytest.raises(TypeError):
        PauliSum.from_strings(["X"])
    with pytest.raises(ValueError):
        PauliSum.from_strings({"Z7": 1.0}, num_qubits=4)  # sparse label out of range


def test_repr():
    assert repr(PauliSum(3)) == "0"
    s = PauliSum.from_strings({"XII": 1.0, "ZII": 0.5})
    assert repr(s) == "0.5*ZII + 1.0*XII"
    c = PauliSum.from_strings({"X": 1 + 2j, "Z": complex(0.0, -0.5)})
    assert repr(c) == "(0.0-0.5j)*Z + (1.0+2.0j)*X"
    many = PauliSum.from_strings({"".join(t): 1.0 for t in ("XI", "IX", "ZI", "IZ", "YY", "XX")})
    assert repr(many).endswith(" + ... (2 more terms)")
    assert repr(many).count("*") == 4


# ---------------------------------------------------------------- arithmetic


def test_arithmetic():
    a = PauliSum.from_strings({"XI": 1.0, "ZZ": 2.0})
    b = PauliSum.from_strings({"XI": -1.0, "YY": 0.5})
    s = a + b
    assert len(s) == 2 and sorted(s.coefficients(), key=abs) == [0.5, 2.0]
    d = a - a
    assert len(d) == 0
    assert (a * 2).coefficients() == [4.0, 2.0] or sorted(c.real for c in (a * 2).coefficients()) == [2.0, 4.0]
    assert (2 * a).coefficients() == (a * 2).coefficients()
    assert (np.float64(2.0) * a).coefficients() == (a * 2).coefficients()
    assert len(a * 0) == 0
    assert (a * 1j).coefficients() == [c * 1j for c in a.coefficients()]
    c = PauliSum.from_strings({"XI": 1.0})
    ident = id(c)
    c += b
    c -= PauliSum.from_strings({"YY": 0.5})
    c *= 3
    assert id(c) == ident and len(c) == 0
    assert (-a).coefficients() == [-v for v in a.coefficients()]
    assert a.coefficients() == PauliSum.from_strings({"XI": 1.0, "ZZ": 2.0}).coefficients()  # a unchanged


def test_arithmetic_errors():
    a = PauliSum.from_strings({"XI": 1.0})
    with pytest.raises(TypeError, match="no operator product"):
        a * a
    with pytest.raises(TypeError):
        a + 1
    with pytest.raises(TypeError):
        a * "x"
    with pytest.raises(ValueError, match="num_qubits mismatch"):
        a + PauliSum.from_strings({"X": 1.0})
    with pytest.raises(ValueError, match="num_qubits mismatch"):
        a -= PauliSum(3)


# ---------------------------------------------------------------- read-outs


def test_expectation_states():
    s = PauliSum.from_strings({"ZI": 1.0, "XX": 2.0, "YI": 4.0, "II": 0.5})
    assert s.expectation() == 2.5  # default "x+"
    assert s.expectation("z+") == 1.5
    assert s.expectation("Y+") == 4.5
    assert s.expectation("1-") == -1.0 + 0.5  # Z on |1> is -1; X, Y on |1> are 0
    assert isinstance(s.expectation("x+"), complex)
    with pytest.raises(ValueError):
        s.expectation("w+")
    with pytest.raises(ValueError):
        s.expectation("010")
    with pytest.raises(TypeError):
        s.expectation(0)


def test_expectation_stabilizer_and_errors():
    s = PauliSum.from_strings({"XX": 1.0, "ZZ": 0.5, "ZI": 3.0, "YY": 0.25})
    assert s.expectation_stabilizer(["+XX", "+ZZ"]) == 1.0 + 0.5 - 0.25
    assert s.expectation_stabilizer(["XX", "-ZZ"]) == 1.0 - 0.5 + 0.25
    with pytest.raises(ValueError):
        s.expectation_stabilizer(["+XX", "+ZI"])  # anticommuting
    with pytest.raises(ValueError):
        s.expectation_stabilizer(["+XX", "+XX"])  # dependent
    with pytest.raises(ValueError):
        s.expectation_stabilizer(["+XX"])  # too few
    with pytest.raises(TypeError):
        s.expectation_stabilizer("+XX")


def test_overlap_identity_histogram_rotated_overlap():
    a = PauliSum.from_strings({"XI": 1.0, "II": 0.25, "ZZ": 2j})
    b = PauliSum.from_strings({"XI": 3.0, "ZZ": 1.0})
    assert a.overlap(b) == 3.0 - 2j
    assert a.identity_coefficient() == 0.25
    assert PauliSum(2).identity_coefficient() == 0
    with pytest.raises(ValueError, match="num_qubits mismatch"):
        a.overlap(PauliSum(3))
    with pytest.raises(TypeError):
        a.overlap("XI")
    h = PauliSum.from_strings({"ZI": 1.0, "ZZ": 2.0, "XI": 3.0})
    assert h.anticommute_histogram([0, 1]) == [9.0, 1.0, 4.0]
    assert h.anticommute_histogram([0], axis="z") == [5.0, 9.0]
    assert h.rotated_overlap([0, 1], 0.0) == pytest.approx(14.0)
    assert isinstance(h.rotated_overlap([0], 0.3), float)
    with pytest.raises(ValueError):
        h.anticommute_histogram([0], axis="y")
    with pytest.raises(ValueError):
        h.anticommute_histogram([5])
    with pytest.raises(RuntimeError, match="MPI"):
        h.anticommute_histogram([0], comm=object())
    with pytest.raises(RuntimeError, match="MPI"):
        h.rotated_overlap([0], 0.1, comm=object())
    assert paulistrings.diagonal_echo([1.0, 1.0], 0.0) == 1.0
    assert math.isnan(paulistrings.diagonal_echo([0.0, 0.0], 0.3))


# ---------------------------------------------------------------- Circuit


def test_circuit_gate_methods_push_one_channel_each():
    c = Circuit(3)
    c.h(0)
    c.s(1)
    c.sdg(2)
    c.x(0)
    c.y(1)
    c.z(2)
    c.cnot(0, 1)
    c.cz(1, 2)
    c.swap(0, 2)
    c.rz(0.1, 0)
    c.rx(0.2, 1)
    c.ry(0.3, 2)
    c.pauli_rotation("XZ", [0, 2], 0.4)
    c.unitary_1q(0, np.eye(2))
    c.unitary_2q(0, 1, np.eye(4))
    assert len(c) == 15
    c.depolarize(0.1, [0, 1, 2])
    c.dephase(0.1, [0])
    c.amplitude_damping(0.1, [1, 2])
    c.pauli_channel(0.01, 0.02, 0.03, [0])
    c.depolarize2(0.05, [(0, 1), (1, 2)])
    assert len(c) == 15 + 3 + 1 + 2 + 1 + 2
    assert c.num_qubits == 3
    assert c.h(0) is None


def test_circuit_gates_property_uses_task_vocabulary():
    c = Circuit(2)
    c.h(0)
    c.cnot(0, 1)
    c.rz(0.5, 1)
    c.pauli_rotation("ZZ", [0, 1], -1.0)
    c.unitary_1q(1, np.array([[0, 1], [1, 0]]))
    c.depolarize(0.01, [0])
    c.amplitude_damping(0.2, [1])
    c.pauli_channel(0.1, 0.0, 0.2, [0])
    c.depolarize2(0.3, [(1, 0)])
    g = c.gates
    assert g[0] == {"name": "h", "qubits": [0]}
    assert g[1] == {"name": "cnot", "qubits": [0, 1]}
    assert g[2] == {"name": "rz", "qubits": [1], "theta": 0.5}
    assert g[3] == {"name": "pauli_rotation", "qubits": [0, 1], "pauli": "ZZ", "theta": -1.0}
    assert g[4] == {"name": "unitary_1q", "qubits": [1], "matrix": [[[0.0, 0.0], [1.0, 0.0]], [[1.0, 0.0], [0.0, 0.0]]]}
    assert g[5] == {"name": "depolarize", "qubits": [0], "p": 0.01}
    assert g[6] == {"name": "amplitude_damping", "qubits": [1], "gamma": 0.2}
    assert g[7] == {"name": "pauli_channel", "qubits": [0], "px": 0.1, "py": 0.0, "pz": 0.2}
    assert g[8] == {"name": "depolarize2", "qubits": [1, 0], "p": 0.3}
    again = paulistrings.interop.circuit_from_json({"gates": g}, 2)
    assert again.gates == g


def test_circuit_indexing_slicing_and_composition():
    c = Circuit(2)
    c.h(0)
    c.rz(0.25, 1)
    c.cnot(0, 1)
    assert repr(c[0]) == "Channel(H { qubit: 0 })"
    assert repr(c[-1]) == "Channel(Cnot { control: 0, target: 1 })"
    assert repr(c[1]) == "Channel(Rz { theta: 0.25, qubit: 1 })"
    with pytest.raises(IndexError):
        c[3]
    with pytest.raises(IndexError):
        c[-4]
    with pytest.raises(TypeError):
        c["a"]
    assert [g["name"] for g in c[1:].gates] == ["rz", "cnot"]
    assert [g["name"] for g in c[::-1].gates] == ["cnot", "rz", "h"]
    assert c[::-1].gates[1]["theta"] == 0.25  # reversal is not the adjoint
    assert len(c[5:]) == 0
    with pytest.raises(ValueError):
        c[::0]
    d = c + c
    assert len(d) == 6 and len(c) == 3
    c.extend(c)
    assert len(c) == 6
    e = Circuit(2)
    e.append(c[0])
    e.append(gates.rz(0.1, 1))
    assert len(e) == 2
    with pytest.raises(TypeError):
        e.append("h")
    with pytest.raises(TypeError):
        c + 1
    with pytest.raises(ValueError, match="num_qubits mismatch"):
        c.extend(Circuit(3))
    with pytest.raises(ValueError):
        c + Circuit(3)


def test_adjoint():
    c = Circuit(2)
    c.s(0)
    c.rz(0.3, 1)
    c.cnot(0, 1)
    c.unitary_1q(1, np.array([[1, 0], [0, 1j]]))
    a = c.adjoint()
    names = [g["name"] for g in a.gates]
    assert names == ["unitary_1q", "cnot", "rz", "sdg"]
    assert a.gates[2]["theta"] == -0.3
    assert a.gates[0]["matrix"][1][1] == [0.0, -1.0]
    assert [g["name"] for g in a.adjoint().gates] == ["s", "rz", "cnot", "unitary_1q"]
    c.depolarize(0.1, [0])
    with pytest.raises(ValueError):
        c.adjoint()


def test_circuit_errors():
    with pytest.raises(ValueError, match="1024"):
        Circuit(1025)
    c = Circuit(3)
    with pytest.raises(ValueError, match="qubit index 3 is out of range for a 3-qubit circuit"):
        c.h(3)
    with pytest.raises(ValueError, match="qubit index 7 is out of range for a 3-qubit circuit"):
        c.append(gates.cnot(0, 7))
    with pytest.raises(ValueError, match=r"cnot: the two qubit indices must differ \(both are 1\)"):
        c.cnot(1, 1)
    with pytest.raises(ValueError, match="cz: the two qubit indices must differ"):
        c.cz(0, 0)
    with pytest.raises(ValueError, match="swap: the two qubit indices must differ"):
        gates.swap(2, 2)
    with pytest.raises(ValueError, match="unitary_2q: q0 and q1 must differ"):
        c.unitary_2q(1, 1, np.eye(4))
    with pytest.raises(ValueError, match="not unitary"):
        c.unitary_1q(0, np.array([[1, 1], [0, 1]]))
    with pytest.raises(ValueError, match="2x2"):
        c.unitary_1q(0, np.eye(3))
    with pytest.raises(ValueError, match="4x4"):
        gates.unitary_2q(0, 1, np.eye(2))
    with pytest.raises(ValueError, match="same length"):
        c.pauli_rotation("XX", [0], 0.1)
    with pytest.raises(ValueError, match="non-empty"):
        c.pauli_rotation("", [], 0.1)
    with pytest.raises(ValueError, match="unexpected Pauli character 'I'"):
        c.pauli_rotation("XI", [0, 1], 0.1)
    with pytest.raises(ValueError, match=r"qubits must be distinct \(index 1 appears twice\)"):
        c.pauli_rotation("XZ", [1, 1], 0.1)
    with pytest.raises(ValueError, match=r"pauli_channel: px must be non-negative \(got -0.1\)"):
        c.pauli_channel(-0.1, 0, 0, [0])
    with pytest.raises(ValueError, match=r"pauli_channel: px \+ py \+ pz must be at most 1"):
        noise.pauli_channel(0.5, 0.5, 0.5, 0)
    with pytest.raises(ValueError, match=r"depolarize2: p must be between 0 and 1 \(got 2\)"):
        c.depolarize2(2.0, [(0, 1)])
    with pytest.raises(ValueError, match="depolarize2: the two qubit indices must differ"):
        noise.depolarize2(0.1, 2, 2)
    with pytest.raises(ValueError):
        c.depolarize(1.5, [0])  # outside [0, 1] (the original accepted it; this engine refuses)
    with pytest.raises(OverflowError):
        c.h(-1)
    with pytest.raises(TypeError):
        c.h(0.5)
    with pytest.raises(TypeError):
        c.rz("0.1", 0)
    with pytest.raises(TypeError):
        c.depolarize(0.1, 0)
    with pytest.raises(TypeError):
        c.depolarize2(0.1, [0, 1])
    # a failing broadcast appends nothing
    before = len(c)
    with pytest.raises(ValueError):
        c.depolarize(0.1, [0, 5])
    assert len(c) == before


def test_channel_reprs():
    assert repr(gates.sdg(2)) == "Channel(Sdg { qubit: 2 })"
    assert repr(gates.cz(0, 1)) == "Channel(Cz { q0: 0, q1: 1 })"
    assert repr(gates.swap(3, 1)) == "Channel(Swap { q0: 3, q1: 1 })"
    assert repr(gates.ry(1.0, 0)) == "Channel(Ry { theta: 1.0, qubit: 0 })"
    assert repr(gates.pauli_rotation("XY", [4, 2], 0.5)) == "Channel(PauliRotationN { theta: 0.5, paulis: [(4, X), (2, Y)] })"
    assert repr(noise.depolarize(1e-5, 0)) == "Channel(Depolarize { p: 1e-5, qubit: 0 })"
    assert repr(noise.dephase(0.5, 1)) == "Channel(Dephase { p: 0.5, qubit: 1 })"
    assert repr(noise.amplitude_damping(0.25, 1)) == "Channel(AmplitudeDamping { gamma: 0.25, qubit: 1 })"
    assert repr(noise.pauli_channel(0.1, 0.0, 0.2, 0)) == "Channel(PauliChannel { px: 0.1, py: 0.0, pz: 0.2, qubit: 0 })"
    assert repr(noise.depolarize2(0.5, 0, 1)) == "Channel(Depolarize2 { p: 0.5, q0: 0, q1: 1 })"
    assert repr(gates.unitary_1q(0, np.eye(2))).startswith("Channel(Unitary1Q { qubit: 0, matrix: [[Complex { re: 1.0, im: 0.0 }")
    with pytest.raises(TypeError):
        paulistrings.Channel()


# ---------------------------------------------------------------- truncation


def test_truncation_factories_and_composition():
    assert repr(truncation.coeff(1e-8)) == "Truncation(Coeff(1e-8))"
    assert repr(truncation.weight(3)) == "Truncation(Weight(3))"
    assert repr(truncation.topn(10)) == "Truncation(TopN(10))"
    assert repr(truncation.approx_topn(7)) == "Truncation(ApproxTopN(7))"
    assert repr(truncation.collapse_sample(5, 9)) == "Truncation(CollapseSample { cache: 5, seed: 9 })"
    both = truncation.coeff(0.5) & truncation.weight(1)
    either = truncation.coeff(0.5) | truncation.weight(1)
    assert repr(both) == "Truncation(And(Coeff(0.5), Weight(1)))"
    assert repr(either) == "Truncation(Or(Coeff(0.5), Weight(1)))"
    with pytest.raises(TypeError):
        truncation.coeff(0.1) & 3
    with pytest.raises(TypeError):
        truncation.coeff("0.1")
    with pytest.raises(OverflowError):
        truncation.weight(-1)
    with pytest.raises(TypeError):
        truncation.topn(1.5)
    with pytest.raises(TypeError):
        paulistrings.Truncation()


def test_truncation_semantics():
    s = PauliSum.from_strings({"XII": 1.0, "YYI": 0.5, "ZZZ": 0.25, "IIX": 0.125})
    # truncation runs after every layer (channel): an empty circuit truncates nothing
    empty = Circuit(3)
    assert len(s.propagate(empty, truncation.coeff(10.0))) == 4
    one = Circuit(3)
    one.z(0)
    kept = s.propagate(one, truncation.coeff(0.25))
    assert sorted(abs(c) for c in kept.coefficients()) == [0.5, 1.0]  # |c| == eps is dropped
    assert len(s.propagate(one, truncation.coeff(-1.0))) == 4
    assert len(s.propagate(one, truncation.weight(1))) == 2
    assert len(s.propagate(one, truncation.topn(2))) == 2
    assert len(s.propagate(one, truncation.approx_topn(3))) <= 3
    tie = PauliSum.from_strings({"XI": 1.0, "IX": 1.0, "ZZ": 0.5})
    one2 = Circuit(2)
    one2.z(0)
    assert len(tie.propagate(one2, truncation.topn(1))) == 0  # the tie group does not fit: dropped whole
    assert len(tie.propagate(one2, truncation.topn(2))) == 2
    assert len(s.propagate(one, truncation.coeff(0.3) & truncation.weight(1))) == 1
    assert len(s.propagate(one, truncation.coeff(0.3) | truncation.weight(1))) == 3


def test_collapse_sample():
    s = PauliSum.from_strings({"XI": 0.6, "IX": 0.8})
    c = Circuit(2)
    c.z(0)
    c.z(1)
    out, stats = s.propagate_with_stats(c, truncation.collapse_sample(1, 42))
    assert len(out) == 1 and abs(out.coefficients()[0]) == 1.0  # one string, coefficient ±1
    assert stats.collapses == 1
    _, plain = s.propagate_with_stats(c)
    assert plain.collapses is None


def test_column_layers_report_the_cpu_engines_column_phase():
    # One thread: the CPU engine runs the layers of this sparse chain on its column index (the result is
    # the coset engine's bit for bit, docs/design.md §7.5); with the column engine named there is no phase.
    n = 24
    c = Circuit(n)
    for q in range(n):
        c.rx(0.3, q)
    for q in range(n - 1):
        c.pauli_rotation("ZZ", [q, q + 1], 0.2)
    s = PauliSum.from_strings({"Z0": 1.0, "X5 X6": 0.5}, num_qubits=n)
    out, stats = s.propagate_with_stats(c, threads=1)
    assert stats.column_layers == len(c)
    column, named = s.propagate_with_stats(c, threads=1, engine="column")
    assert named.column_layers == 0
    def terms(p):
        return sorted(zip(map(tuple, p.x_array()), map(tuple, p.z_array()), p.coefficients()))

    assert terms(out) == terms(column)


# ---------------------------------------------------------------- propagate arguments


def test_propagate_argument_errors():
    s = PauliSum.from_strings({"XI": 1.0})
    c = Circuit(2)
    c.h(0)
    with pytest.raises(ValueError, match=r"direction must be 'forward' or 'heisenberg', got \"sideways\""):
        s.propagate(c, direction="sideways")
    with pytest.raises(TypeError):
        s.propagate(c, direction=1)
    with pytest.raises(ValueError, match=r"PauliSum.num_qubits \(2\) != Circuit.num_qubits \(3\)"):
        s.propagate(Circuit(3))
    with pytest.raises(TypeError):
        s.propagate("circuit")
    with pytest.raises(TypeError):
        s.propagate(c, policy="coeff")
    with pytest.raises(ValueError):
        s.propagate(c, target_bucket_len=0)
    with pytest.raises(ValueError):
        s.propagate(c, engine="fast")
    assert len(s.propagate(c, engine="auto", small_sum_threshold=64)) == 1
    assert len(s.propagate(c, target_bucket_len=4, min_buckets=2, threads=1)) == 1
    with pytest.raises(OverflowError):
        s.propagate(c, threads=-1)


def test_distributed_and_gpu_arguments_raise_clear_errors():
    s = PauliSum.from_strings({"XI": 1.0})
    c = Circuit(2)
    c.h(0)
    assert len(s.propagate(c, partitions=None)) == 1
    assert len(s.propagate(c, partitions=1)) == 1
    assert len(s.propagate(c, partitions=[[0]])) == 1
    nodes = len(paulistrings.numa_nodes())
    if nodes == 1:
        assert len(s.propagate(c, partitions="auto")) == 1  # single node: unpartitioned
    with pytest.raises(TypeError):
        s.propagate(c, partitions=True)
    with pytest.raises(ValueError):
        s.propagate(c, partitions=0)
    with pytest.raises(ValueError):
        s.propagate(c, partitions=3)
    with pytest.raises(ValueError):
        s.propagate(c, partitions=[])
    with pytest.raises(ValueError):
        s.propagate(c, partitions="many")
    with pytest.raises(ValueError):
        s.propagate(c, partitions=[[0], [0]])
    # In-process partitions run (threads; no NUMA nodes needed): test_partitions.py checks the results.
    assert len(s.propagate(c, partitions=2)) == 1
    assert len(s.propagate(c, partitions=[[0], [1]])) == 1
    assert len(s.propagate(c, truncation.topn(3), partitions=[[0], [1]])) == 1  # distributed topn
    with pytest.raises(ValueError, match="collapse_sample"):
        s.propagate(c, truncation.collapse_sample(3, 1), partitions=2)
    with pytest.raises(ValueError):
        s.propagate(c, partition_row_seed=1)
    with pytest.raises(ValueError):
        s.propagate(c, partition_row_blocks=[[0], [1]])
    with pytest.raises(ValueError):
        s.propagate(c, partition_row_exclude={"x": [0]})
    with pytest.raises(ValueError):
        s.propagate(c, result="scatter")
    with pytest.raises(ValueError):
        s.propagate(c, comm=object(), partitions=2)
    with pytest.raises(ValueError, match=r"device=\[0\] \* 2"):  # GPU partitions are a device list
        s.propagate(c, device=0, partitions=2)
    # comm= that is not an mpi4py communicator: TypeError where the build has MPI, else the
    # RuntimeError of a build without it.
    no_comm = TypeError if paulistrings._core.mpi else RuntimeError
    with pytest.raises(no_comm, match="mpi4py" if paulistrings._core.mpi else "MPI"):
        s.propagate(c, comm=object())
    with pytest.raises(no_comm, match="mpi4py" if paulistrings._core.mpi else "MPI"):
        s.propagate_with_stats(c, comm=object(), result="local")
    # device= and to_device on machines with and without a GPU: test_gpu.py
    with pytest.raises(TypeError):
        s.propagate(c, device=True)
    with pytest.raises(ValueError):
        s.propagate(c, device=[0, 1, 2])
    if not paulistrings.cuda_available():
        for device in (0, [0], 3, [0, 1], [0, 0, 0, 0]):
            with pytest.raises(RuntimeError, match="CUDA"):
                s.propagate(c, device=device)
        assert len(s.propagate(c, device="auto")) == 1  # falls back to the CPU
        with pytest.raises(RuntimeError, match="CUDA"):
            s.to_device()
        with pytest.raises(RuntimeError, match="CUDA"):
            s.to_device(1)
        with pytest.raises(RuntimeError, match="CUDA"):
            paulistrings.GpuPauliSum(s)


# ---------------------------------------------------------------- copies, iteration, exception mapping


def test_copies_are_independent_and_circuits_iterate():
    import copy

    a = PauliSum.from_strings({"XI": 1.0})
    b = copy.copy(a)
    b += PauliSum.from_strings({"ZZ": 1.0})
    assert len(a) == 1 and len(b) == 2
    assert len(copy.deepcopy(b)) == 2
    c = Circuit(2)
    c.h(0)
    c.cz(0, 1)
    d = copy.copy(c)
    d.x(1)
    assert len(c) == 2 and len(d) == 3
    assert [repr(ch) for ch in c] == ["Channel(H { qubit: 0 })", "Channel(Cz { q0: 0, q1: 1 })"]


def test_library_exceptions_map_to_python_types(tmp_path):
    from paulistrings import _core

    with pytest.raises(RuntimeError):  # std::runtime_error (file cannot be read)
        _core.load_stim(str(tmp_path / "missing.stim"))
    with pytest.raises(ValueError):  # io::ParseError derives from std::invalid_argument
        _core.read_stim("H 0\nM X0\n")
    with pytest.raises(IndexError):  # std::out_of_range
        _core.Circuit(1).at(0)
    with pytest.raises(FileNotFoundError):
        paulistrings.interop.circuit_from_qasm(tmp_path / "missing.qasm")
