"""engine="column": the single-threaded column-index engine (docs/design.md §7.5) gives the default
engine's sum to rounding, resumes from its checkpoints to the uninterrupted bits, and is refused where it
cannot run (sweeps, partitions); unknown engine names are refused."""

import pytest

from paulistrings import Circuit, Parameter, PauliSum, truncation


def as_dict(s):
    x, z, c = s.x_array(), s.z_array(), s.coefficients_array()
    return {(tuple(int(v) for v in x[i]), tuple(int(v) for v in z[i])): complex(c[i]) for i in range(len(s))}


def circuit(n=8, steps=3):
    c = Circuit(n)
    for s in range(steps):
        for q in range(n):
            c.rx(0.3 + 0.05 * q, q)
        for q in range(n - 1):
            c.pauli_rotation("XY"[s % 2] + "Z", [q, q + 1], 0.2 + 0.01 * q)
        c.cnot(0, n - 1)
        c.depolarize2(0.02, [(1, 2)])
        c.amplitude_damping(0.05, [3])
    return c


def start(n=8):
    return PauliSum.from_strings({"Z" * n: 1.0, "I" * (n - 1) + "X": 0.5, "X" + "I" * (n - 1): -0.25})


@pytest.mark.parametrize("direction", ["heisenberg", "forward"])
@pytest.mark.parametrize("policy", [None, truncation.coeff(1e-4), truncation.weight(4)])
def test_column_equals_the_default_engine(direction, policy):
    c = circuit()
    default = start().propagate(c, policy, direction=direction)
    column = start().propagate(c, policy, direction=direction, engine="column", threads=2)
    a, b = as_dict(column), as_dict(default)
    assert set(a) == set(b)
    for k in b:
        assert abs(a[k] - b[k]) <= 1e-12 * max(1.0, abs(b[k])), k
    for legacy in ("cpu", "sorted", "auto", "direct"):  # the default engine
        assert as_dict(start().propagate(c, policy, direction=direction, engine=legacy)) == b


def test_column_resumes_to_the_uninterrupted_bits(tmp_path):
    c = circuit(steps=4)
    policy = truncation.coeff(1e-6)
    full = start().propagate(c, policy, direction="heisenberg", engine="column")
    path = tmp_path / "run.ckpt"
    chunked = start().propagate(c, policy, direction="heisenberg", engine="column", checkpoint=path,
                                checkpoint_every=7)
    assert as_dict(chunked) == as_dict(full)
    resumed = start().propagate(c, policy, direction="heisenberg", engine="column", resume=path)
    assert as_dict(resumed) == as_dict(full)


def test_bad_engines_and_where_column_cannot_run_are_refused():
    c = circuit()
    with pytest.raises(ValueError, match=r"engine must be 'cpu', 'column'.*got 'gpu'"):
        start().propagate(c, engine="gpu")
    with pytest.raises(ValueError, match="the column engine runs in one process on one partition"):
        start().propagate(c, engine="column", partitions=2)
    c2 = Circuit(2)
    c2.rx(Parameter("th"), 0)
    with pytest.raises(ValueError, match="the column engine has no sweep"):
        PauliSum.from_strings({"ZI": 1.0}).propagate(c2, engine="column", sweep={"th": [0.1, 0.2]})
