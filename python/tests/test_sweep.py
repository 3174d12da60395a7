"""Parameter sweeps: Parameter templates, PauliSum.propagate(sweep=) against separate runs, SweptPauliSum,
SweepStats and the errors."""

import math

import numpy as np
import pytest

import paulistrings as ps
from paulistrings import Circuit, Parameter, PauliSum, SweepStats, SweptPauliSum, gates, noise, truncation

TH, PHI, P, G = Parameter("th"), Parameter("phi"), Parameter("p"), Parameter("g")

SWEEP = {
    "th": [0.0, 0.3, -1.1, 2.5],
    "phi": np.array([0.7, -0.2, 1.9, 0.05]),
    "p": [0.0, 0.01, 0.05, 0.2],
    "g": (0.1, 0.0, 0.3, 0.02),
}


def _random_circuit(n=4, noisy=True):
    """A fixed, irregular circuit with several gate kinds; Parameters in angles and noise strengths."""
    rng = np.random.default_rng(7)
    c = Circuit(n)
    for layer in range(3):
        for q in range(n):
            c.rx(TH, q) if (q + layer) % 2 else c.ry(0.3 * q + 0.1, q)
        c.h(layer % n)
        c.cnot(0, 1)
        c.cz(1, 2)
        c.swap(2, 3)
        c.rz(2 * PHI + 0.25, (layer + 1) % n)
        c.pauli_rotation("XYZ", [0, 2, 3], -PHI)
        c.append(gates.rz(TH / 2 - 0.1, 3))
        c.s(1)
        m = np.linalg.qr(rng.normal(size=(2, 2)) + 1j * rng.normal(size=(2, 2)))[0]
        c.unitary_1q(2, m)
        if noisy:
            c.depolarize(P, [0, 1])
            c.dephase(0.5 * P, [2])
            c.amplitude_damping(G, [3])
            c.pauli_channel(P / 4, 0.01, G / 3, [1])
            c.depolarize2(P / 2, [(0, 3)])
            c.append(noise.dephase(G, 0))
    return c


def _assignment(sweep, k):
    return {name: float(np.asarray(values, dtype=float)[k]) for name, values in sweep.items()}


def _assert_same(a: PauliSum, b: PauliSum, tol=1e-12):
    d = (a - b).coefficients_array()
    assert np.max(np.abs(d), initial=0.0) < tol


OBSERVABLES = {
    "real": {"ZIII": 1.0, "IXYI": -0.5, "IIIZ": 0.25},
    "complex": {"ZIII": 1.0 + 0.5j, "XYZX": -0.25j, "IIYI": 0.75},
}


@pytest.mark.parametrize("direction", ["forward", "heisenberg"])
@pytest.mark.parametrize("observable", sorted(OBSERVABLES))
def test_every_column_equals_its_own_run(direction, observable):
    obs = PauliSum.from_strings(OBSERVABLES[observable], num_qubits=4)
    c = _random_circuit()
    out = obs.propagate(c, direction=direction, sweep=SWEEP)
    assert isinstance(out, SweptPauliSum)
    assert out.columns == 4 and out.num_qubits == 4
    values = []
    for k in range(out.columns):
        own = obs.propagate(c.bind(_assignment(SWEEP, k)), direction=direction)
        _assert_same(out.column(k), own)
        values.append([own.expectation(s) for s in ("z+", "x+", "01+-")])
    for j, state in enumerate(("z+", "x+", "01+-")):
        e = out.expectation(state)
        assert isinstance(e, np.ndarray) and e.dtype == np.complex128 and e.shape == (4,)
        np.testing.assert_allclose(e, [v[j] for v in values], rtol=0, atol=1e-12)
    np.testing.assert_allclose(out.norms_squared(), [sum(abs(x) ** 2 for x in out.column(k).coefficients())
                                                     for k in range(4)], rtol=1e-12)


