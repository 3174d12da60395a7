"""NumPy round trips (from_arrays ↔ x_array/z_array/coefficients_array), the npz format
(paulistrings.io), and exact duplicate summation."""

import math

import numpy as np
import pytest

from paulistrings import Circuit, PauliSum, io, truncation


def as_dict(s):
    x, z, c = s.x_array(), s.z_array(), s.coefficients_array()
    return {(tuple(int(v) for v in x[i]), tuple(int(v) for v in z[i])): complex(c[i]) for i in range(len(s))}


def random_sum(n, count, rng, complex_coefficients=True):
    labels = ["".join(rng.choice(list("IXYZ"), size=n)) for _ in range(count)]
    values = rng.normal(size=count) + (1j * rng.normal(size=count) if complex_coefficients else 0)
    return PauliSum.from_strings(labels, list(values), num_qubits=n)


@pytest.mark.parametrize("n", [1, 3, 63, 64, 65, 127, 128, 129, 300, 700, 1024])
def test_round_trip_every_width(n):
    rng = np.random.default_rng(n)
    s = random_sum(n, 40, rng)
    x, z, c = s.x_array(), s.z_array(), s.coefficients_array()
    assert x.dtype == np.uint64 and z.dtype == np.uint64 and c.dtype == np.complex128
    assert x.shape == (len(s), s.width) and z.shape == x.shape and c.shape == (len(s),)
    back = PauliSum.from_arrays(x, z, c, n)
    assert back.num_qubits == n and back.width == s.width
    assert as_dict(back) == as_dict(s)
    assert (back.x_array() == x).all() and (back.z_array() == z).all() and (back.coefficients_array() == c).all()


def test_hand_built_keys_and_column_layout():
    x = np.array([[1], [0]], dtype=np.uint64)  # X on qubit 0
    z = np.array([[0], [2]], dtype=np.uint64)  # Z on qubit 1
    got = PauliSum.from_arrays(x, z, np.array([1.0 + 0j, 0.5 + 0j]), num_qubits=3)
    want = PauliSum.from_strings({"XII": 1.0, "IZI": 0.5})
    assert as_dict(got) == as_dict(want)
    # qubit 64 lives in word 1, bit 0
    s = PauliSum.from_strings({"I" * 64 + "Y": 1.0})
    assert s.width == 2
    assert s.x_array().tolist() == [[0, 1]] and s.z_array().tolist() == [[0, 1]]


def test_accessor_order_is_key_order_after_propagation():
    rng = np.random.default_rng(5)
    n = 6
    s = random_sum(n, 50, rng, complex_coefficients=False)
    c = Circuit(n)
    for q in range(n):
        c.rx(0.3 + q, q)
    for q in range(n - 1):
        c.cnot(q, q + 1)
    out = s.propagate(c, direction="heisenberg")
    assert out.num_buckets >= 128 and len(out) > 100
    x, z = out.x_array(), out.z_array()
    keys = [tuple(x[i]) + tuple(z[i]) for i in range(len(out))]
    assert keys == sorted(keys)
    assert out.coefficients() == list(out.coefficients_array())
    labels_in_repr = [t.split("*")[1] for t in repr(out).split(" + ")[:4]]
    first = []
    for i in range(4):
        label = "".join("IXZY"[((int(x[i, 0]) >> q) & 1) | (((int(z[i, 0]) >> q) & 1) << 1)] for q in range(n))
        first.append(label)
    assert labels_in_repr == first


