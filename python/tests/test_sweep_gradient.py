"""Gradients of parameter sweeps: PauliSum.propagate(sweep=..., gradient=[...]) against central finite
differences and the parameter-shift rule of separate runs, values unchanged by asking for a gradient, the
derivative columns' discarded weight, and the errors."""

import math

import numpy as np
import pytest

from paulistrings import Circuit, Parameter, PauliSum, SweptPauliSum, gates, noise, truncation

TH, PHI, P, G = Parameter("th"), Parameter("phi"), Parameter("p"), Parameter("g")

STATES = ("z+", "x+", "01+-")


def _circuit(n=4):
    """th in several rotations (affine expressions, an adjoint half), p in every affine noise kind, g in
    amplitude damping (swept, never differentiated), phi in one rotation."""
    rng = np.random.default_rng(11)
    c = Circuit(n)
    for layer in range(2):
        for q in range(n):
            c.rx(TH, q) if (q + layer) % 2 else c.ry(0.2 * q + 0.1, q)
        c.cnot(0, 1)
        c.rz(2 * TH + 0.1, (layer + 1) % n)
        c.pauli_rotation("XYZ", [0, 2, 3], -TH / 3)
        c.cz(1, 2)
        c.append(gates.ry(PHI - 0.4, 3))
        m = np.linalg.qr(rng.normal(size=(2, 2)) + 1j * rng.normal(size=(2, 2)))[0]
        c.unitary_1q(2, m)
        c.depolarize(P, [0, 1])
        c.dephase(0.5 * P, [2])
        c.pauli_channel(P / 4, 0.01, 2 * P, [1])
        c.depolarize2(P / 2 + 0.01, [(0, 3)])
        c.amplitude_damping(G, [3])
        c.append(noise.dephase(0.02, 0))
    tail = Circuit(n)
    tail.rx(3 * TH - 0.2, 1)
    tail.pauli_rotation("ZZ", [1, 2], TH)
    return c + tail.adjoint()


SWEEP = {"th": [0.3, -1.2, 2.0], "phi": [0.5, 0.1, -0.7], "p": [0.05, 0.01, 0.12], "g": 0.1}

OBSERVABLES = {
    "real": {"ZIII": 1.0, "IXYI": -0.5, "IIIZ": 0.25},
    "complex": {"ZIII": 1.0 + 0.5j, "XYZX": -0.25j, "IIYI": 0.75},
}


def _own(obs, c, values, direction, policy=None):
    return obs.propagate(c.bind(values), policy, direction=direction)


def _column_values(sweep, k):
    return {name: float(np.broadcast_to(np.asarray(v, dtype=float), (3,))[k]) for name, v in sweep.items()}


def _max_abs(s: PauliSum) -> float:
    return float(np.max(np.abs(s.coefficients_array()), initial=0.0))


@pytest.mark.parametrize("direction", ["forward", "heisenberg"])
@pytest.mark.parametrize("observable", sorted(OBSERVABLES))
def test_gradients_match_central_differences(direction, observable):
    obs = PauliSum.from_strings(OBSERVABLES[observable], num_qubits=4)
    c = _circuit()
    out = obs.propagate(c, direction=direction, sweep=SWEEP, gradient=["th", "p"])
    assert isinstance(out, SweptPauliSum)
    assert out.columns == 3 and out.gradients == ["th", "p"]
    h = 1e-5
    for name in ("th", "p"):
        grads = {s: out.expectation_gradient(name, s) for s in STATES}
        for s in STATES:
            assert grads[s].dtype == np.complex128 and grads[s].shape == (3,)
        for k in range(3):
            values = _column_values(SWEEP, k)
            up = _own(obs, c, {**values, name: values[name] + h}, direction)
            down = _own(obs, c, {**values, name: values[name] - h}, direction)
            difference = (up - down) * (1 / (2 * h))
            assert _max_abs(out.gradient_column(name, k) - difference) < 1e-6
            for s in STATES:
                assert abs(grads[s][k] - difference.expectation(s)) < 1e-6
            assert _max_abs(out.gradient_column(name, k)) > 1e-3  # the test can fail
    plain = obs.propagate(c, direction=direction, sweep=SWEEP)
    for k in range(3):
        assert _max_abs(out.column(k) - plain.column(k)) < 1e-13