def test_one_column_and_fixed_values():
    obs = PauliSum.from_strings({"XXII": 1.0}, num_qubits=4)
    c = _random_circuit()
    # A number fixes a parameter in every column; lists give K.
    out = obs.propagate(c, sweep={"th": [0.4], "phi": 0.2, "p": 0.03, "g": np.float64(0.1)})
    assert out.columns == 1
    own = obs.propagate(c.bind({"th": 0.4, "phi": 0.2, "p": 0.03, "g": 0.1}))
    _assert_same(out.column(0), own)
    _assert_same(out.column(-1), own)
    out = obs.propagate(c, sweep={"th": 0.4, "phi": 0.2, "p": [0.03, 0.0], "g": 0.1})
    assert out.columns == 2
    _assert_same(out.column(0), own)
    assert list(out.parameters["th"]) == [0.4, 0.4]


def test_stats_report_each_columns_discarded_weight():
    obs = PauliSum.from_strings({"ZIII": 0.6, "IXII": 0.8}, num_qubits=4)
    c = _random_circuit(noisy=False)
    sweep = {"th": [0.0, 0.4, 1.3], "phi": [0.1, 0.9, -0.6]}
    out, stats = obs.propagate_with_stats(c, sweep=sweep)
    assert isinstance(stats, SweepStats) and isinstance(stats, ps.PropagationStats)
    assert stats.columns == 3 and stats.column_discarded_weight == [0.0, 0.0, 0.0]
    assert stats.column_groups == 1 and stats.column_splits == 0  # without truncation nothing splits
    assert stats.layers == len(c) and stats.final_terms == len(out)
    # A unitary circuit keeps Σ|c|²: what a column lacks at the end is what truncation took from it.
    out, stats = obs.propagate_with_stats(c, truncation.coeff(0.02), sweep=sweep)
    lost = np.array(stats.column_discarded_weight)
    assert np.all(lost > 0.0)
    np.testing.assert_allclose(out.norms_squared() + lost, 1.0, rtol=0, atol=1e-12)
    assert stats.total_discarded_weight >= max(lost) - 1e-15
    assert "columns=3" in repr(stats)


@pytest.mark.parametrize("policy", [truncation.coeff(0.05), truncation.weight(2), truncation.topn(12)])
def test_identical_columns_truncate_as_their_own_run(policy):
    obs = PauliSum.from_strings(OBSERVABLES["complex"], num_qubits=4)
    c = _random_circuit()
    values = {"th": 0.7, "phi": -0.4, "p": 0.02, "g": 0.05}
    own = obs.propagate(c.bind(values), policy, direction="heisenberg")
    out = obs.propagate(c, policy, direction="heisenberg", sweep={**values, "th": [0.7, 0.7, 0.7]})
    for k in range(3):
        _assert_same(out.column(k), own)


def test_a_column_keeps_at_least_the_terms_of_its_own_run():
    # A term stays while any column keeps it, so every column holds its own run's terms at a single gate.
    obs = PauliSum.from_strings({"ZIII": 1.0, "IZII": 0.2, "IIZI": 0.01}, num_qubits=4)
    c = Circuit(4)
    c.rx(TH, 0)
    c.rx(0.5 * TH, 1)
    out = obs.propagate(c, truncation.coeff(0.05), sweep={"th": [0.05, 1.5]})
    for k, th in enumerate([0.05, 1.5]):
        own = obs.propagate(c.bind({"th": th}), truncation.coeff(0.05))
        col = out.column(k)
        assert len(col) >= len(own)
        extra = (col - own).coefficients_array()  # only terms below the cut that another column kept
        assert np.max(np.abs(extra), initial=0.0) < 0.05
    assert len(out.column(0)) > len(obs.propagate(c.bind({"th": 0.05}), truncation.coeff(0.05)))


def test_threads_agree():
    obs = PauliSum.from_strings(OBSERVABLES["real"], num_qubits=4)
    c = _random_circuit()
    one = obs.propagate(c, threads=1, sweep=SWEEP)
    two = obs.propagate(c, threads=2, sweep=SWEEP)
    np.testing.assert_allclose(one.expectation("x+"), two.expectation("x+"), rtol=0, atol=1e-12)