def test_duplicate_rows_sum_exactly_in_input_order():
    x = np.array([[1]] * 4, dtype=np.uint64)
    z = np.zeros((4, 1), dtype=np.uint64)
    values = [0.1, 0.2, 0.3, -0.6000000000000001]
    got = PauliSum.from_arrays(x, z, np.array(values), 1)
    total = 0.0
    for v in values:
        total += v
    assert got.coefficients() == ([complex(total)] if total != 0 else [])
    got = PauliSum.from_arrays(x[:2], z[:2], np.array([1.0 + 0j, 2.5 - 1.0j]), 1)
    assert got.coefficients() == [3.5 - 1.0j]
    assert len(PauliSum.from_arrays(x[:2], z[:2], np.array([1.0, -1.0]), 1)) == 0
    # 1e16 + 1 - 1e16 in input order is exactly 0 in binary64, so the term disappears; a different
    # order keeps the 1: accumulation follows input order, with no hidden rounding elsewhere.
    s = PauliSum.from_strings(["X", "X", "X"], [1e16, 1.0, -1e16])
    assert len(s) == 0
    s = PauliSum.from_strings(["X", "X", "X"], [1e16, -1e16, 1.0])
    assert s.coefficients() == [1.0]
    # dict form and label form agree on large inputs
    rng = np.random.default_rng(1)
    labels = ["".join(rng.choice(list("XYZ"), size=3)) for _ in range(500)]
    values = rng.normal(size=500)
    by_seq = PauliSum.from_strings(labels, list(values))
    expected = {}
    for label, v in zip(labels, values):
        expected[label] = expected.get(label, 0.0) + v
    by_dict = PauliSum.from_strings(expected)
    assert as_dict(by_seq) == as_dict(by_dict)


def test_real_input_keeps_real_storage():
    x = np.array([[1]], dtype=np.uint64)
    z = np.zeros((1, 1), dtype=np.uint64)
    s = PauliSum.from_arrays(x, z, np.array([2.0]), 1)
    assert not s.is_complex and s.coefficients() == [2.0 + 0j]
    t = PauliSum.from_arrays(x, z, np.array([2.0 + 0j]), 1)
    assert not t.is_complex
    u = PauliSum.from_arrays(x, z, np.array([2.0 + 1j]), 1)
    assert u.is_complex


def test_narrow_arrays_are_zero_padded_and_empty_arrays_work():
    got = PauliSum.from_arrays(np.array([[1 << 3]], dtype=np.uint64), np.array([[0]], dtype=np.uint64),
                               np.array([1.0 + 0j]), num_qubits=65)
    assert got.width == 2
    assert as_dict(got) == as_dict(PauliSum.from_strings({"IIIX" + "I" * 61: 1.0}))
    empty = PauliSum.from_arrays(np.zeros((0, 1), np.uint64), np.zeros((0, 1), np.uint64), np.zeros(0, complex), 4)
    assert len(empty) == 0 and empty.num_qubits == 4
    assert empty.x_array().shape == (0, 1)


def test_from_arrays_errors():
    u = np.zeros((2, 1), dtype=np.uint64)
    c2 = np.zeros(2, dtype=np.complex128)
    with pytest.raises(ValueError, match="shape"):
        PauliSum.from_arrays(u, np.zeros((3, 1), np.uint64), c2, 4)
    with pytest.raises(ValueError, match="length"):
        PauliSum.from_arrays(u, u, np.zeros(3, np.complex128), 4)
    with pytest.raises(TypeError, match="uint64"):
        PauliSum.from_arrays(np.zeros((2, 1), np.int64), u, c2, 4)
    with pytest.raises(TypeError):
        PauliSum.from_arrays([[0], [0]], u, c2, 4)
    with pytest.raises(TypeError):
        PauliSum.from_arrays(u, u, np.zeros(2, np.int32), 4)
    with pytest.raises(TypeError):
        PauliSum.from_arrays(u, u, [0.0, 0.0], 4)
    with pytest.raises(ValueError, match="qubit"):
        PauliSum.from_arrays(np.array([[1 << 3]], np.uint64), np.array([[0]], np.uint64), np.ones(1), 3)
    with pytest.raises(ValueError, match="qubit"):
        PauliSum.from_arrays(np.array([[0]], np.uint64), np.array([[1 << 3]], np.uint64), np.ones(1), 3)
    with pytest.raises(ValueError, match="1024"):
        PauliSum.from_arrays(np.zeros((0, 1), np.uint64), np.zeros((0, 1), np.uint64), np.zeros(0), 1025)
    with pytest.raises(ValueError, match="width"):
        PauliSum.from_arrays(np.zeros((1, 2), np.uint64), np.zeros((1, 2), np.uint64), np.ones(1), 3)
    with pytest.raises(ValueError):
        PauliSum.from_arrays(np.zeros(2, np.uint64), np.zeros(2, np.uint64), c2, 3)
    with pytest.raises(ValueError):
        PauliSum.from_arrays(u, u, np.zeros((2, 1)), 3)