@pytest.mark.parametrize("direction", ["forward", "heisenberg"])
@pytest.mark.parametrize("scale", [1.0, -2.5])
def test_one_rotation_gives_the_parameter_shift_rule_exactly(direction, scale):
    obs = PauliSum.from_strings({"ZII": 1.0, "IXI": 0.5, "YYZ": -0.3}, num_qubits=3)
    c = Circuit(3)
    c.h(0)
    c.cnot(0, 1)
    c.ry(0.4, 2)
    c.pauli_rotation("XZ", [1, 2], scale * TH + 0.3)
    c.cnot(1, 2)
    c.depolarize(0.03, [0, 2])
    c.rz(-0.7, 1)
    values = [0.0, 0.9, -2.2]
    out = obs.propagate(c, direction=direction, sweep={"th": values}, gradient="th")
    assert out.gradients == ["th"]
    for k, th in enumerate(values):
        # d/dth f(scale·th + 0.3) = scale · (f(θ + π/2) − f(θ − π/2)) / 2, θ = scale·th + 0.3.
        up = _own(obs, c, {"th": th + math.pi / (2 * scale)}, direction)
        down = _own(obs, c, {"th": th - math.pi / (2 * scale)}, direction)
        shift = (up - down) * (scale / 2)
        assert _max_abs(out.gradient_column("th", k) - shift) < 1e-12
        for s in STATES[:2] + ("0+1",):
            assert abs(out.expectation_gradient("th", s)[k] - shift.expectation(s)) < 1e-12
    assert _max_abs(out.gradient_column("th", 1)) > 0.1


def _same_bits(a: PauliSum, b: PauliSum):
    assert np.array_equal(a.x_array(), b.x_array()) and np.array_equal(a.z_array(), b.z_array())
    assert np.array_equal(a.coefficients_array(), b.coefficients_array())


@pytest.mark.parametrize("policy", [truncation.coeff(0.02), truncation.weight(2), truncation.topn(20)])
@pytest.mark.parametrize("direction", ["forward", "heisenberg"])
def test_a_gradient_changes_no_value(policy, direction):
    obs = PauliSum.from_strings(OBSERVABLES["complex"], num_qubits=4)
    c = _circuit()
    plain, plain_stats = obs.propagate_with_stats(c, policy, direction=direction, sweep=SWEEP)
    out, stats = obs.propagate_with_stats(c, policy, direction=direction, sweep=SWEEP, gradient=["p", "th", "phi"])
    assert out.columns == plain.columns == 3 and len(out) == len(plain)
    for k in range(3):
        _same_bits(out.column(k), plain.column(k))
    assert np.array_equal(out.expectation("x+"), plain.expectation("x+"))
    assert np.array_equal(out.norms_squared(), plain.norms_squared())
    assert stats.column_discarded_weight == plain_stats.column_discarded_weight
    assert stats.terms_out == plain_stats.terms_out
    assert sum(stats.column_discarded_weight) > 0.0
    # The derivative columns lose what the dropped strings carried: the layout is one list of K per name.
    assert list(stats.gradient_discarded_weight) == ["p", "th", "phi"]
    assert all(len(w) == 3 for w in stats.gradient_discarded_weight.values())
    assert sum(stats.gradient_discarded_weight["th"]) > 0.0
    assert plain_stats.gradient_discarded_weight == {}


def test_untruncated_derivatives_lose_nothing():
    obs = PauliSum.from_strings(OBSERVABLES["real"], num_qubits=4)
    out, stats = obs.propagate_with_stats(_circuit(), sweep=SWEEP, gradient=["th"])
    assert stats.columns == 3 and stats.column_discarded_weight == [0.0] * 3
    assert stats.gradient_discarded_weight == {"th": [0.0] * 3}
    assert "gradients=['th']" in repr(out)


def test_a_strength_near_the_edge_of_its_range():
    # px + py + pz ≤ 1 leaves px = 0.1 room neither a quarter up nor a quarter down: a closer second point.
    obs = PauliSum.from_strings({"ZI": 1.0, "XY": 0.5}, num_qubits=2)
    c = Circuit(2)
    c.rx(0.7, 0)
    c.cnot(0, 1)
    c.pauli_channel(P, 0.7, 0.1, [0, 1])
    c.depolarize(P * 5, [1])
    values = [0.1, 0.0, 0.02]
    out = obs.propagate(c, sweep={"p": values}, gradient=["p"], direction="heisenberg")
    h = 1e-5
    for k, p in enumerate(values):
        # A one-sided difference of second order (p = 0 has no left side).
        runs = [_own(obs, c, {"p": p + j * h}, "heisenberg") for j in range(3)]
        difference = (runs[1] * 4 - runs[0] * 3 - runs[2]) * (1 / (2 * h))
        assert _max_abs(out.gradient_column("p", k) - difference) < 1e-8
    assert _max_abs(out.gradient_column("p", 0)) > 0.1
    full = Circuit(1)
    full.pauli_channel(P, 0.5, 0.5, [0])
    with pytest.raises(ValueError, match="sweep column 0: gradient: layer 0's channel takes no value of 'p'"):
        PauliSum.from_strings({"Z": 1.0}, num_qubits=1).propagate(full, sweep={"p": [0.0]}, gradient=["p"])