def test_memory_options_and_logging(caplog):
    import logging

    obs = PauliSum.from_strings(OBSERVABLES["real"], num_qubits=4)
    c = _random_circuit()
    plain = obs.propagate(c, sweep=SWEEP)
    roomy = obs.propagate(c, sweep=SWEEP, memory_limit="64G", memory_guard="64G")
    np.testing.assert_allclose(roomy.expectation("x+"), plain.expectation("x+"), rtol=0, atol=1e-12)
    with pytest.raises(ps.HostMemoryExceeded):
        obs.propagate(c, sweep=SWEEP, memory_guard=1000)
    with caplog.at_level(logging.DEBUG, logger="paulistrings.propagate"):
        obs.propagate(c, sweep=SWEEP)
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0].startswith("propagate: sweep of g, p, phi, th:")
    assert sum(line.startswith("layer ") for line in lines) == len(c)


def test_kicked_ising_theta_h_sweep():
    n, steps = 5, 3
    th = Parameter("theta_h")
    c = Circuit(n)
    for _ in range(steps):
        for q in range(n):
            c.rx(th, q)
        for q in range(n - 1):
            c.pauli_rotation("ZZ", [q, q + 1], -math.pi / 2)
    obs = PauliSum.from_strings({"IIZII": 1.0}, num_qubits=n)
    values = np.linspace(0.0, math.pi / 2, 6)
    out = obs.propagate(c, direction="heisenberg", sweep={"theta_h": values})
    e = out.expectation("z+")
    own = [obs.propagate(c.bind({"theta_h": v}), direction="heisenberg").expectation("z+") for v in values]
    np.testing.assert_allclose(e, own, rtol=0, atol=1e-12)
    assert e[0] == pytest.approx(1.0)  # θh = 0: |0…0⟩ is an eigenstate


# ---- the template circuit ----


def test_template_circuit_operations_bind_like_their_bound_circuits():
    c = _random_circuit(noisy=False)
    v = {"th": -1.1, "phi": 1.9}
    bound = c.bind(v)

    def bind(template):  # bind names exactly the template's parameters
        return template.bind({name: v[name] for name in template.parameters})

    assert c.parameters == ["phi", "th"] and bound.parameters == []
    assert "parameters=['phi', 'th']" in repr(c)
    assert len(bound) == len(c)
    for key in (slice(3, 17), slice(None, None, -2), slice(-5, None), slice(2, 30, 3)):
        assert bind(c[key]).gates == bound[key].gates
    assert (c + c).bind(v).gates == (bound + bound).gates
    assert c.adjoint().bind(v).gates == bound.adjoint().gates
    assert c.adjoint().adjoint().bind(v).gates == bound.gates
    assert c[:3].parameters == ["th"] and c[:0].parameters == [] and c[:0]._p is None
    d = c.__copy__()
    d.extend(d)
    assert d.bind(v).gates == (bound + bound).gates
    assert type(c[0]) is ps.Channel  # ry(0.1, 0): no Parameter
    assert "Parameter('th')" in repr(c[1])
    e = Circuit(4)
    e.append(c[1])  # a Parameter's channel read back keeps its Parameter
    assert e.parameters == ["th"]
    assert bind(e).gates == bound[1:2].gates


def test_the_kicked_ising_workload_takes_parameters():
    h, zz = Parameter("h"), Parameter("zz")
    template = ps.workloads.kicked_ising_circuit(2, h, zz)
    assert template.parameters == ["h", "zz"] and len(template) == 2 * 271
    assert template.bind({"h": 0.3, "zz": -0.7}).gates == ps.workloads.kicked_ising_circuit(2, 0.3, -0.7).gates
    assert ps.workloads.kicked_ising_circuit(1, h).bind({"h": 0.2}).gates == ps.workloads.kicked_ising_circuit(
        1, 0.2).gates
    obs = PauliSum.from_strings({"Z62": 1.0}, num_qubits=127)
    out = obs.propagate(ps.workloads.kicked_ising_circuit(1, h), direction="heisenberg",
                        sweep={"h": [0.0, 0.4, 1.0]})
    np.testing.assert_allclose(out.expectation("z+"), np.cos([0.0, 0.4, 1.0]), rtol=0, atol=1e-12)


