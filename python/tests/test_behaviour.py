"""The original's documented behaviours (README quickstart, direction conventions, identities),
PropagationStats, logging, and this implementation's additions: threads=, checkpoint/resume,
memory_limit, per-layer discarded weight."""

import logging
import math

import numpy as np
import pytest

import paulistrings
from paulistrings import Circuit, PauliSum, _core, truncation
from paulistrings.workloads import heavy_hex_127_edges, kicked_ising_circuit


def as_dict(s):
    x, z, c = s.x_array(), s.z_array(), s.coefficients_array()
    return {(tuple(int(v) for v in x[i]), tuple(int(v) for v in z[i])): complex(c[i]) for i in range(len(s))}


def assert_close(a, b, tol=1e-12):
    da, db = as_dict(a), as_dict(b)
    for k in set(da) | set(db):
        assert abs(da.get(k, 0) - db.get(k, 0)) <= tol, k


def terms(s):
    x, z, c = s.x_array(), s.z_array(), s.coefficients_array()
    out = {}
    for i in range(len(s)):
        label = "".join("IXZY"[((int(x[i, q // 64]) >> (q % 64)) & 1) | (((int(z[i, q // 64]) >> (q % 64)) & 1) << 1)]
                        for q in range(s.num_qubits))
        out[label] = complex(c[i])
    return out


# ---------------------------------------------------------------- the original's README and conventions


def test_readme_quickstart():
    observable = PauliSum.from_strings({"XIII": 0.25, "IXII": 0.25, "IIXI": 0.25, "IIIX": 0.25}, num_qubits=4)
    circuit = Circuit(4)
    circuit.rz(math.pi / 8, 0)
    circuit.cnot(0, 1)
    circuit.h(2)
    evolved = observable.propagate(circuit, direction="heisenberg")
    value = evolved.expectation("x+").real
    # |++++> through rz(π/8) on 0, CNOT(0,1) (target in |+>: unchanged), H on 2 (→ |0>):
    # <X0> = cos(π/8), <X1> = 1, <X2> = 0, <X3> = 1.
    assert value == pytest.approx(0.25 * (math.cos(math.pi / 8) + 2.0), abs=1e-15)


def test_s_conjugates_x_to_plus_y_forward_and_minus_y_heisenberg():
    x = PauliSum.from_strings({"X": 1.0})
    c = Circuit(1)
    c.s(0)
    assert terms(x.propagate(c)) == {"Y": 1.0}
    assert terms(x.propagate(c, direction="forward")) == {"Y": 1.0}
    assert terms(x.propagate(c, direction="heisenberg")) == {"Y": -1.0}
    c2 = Circuit(1)
    c2.sdg(0)
    assert terms(x.propagate(c2)) == {"Y": -1.0}


def test_rz_heisenberg_on_x():
    x = PauliSum.from_strings({"X": 1.0})
    c = Circuit(1)
    c.rz(0.3, 0)
    h = terms(x.propagate(c, direction="heisenberg"))
    assert h == {"X": 0.955336489125606, "Y": -0.29552020666133955}
    f = terms(x.propagate(c))
    assert f == {"X": 0.955336489125606, "Y": 0.29552020666133955}


def test_clifford_identities_and_snapping():
    z = PauliSum.from_strings({"Z": 1.0})
    c = Circuit(1)
    c.h(0)
    assert terms(z.propagate(c)) == {"X": 1.0}
    iz = PauliSum.from_strings({"IZ": 1.0})
    c2 = Circuit(2)
    c2.cnot(0, 1)
    assert terms(iz.propagate(c2)) == {"ZZ": 1.0}
    xi = PauliSum.from_strings({"XI": 1.0})
    assert terms(xi.propagate(c2)) == {"XX": 1.0}
    c3 = Circuit(2)
    c3.cz(0, 1)
    assert terms(xi.propagate(c3)) == {"XZ": 1.0}
    x = PauliSum.from_strings({"X": 1.0})
    rz_pi = Circuit(1)
    rz_pi.rz(math.pi, 0)
    assert terms(x.propagate(rz_pi)) == {"X": -1.0}  # sin(π) snapped: one term, no residue
    half = Circuit(1)
    half.rz(math.pi / 2, 0)
    assert terms(x.propagate(half)) == {"Y": 1.0}
    zz = PauliSum.from_strings({"Z": 1.0})
    dep = Circuit(1)
    dep.depolarize(0.75, [0])
    assert len(zz.propagate(dep)) == 0  # scaled by exactly 0: dropped
    damp = Circuit(1)
    damp.amplitude_damping(0.3, [0])
    assert terms(PauliSum.from_strings({"I": 1.0}).propagate(damp)) == pytest.approx({"I": 1.0, "Z": 0.3})
    assert terms(zz.propagate(damp, direction="heisenberg")) == pytest.approx({"Z": 0.7, "I": 0.3})


def random_unitary_circuit(n, length, rng):
    c = Circuit(n)
    for _ in range(length):
        kind = rng.integers(8)
        q = int(rng.integers(n))
        a, b = (int(v) for v in rng.choice(n, 2, replace=False))
        theta = float(rng.uniform(-3, 3))
        if kind == 0:
            c.rz(theta, q)
        elif kind == 1:
            c.rx(theta, q)
        elif kind == 2:
            c.ry(theta, q)
        elif kind == 3:
            c.cnot(a, b)
        elif kind == 4:
            c.s(q)
        elif kind == 5:
            c.pauli_rotation("XYZ"[q % 3] + "Z", [a, b], theta)
        elif kind == 6:
            m = rng.normal(size=(4, 4)) + 1j * rng.normal(size=(4, 4))
            u, _ = np.linalg.qr(m)
            c.unitary_2q(a, b, u)
        else:
            m = rng.normal(size=(2, 2)) + 1j * rng.normal(size=(2, 2))
            u, _ = np.linalg.qr(m)
            c.unitary_1q(q, u)
    return c


@pytest.mark.parametrize("seed", range(4))
def test_heisenberg_equals_forward_of_adjoint(seed):
    rng = np.random.default_rng(seed)
    c = random_unitary_circuit(5, 30, rng)
    obs = PauliSum.from_strings({"ZIIXI": 1.0, "IYIIZ": -0.5, "XXXXX": 0.25})
    assert_close(obs.propagate(c, direction="heisenberg"), obs.propagate(c.adjoint(), direction="forward"))
    assert_close(obs.propagate(c, direction="forward"), obs.propagate(c.adjoint(), direction="heisenberg"))


def test_chaining_propagate_calls():
    rng = np.random.default_rng(9)
    a = random_unitary_circuit(4, 12, rng)
    b = random_unitary_circuit(4, 12, rng)
    obs = PauliSum.from_strings({"ZIXI": 1.0, "IYIZ": 0.5})
    assert_close(obs.propagate(a).propagate(b), obs.propagate(a + b))
    # Heisenberg chaining prepends: propagate(a) then (b) ≡ circuit b + a
    assert_close(obs.propagate(a, direction="heisenberg").propagate(b, direction="heisenberg"),
                 obs.propagate(b + a, direction="heisenberg"))


def test_kicked_ising_one_step_is_cos_theta():
    edges = heavy_hex_127_edges()
    assert len(edges) == 144 and all(0 <= a < 127 and 0 <= b < 127 for a, b in edges)
    c = kicked_ising_circuit(1, 0.25)
    assert len(c) == 127 + 144
    z62 = PauliSum.from_strings({"Z62": 1.0}, num_qubits=127)
    value = z62.propagate(c, truncation.coeff(2**-12), direction="heisenberg").expectation("z+")
    assert value.real == pytest.approx(math.cos(0.25), abs=1e-12)
    # the same circuit built gate by gate from the public API
    d = Circuit(127)
    for q in range(127):
        d.rx(0.25, q)
    for a, b in edges:
        d.pauli_rotation("ZZ", [a, b], -math.pi / 2)
    assert_close(z62.propagate(d, direction="heisenberg"), z62.propagate(c, direction="heisenberg"))


def test_kicked_ising_clifford_point_is_integral():
    c = kicked_ising_circuit(3, math.pi / 2)
    z62 = PauliSum.from_strings({"Z62": 1.0}, num_qubits=127)
    out = z62.propagate(c, direction="heisenberg")
    assert len(out) == 1
    assert abs(out.coefficients()[0]) == 1.0
    assert out.expectation("z+").real in (-1.0, 0.0, 1.0)


# ---------------------------------------------------------------- PropagationStats


def test_propagation_stats_fields():
    obs = PauliSum.from_strings({"ZII": 1.0})
    c = Circuit(3)
    c.h(0)
    c.rx(0.4, 1)
    c.cnot(0, 1)
    c.rz(0.2, 2)
    c.depolarize(0.1, [0])
    out, st = obs.propagate_with_stats(c, direction="heisenberg")
    assert isinstance(st, paulistrings.PropagationStats)
    assert st.layers == 5 == len(st.terms_in) == len(st.terms_out) == len(st.nanos)
    assert st.circuit_index == [4, 3, 2, 1, 0]
    assert st.application_index == [0, 1, 2, 3, 4]
    assert st.gate_name == ["Depolarizing", "PauliRotation", "Clifford2Q", "PauliRotation", "Clifford1Q"]
    assert st.gates == ["depolarize", "rz", "cnot", "rx", "h"]
    for k in range(st.layers - 1):
        assert st.terms_in[k + 1] == st.terms_out[k]
    assert st.terms_in[0] == 1
    assert st.final_terms == len(out) == st.terms_out[-1]
    assert st.peak_terms == max([st.terms_in[0]] + st.terms_out)
    assert all(isinstance(t, int) and t >= 0 for t in st.nanos)
    assert st.partition is None and st.collapses is None
    assert st.discarded_weight == [0.0] * 5 and st.total_discarded_weight == 0.0
    assert repr(st) == (f"PropagationStats(layers=5, terms_in={st.terms_in}, terms_out={st.terms_out}, "
                        f"peak_terms={st.peak_terms}, final_terms={st.final_terms})")
    with pytest.raises(AttributeError):
        st.layers = 3
    # stats do not change results
    assert_close(out, obs.propagate(c, direction="heisenberg"))
    _, forward = obs.propagate_with_stats(c)
    assert forward.circuit_index == [0, 1, 2, 3, 4]
    _, empty = obs.propagate_with_stats(Circuit(3))
    assert empty.layers == 0 and empty.peak_terms == 1 and empty.final_terms == 1


def test_discarded_weight_accounts_for_truncation():
    n = 8
    obs = PauliSum.from_strings({"Z" * n: 1.0})
    c = Circuit(n)
    for layer in range(3):
        for q in range(n):
            c.rx(0.5, q)
        for q in range(layer % 2, n - 1, 2):
            c.pauli_rotation("ZZ", [q, q + 1], 0.9)
    out, st = obs.propagate_with_stats(c, truncation.coeff(0.05), direction="heisenberg")
    norm = float(np.sum(np.abs(out.coefficients_array()) ** 2))
    assert st.total_discarded_weight > 0
    assert st.total_discarded_weight == pytest.approx(sum(st.discarded_weight))
    assert norm + st.total_discarded_weight == pytest.approx(1.0, abs=1e-12)  # unitary: Σ|c|² is conserved


# ---------------------------------------------------------------- threads, logging


def test_threads_do_not_change_results():
    n = 9
    obs = PauliSum.from_strings({"Z" * n: 1.0, "X" + "I" * (n - 1): 0.5})
    c = Circuit(n)
    for q in range(n):
        c.rx(0.3, q)
    for q in range(n - 1):
        c.pauli_rotation("ZZ", [q, q + 1], 0.6)
    for q in range(3):
        c.unitary_1q(q, np.array([[0, 1], [1j, 0]]) @ np.diag([1, np.exp(0.3j)]))
    one = obs.propagate(c, threads=1)
    two = obs.propagate(c, threads=2)
    default = obs.propagate(c)
    assert len(one) == len(two) == len(default)
    assert_close(one, two)
    assert_close(one, default)


def test_logging_info_per_call_and_debug_per_layer(caplog):
    obs = PauliSum.from_strings({"IZ": 1.0})
    c = Circuit(2)
    c.h(0)
    c.cnot(0, 1)
    c.rx(0.2, 1)
    with caplog.at_level(logging.WARNING, logger="paulistrings.propagate"):
        obs.propagate(c)
    assert not caplog.records
    with caplog.at_level(logging.INFO, logger="paulistrings.propagate"):
        obs.propagate(c)
    infos = [r for r in caplog.records if r.name == "paulistrings.propagate"]
    assert [r.levelno for r in infos] == [logging.INFO, logging.INFO]
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="paulistrings.propagate"):
        obs.propagate(c, direction="heisenberg")
    debug = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert len(debug) == 3
    assert debug[0].startswith("layer 1/3 [PauliRotation]: 1 -> 2 terms, ")
    assert debug[2].startswith("layer 3/3 [Clifford1Q]: ")
    assert debug[0].endswith(" ms")


def test_layer_logging_is_free_when_disabled(monkeypatch):
    seen = []
    real = _core.propagate

    def spy(*args, **kwargs):
        seen.append(kwargs["layer_callback"])  # the per-layer callback handed to the engine
        return real(*args, **kwargs)

    monkeypatch.setattr(_core, "propagate", spy)
    logger = logging.getLogger("paulistrings.propagate")
    obs = PauliSum.from_strings({"Z": 1.0})
    c = Circuit(1)
    c.h(0)
    old = logger.level
    try:
        logger.setLevel(logging.INFO)
        obs.propagate(c)
        logger.setLevel(logging.DEBUG)
        obs.propagate(c)
    finally:
        logger.setLevel(old)
    assert seen[0] is None and callable(seen[1])


# ---------------------------------------------------------------- checkpoint / resume


def layered_circuit(n=6, steps=3):
    c = Circuit(n)
    for _ in range(steps):
        for q in range(n):
            c.rx(0.4, q)
        for q in range(n - 1):
            c.pauli_rotation("ZZ", [q, q + 1], 0.3)
    return c


def test_checkpoint_every_and_resume(tmp_path):
    obs = PauliSum.from_strings({"IIZIII": 1.0, "XIIIIX": 0.5})
    c = layered_circuit()
    policy = truncation.coeff(1e-6)
    full, full_stats = obs.propagate_with_stats(c, policy, direction="heisenberg")
    path = tmp_path / "run.ckpt"
    chunked, stats = obs.propagate_with_stats(c, policy, direction="heisenberg", checkpoint=path, checkpoint_every=10)
    assert_close(chunked, full, tol=0)
    assert stats.layers == len(c) == full_stats.layers
    assert stats.application_index == list(range(len(c)))
    assert stats.terms_out == full_stats.terms_out
    assert path.exists()
    # the last checkpoint holds the state after layer 30 of 33; resuming finishes the run
    resumed, rstats = obs.propagate_with_stats(c, policy, direction="heisenberg", resume=path)
    assert rstats.layers == len(c) - 30 and rstats.application_index[0] == 30
    assert_close(resumed, full, tol=0)
    # a checkpoint refuses to resume a different run
    with pytest.raises(ValueError, match="different run"):
        obs.propagate(c, policy, direction="forward", resume=path)
    with pytest.raises(ValueError, match="different run"):
        obs.propagate(c, truncation.coeff(1e-5), direction="heisenberg", resume=path)
    with pytest.raises(ValueError, match="different run"):
        (obs * 2).propagate(c, policy, direction="heisenberg", resume=str(path))
    with pytest.raises(ValueError, match="different run"):
        obs.propagate(layered_circuit(steps=2), policy, direction="heisenberg", resume=path)
    with pytest.raises(FileNotFoundError):
        obs.propagate(c, resume=tmp_path / "missing.ckpt")
    with pytest.raises(ValueError, match="checkpoint_every needs checkpoint"):
        obs.propagate(c, checkpoint_every=3)
    with pytest.raises(ValueError):
        obs.propagate(c, checkpoint=path, checkpoint_every=0)
    bad = tmp_path / "bad.ckpt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="checkpoint"):
        obs.propagate(c, resume=bad)


# ---------------------------------------------------------------- memory budget


def test_memory_limit_truncates_to_fit_or_raises():
    n = 10
    obs = PauliSum.from_strings({"Z" * n: 1.0})
    c = Circuit(n)
    for layer in range(3):
        for q in range(n):
            c.rx(0.7, q)
        for q in range(layer % 2, n - 1, 2):
            c.pauli_rotation("ZZ", [q, q + 1], 0.9)
    free, free_stats = obs.propagate_with_stats(c, direction="heisenberg", memory_limit="64G")
    assert free_stats.budget_truncations == 0
    assert free_stats.peak_terms > 20000
    limit = _core.resident_bytes() + (2 << 20)  # about 20 000 terms of budget
    cut, stats = obs.propagate_with_stats(c, direction="heisenberg", memory_limit=limit)
    assert stats.budget_truncations > 0 and stats.budget_discarded_weight > 0
    assert len(cut) < len(free)
    assert stats.total_discarded_weight >= stats.budget_discarded_weight
    with pytest.raises(MemoryError):
        limit = _core.resident_bytes() + (2 << 20)
        obs.propagate(c, direction="heisenberg", memory_limit=limit, auto_truncate=False)
    with pytest.raises(ValueError, match="below what the process already uses"):
        obs.propagate(c, memory_limit=1024)
    with pytest.raises(ValueError):
        obs.propagate(c, memory_limit="12Q")