def test_result_accessors():
    obs = PauliSum.from_strings({"ZI": 1.0}, num_qubits=2)
    c = Circuit(2)
    c.rx(TH, 0)
    c.depolarize(P, [1])
    out = obs.propagate(c, sweep={"th": [0.1, 0.2], "p": 0.0}, gradient=["th"])
    np.testing.assert_allclose(out.expectation("z+"), np.cos([0.1, 0.2]), rtol=0, atol=1e-15)
    np.testing.assert_allclose(out.expectation_gradient("th", "z+"), -np.sin([0.1, 0.2]), rtol=0, atol=1e-15)
    assert out.norms_squared().shape == (2,)
    assert out.gradient_column("th", -1).expectation("z+") == pytest.approx(-math.sin(0.2), abs=1e-15)
    with pytest.raises(ValueError, match="no gradient with respect to 'p'.*\\['th'\\]"):
        out.expectation_gradient("p", "z+")
    with pytest.raises(ValueError, match="no gradient with respect to 'th'.*holds none"):
        obs.propagate(c, sweep={"th": [0.1], "p": 0.0}).gradient_column("th", 0)
    with pytest.raises(IndexError):
        out.gradient_column("th", 2)
    with pytest.raises(IndexError):
        out.column(2)
    with pytest.raises(TypeError):
        out.expectation_gradient(0, "z+")
    with pytest.raises(TypeError):
        out.expectation_gradient("th", 0)
    assert obs.propagate(c, sweep={"th": [0.1], "p": 0.0}, gradient=[]).gradients == []


def _small():
    c = Circuit(2)
    c.rx(TH, 0)
    c.depolarize(P, [1])
    c.amplitude_damping(G, [0])
    return c, PauliSum.from_strings({"ZZ": 1.0}, num_qubits=2)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"sweep": None, "gradient": ["th"]}, ValueError, "gradient= needs sweep="),
        ({"gradient": ["zeta"]}, ValueError, "gradient: no channel of the circuit uses the parameter 'zeta'"),
        ({"gradient": ["th", "th"]}, ValueError, "'th' is named twice"),
        ({"gradient": ["g"]}, ValueError, "amplitude_damping's gamma at layer 2 depends on 'g'"),
        ({"gradient": [1]}, TypeError, "gradient: parameter names must be str"),
        ({"gradient": 3}, TypeError, "gradient must be a list"),
        ({"gradient": ["th"], "device": 0}, ValueError, "device="),
        ({"gradient": ["th"], "partitions": 2}, ValueError, "partitions="),
    ],
)
def test_what_a_gradient_refuses(kwargs, error, match):
    c, obs = _small()
    kwargs = {"sweep": {"th": [0.1, 0.2], "p": 0.0, "g": 0.1}, **kwargs}
    with pytest.raises(error, match=match):
        obs.propagate(c, **kwargs)
    with pytest.raises(error, match=match):
        obs.propagate_with_stats(c, **kwargs)


def test_the_example_of_docs_python_md():
    theta = Parameter("theta")
    c = Circuit(4)
    for _ in range(2):
        for q in range(4):
            c.rx(theta, q)
        for q in range(3):
            c.pauli_rotation("ZZ", [q, q + 1], 2 * theta + 0.1)
        c.depolarize(P, range(4))
    obs = PauliSum.from_strings({"Z1 Z2": 1.0}, num_qubits=4)
    out = obs.propagate(c, direction="heisenberg", sweep={"theta": [0.2, 0.6], "p": 0.01}, gradient=["theta", "p"])
    np.testing.assert_array_equal(out.expectation("z+").real.round(4), [0.8367, 0.7994])
    np.testing.assert_array_equal(out.expectation_gradient("theta", "z+").real.round(4), [-0.8145, 0.1349])
    np.testing.assert_array_equal(out.expectation_gradient("p", "z+").real.round(4), [-4.5227, -4.3209])


@pytest.mark.parametrize("direction", ["forward", "heisenberg"])
def test_angles_at_clifford_points_and_strengths_at_their_ends(direction):
    # θ ± π/2 lands on 0 and π (rotations a preparation could treat apart); p at 0 and 1 has a second
    # strength on one side only.
    c = Circuit(2)
    c.rx(TH, 0)
    c.cnot(0, 1)
    c.pauli_rotation("ZY", [0, 1], TH - math.pi / 2)
    c.dephase(P, [0])
    c.depolarize2(P, [(0, 1)])
    obs = PauliSum.from_strings({"ZZ": 1.0, "YI": 0.3}, num_qubits=2)
    thetas, strengths = [math.pi / 2, 0.0, math.pi, -math.pi / 2], [0.0, 1.0, 0.5, 0.0]
    out = obs.propagate(c, direction=direction, sweep={"th": thetas, "p": strengths}, gradient=["th", "p"])
    h = 1e-5
    for k, (th, p) in enumerate(zip(thetas, strengths)):
        up, down = (_own(obs, c, {"th": th + s, "p": p}, direction) for s in (h, -h))
        assert _max_abs(out.gradient_column("th", k) - (up - down) * (1 / (2 * h))) < 1e-6
        side = -1.0 if p == 1.0 else 1.0
        runs = [_own(obs, c, {"th": th, "p": p + side * j * h}, direction) for j in range(3)]
        difference = (runs[1] * 4 - runs[0] * 3 - runs[2]) * (side / (2 * h))
        assert _max_abs(out.gradient_column("p", k) - difference) < 1e-8