def test_affine_parameters():
    x = Parameter("x")
    c = Circuit(1)
    c.rz(2 * x + 0.5, 0)
    c.rz(-x, 0)
    c.rz(1.0 - x / 4, 0)
    c.rz(np.float64(3.0) * x - 1, 0)
    thetas = [g["theta"] for g in c.bind({"x": 0.2}).gates]
    assert thetas == pytest.approx([0.9, -0.2, 0.95, -0.4])
    assert repr(2 * x + 0.5) == "2.0*Parameter('x') + 0.5"
    with pytest.raises(TypeError):
        x * x
    with pytest.raises(TypeError):
        x + Parameter("y")
    with pytest.raises(TypeError):
        Parameter(3)
    with pytest.raises(ValueError):
        Parameter("")


def test_an_ordinary_circuit_is_unchanged():
    c = Circuit(2)
    c.rx(0.3, 0)
    c.depolarize(0.1, [0, 1])
    assert c.parameters == [] and c._p is None
    assert c.bind({}).gates == c.gates
    assert type(c[0]) is ps.Channel


# ---- errors ----


def _small():
    c = Circuit(2)
    c.rx(TH, 0)
    c.depolarize(P, [1])
    return c, PauliSum.from_strings({"ZZ": 1.0}, num_qubits=2)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"device": 0}, "device="),
        ({"partitions": 2}, "partitions="),
        ({"comm": object()}, "comm="),
        ({"partition_row_seed": 3}, "partition_row_seed="),
        ({"route_orbits_from": 4}, "route_orbits_from="),
        ({"nccl": True}, "nccl"),
        ({"policy": truncation.collapse_sample(100, 3)}, "collapse_sample"),
    ],
)
def test_what_a_sweep_refuses(kwargs, match):
    c, obs = _small()
    with pytest.raises(ValueError, match=match):
        obs.propagate(c, sweep={"th": [0.1, 0.2], "p": 0.0}, **kwargs)


def test_unbound_and_unknown_parameters():
    c, obs = _small()
    with pytest.raises(ValueError, match="unbound Parameters \\('p', 'th'\\)"):
        obs.propagate(c)
    with pytest.raises(ValueError, match="Parameter 'p' has no value"):
        obs.propagate(c, sweep={"th": [0.1]})
    with pytest.raises(ValueError, match="parameter 'zeta'"):
        obs.propagate(c, sweep={"th": [0.1], "p": [0.0], "zeta": [1.0]})
    plain = Circuit(2)
    plain.h(0)
    with pytest.raises(ValueError, match="parameter 'th'.*no Parameter"):
        obs.propagate(plain, sweep={"th": [0.1]})
    with pytest.raises(ValueError, match="unbound Parameters"):
        c.gates
    with pytest.raises(ValueError, match="Parameter 'th' has no value"):
        c.bind({"p": 0.1})
    with pytest.raises(ValueError, match="parameter 'q'"):
        c.bind({"p": 0.1, "th": 0.0, "q": 1.0})


@pytest.mark.parametrize(
    "sweep, error, match",
    [
        ({"th": [0.1, 0.2], "p": [0.0, 0.1, 0.2]}, ValueError, "'th' has 2 values, 'p' has 3"),
        ({"th": [], "p": 0.0}, ValueError, "sweep\\['th'\\]: the list of values is empty"),
        ({"th": [0.1, float("nan")], "p": 0.0}, ValueError, "sweep\\['th'\\]: value nan at index 1"),
        ({"th": [0.1], "p": [math.inf]}, ValueError, "sweep\\['p'\\]: value inf at index 0"),
        ({"th": float("-inf"), "p": 0.0}, ValueError, "sweep\\['th'\\]"),
        ({"th": [0.1j], "p": 0.0}, TypeError, "sweep\\['th'\\]: expected real numbers, got complex"),
        ({"th": ["a"], "p": 0.0}, TypeError, "sweep\\['th'\\]"),
        ({"th": "0.1", "p": 0.0}, TypeError, "sweep\\['th'\\]"),
        ({"th": [[0.1, 0.2]], "p": 0.0}, ValueError, "sweep\\['th'\\]: expected a 1-D"),
        ({}, ValueError, "sweep: the dict is empty"),
        ([("th", [0.1])], TypeError, "sweep must be a dict"),
        ({"th": [0.1], "p": [1.5]}, ValueError, "sweep column 0: parameters p=1.5, th=0.1: depolarize"),
    ],
)
def test_bad_sweep_values(sweep, error, match):
    c, obs = _small()
    with pytest.raises(error, match=match):
        obs.propagate(c, sweep=sweep)