def test_npz_round_trip(tmp_path):
    s = PauliSum.from_strings({"XII": 1.0, "ZII": 0.5, "YII": -0.25j})
    path = tmp_path / "sum.npz"
    io.save(path, s)
    with np.load(path, allow_pickle=False) as data:
        assert sorted(data.files) == ["coefficients", "format", "num_qubits", "x", "z"]
        assert str(data["format"]) == "paulistrings-npz-v1"
        assert data["num_qubits"].dtype == np.int64 and int(data["num_qubits"]) == 3
        assert data["x"].dtype == np.uint64 and data["coefficients"].dtype == np.complex128
    loaded = io.load(path)
    assert loaded.num_qubits == 3 and as_dict(loaded) == as_dict(s)
    wide = PauliSum.from_strings({"I" * 64 + "X": 1.0})
    io.save(str(tmp_path / "wide.npz"), wide)
    assert io.load(str(tmp_path / "wide.npz")).width == 2
    empty = PauliSum(5)
    io.save(tmp_path / "empty.npz", empty)
    assert len(io.load(tmp_path / "empty.npz")) == 0
    with pytest.raises(TypeError):
        io.save(tmp_path / "bad.npz", "X")


def test_npz_written_by_hand_like_the_original(tmp_path):
    path = tmp_path / "hand.npz"
    np.savez_compressed(path, format="paulistrings-npz-v1", num_qubits=np.int64(2),
                        x=np.array([[1], [1]], np.uint64), z=np.array([[2], [2]], np.uint64),
                        coefficients=np.array([0.5, 0.25], np.complex128))
    assert io.load(path).coefficients() == [0.75]


def test_npz_rejects_bad_files(tmp_path):
    fields = dict(num_qubits=np.int64(1), x=np.zeros((0, 1), np.uint64), z=np.zeros((0, 1), np.uint64),
                  coefficients=np.zeros(0, np.complex128))
    np.savez_compressed(tmp_path / "nofmt.npz", **fields)
    with pytest.raises(ValueError, match="format"):
        io.load(tmp_path / "nofmt.npz")
    np.savez_compressed(tmp_path / "v2.npz", format="paulistrings-npz-v2", **fields)
    with pytest.raises(ValueError, match="format"):
        io.load(tmp_path / "v2.npz")
    np.savez_compressed(tmp_path / "obj.npz", format="paulistrings-npz-v1", num_qubits=np.int64(1),
                        x=np.array([object()], dtype=object), z=np.zeros((0, 1)), coefficients=np.zeros(0))
    with pytest.raises(ValueError):
        io.load(tmp_path / "obj.npz")  # object arrays would need pickle: refused


def test_save_load_mid_propagation_equals_one_go(tmp_path):
    initial = PauliSum.from_strings({"XIII": 1.0, "ZIII": 0.3})
    first, second = Circuit(4), Circuit(4)
    first.rz(0.37, 0)
    first.cnot(0, 1)
    first.h(1)
    second.rx(0.71, 1)
    second.cnot(1, 2)
    second.rz(0.13, 2)
    one_go = initial.propagate(first).propagate(second)
    io.save(tmp_path / "mid.npz", initial.propagate(first))
    split = io.load(tmp_path / "mid.npz").propagate(second)
    assert as_dict(split) == as_dict(one_go)
    assert as_dict(initial.propagate(first + second)) == pytest.approx(as_dict(one_go))


def test_large_round_trip_after_truncated_propagation():
    n = 20
    s = PauliSum.from_strings({"Z" * n: 1.0, "X" * n: 0.5})
    c = Circuit(n)
    for layer in range(2):
        for q in range(n):
            c.rx(0.4, q)
        for q in range(layer % 2, n - 1, 2):
            c.pauli_rotation("ZZ", [q, q + 1], 0.7)
    out = s.propagate(c, truncation.coeff(1e-3), direction="heisenberg")
    assert len(out) > 1000
    back = PauliSum.from_arrays(out.x_array(), out.z_array(), out.coefficients_array(), n)
    assert as_dict(back) == as_dict(out)
    assert abs(back.overlap(out) - out.overlap(out)) < 1e-12
    assert math.isclose(out.overlap(out).real, float(np.sum(np.abs(out.coefficients_array()) ** 2)))