def test_a_template_checks_its_fixed_arguments_at_once():
    c = Circuit(2)
    with pytest.raises(ValueError, match="out of range"):
        c.rx(TH, 5)
    with pytest.raises(ValueError, match="at most 1"):
        c.pauli_channel(P, 0.6, 0.6, [0])
    with pytest.raises(ValueError, match="differ"):
        c.depolarize2(P, [(1, 1)])
    assert len(c) == 0 and c.parameters == []
    c.rx(TH, 0)
    with pytest.raises(TypeError, match="'th'"):
        c.bind({"th": 1j})
    with pytest.raises(ValueError, match="'th': the value nan is not finite"):
        c.bind({"th": math.nan})


def test_swept_sum_refuses_pauli_sum_operations():
    c, obs = _small()
    out = obs.propagate(c, sweep={"th": [0.1, 0.2, 0.3], "p": 0.01})
    assert repr(out).startswith("SweptPauliSum(num_qubits=2, columns=3")
    assert len(out) >= 1 and not out.is_complex
    with pytest.raises(AttributeError, match="column\\(k\\)"):
        out.x_array()
    with pytest.raises(AttributeError, match="column\\(k\\)"):
        out.propagate(c)
    with pytest.raises(TypeError):
        out + out
    with pytest.raises(IndexError):
        out.column(3)
    with pytest.raises(TypeError):
        out.column(1.0)
    with pytest.raises(TypeError):
        SweptPauliSum()
    e = out.expectation_stabilizer(["+ZI", "+IZ"])
    np.testing.assert_allclose(e, out.expectation("z+"), rtol=0, atol=1e-12)


def test_checkpoints_and_resume_give_the_uninterrupted_arrays(tmp_path):
    # A sweep with a gradient, written every 7 layers without an interruption, then resumed from the last
    # checkpoint: the same expectation and gradient arrays, bit for bit.
    obs = PauliSum.from_strings(OBSERVABLES["complex"], num_qubits=4)
    c = _random_circuit()
    policy = truncation.coeff(1e-4)
    args = dict(direction="heisenberg", sweep=SWEEP, gradient=["th"], threads=2)
    full, full_stats = obs.propagate_with_stats(c, policy, **args)
    path = tmp_path / "sweep.ckpt"
    chunked, stats = obs.propagate_with_stats(c, policy, checkpoint=path, checkpoint_every=7, **args)
    assert path.exists()
    assert stats.layers == len(c) and stats.terms_out == full_stats.terms_out
    resumed, rstats = obs.propagate_with_stats(c, policy, resume=str(path), **args)
    last = (len(c) - 1) // 7 * 7
    assert rstats.application_index[0] == last and rstats.layers == len(c) - last
    for out in (chunked, resumed):
        for state in ("z+", "x+", "01+-"):
            assert np.array_equal(out.expectation(state), full.expectation(state))
            assert np.array_equal(out.expectation_gradient("th", state), full.expectation_gradient("th", state))
        assert len(out) == len(full)
    # A checkpoint refuses another sweep: other values, another policy or observable, no gradient.
    other = dict(args, sweep={**SWEEP, "th": [0.0, 0.3, -1.1, 2.4]})
    with pytest.raises(ValueError, match="different run"):
        obs.propagate(c, policy, resume=path, **other)
    with pytest.raises(ValueError, match="different run"):
        obs.propagate(c, truncation.coeff(1e-5), resume=path, **args)
    with pytest.raises(ValueError, match="different run"):
        (obs * 2).propagate(c, policy, resume=path, **args)
    with pytest.raises(ValueError, match="holds 8 coefficient columns a term but this sweep has 4"):
        obs.propagate(c, policy, resume=path, direction="heisenberg", sweep=SWEEP)
    with pytest.raises(ValueError, match="format version 2 holds several coefficient columns"):
        obs.propagate(c.bind(_assignment(SWEEP, 0)), policy, direction="heisenberg", resume=path)
    with pytest.raises(FileNotFoundError):
        obs.propagate(c, policy, resume=tmp_path / "missing.ckpt", **args)
    with pytest.raises(ValueError, match="checkpoint_every needs checkpoint"):
        obs.propagate(c, policy, checkpoint_every=3, **args)
