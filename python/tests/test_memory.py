"""Memory from Python: the host memory guard (``paulistrings.HostMemoryExceeded``, a ``MemoryError``, with
the checkpoint it writes and ``memory_guard=False``), and on a GPU ``memory_limit=`` in device bytes and
an out-of-memory device (injected: ``_core._fail_device_allocations_from``) that leaves a ``GpuPauliSum``
as it was and usable. The guard's allowance is set small with ``memory_guard=BYTES``; the GPU tests skip
("no GPU: <reason>") without a device.
"""

import pytest

import paulistrings
from paulistrings import Circuit, PauliSum, _core, truncation


def growing_circuit(n=10, rounds=3):
    c = Circuit(n)
    for r in range(rounds):
        for q in range(n):
            c.rx(0.7, q)
        for q in range(r % 2, n - 1, 2):
            c.pauli_rotation("ZZ", [q, q + 1], 0.9)
    return c


def observable(n=10):
    return PauliSum.from_strings({"Z" * n: 1.0}, num_qubits=n)


def terms(s):
    x, z, c = s.x_array(), s.z_array(), s.coefficients_array()
    return sorted((tuple(map(int, x[i])), tuple(map(int, z[i])), complex(c[i])) for i in range(len(s)))


def test_host_memory_exceeded_is_a_memory_error():
    assert issubclass(paulistrings.HostMemoryExceeded, MemoryError)
    assert "HostMemoryExceeded" in paulistrings.__all__


def test_the_guard_reads_the_memory_this_process_sees():
    # What the guard reads in this process (run/memory_budget.h) against /proc/meminfo read here: the
    # kernel's MemAvailable moves a little between the two reads, never by half.
    seen = _core._host_memory()
    with open("/proc/meminfo") as f:
        available = next(int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable:"))
    assert seen["available"] is not None, seen
    assert available / 2 <= seen["available"] <= available * 2, (seen, available)
    assert seen["allowance"] > 0 and seen["source"], seen


def test_the_guard_stops_with_its_checkpoint_and_the_resumed_run_is_whole(tmp_path):
    circuit = growing_circuit()
    policy = truncation.coeff(1e-9)
    full = observable().propagate(circuit, policy, threads=1)
    assert len(full) > 2000
    # 1000 output terms of 48 bytes: a rotation on more than 500 terms does not run.
    allowance = 1000 * 48
    checkpoint = tmp_path / "run.ckpt"
    with pytest.raises(paulistrings.HostMemoryExceeded) as caught:
        observable().propagate(circuit, policy, threads=1, checkpoint=checkpoint, memory_guard=allowance)
    message = str(caught.value)
    assert "memory guard: layer " in message
    assert f"checkpoint {checkpoint} written after layer " in message
    assert "memory_limit" in message and "truncation.coeff" in message
    assert checkpoint.exists()
    resumed = observable().propagate(circuit, policy, threads=1, resume=checkpoint, memory_guard=False)
    assert terms(resumed) == terms(full)
    # Off, the same run goes through; and a MemoryError handler catches it.
    assert terms(observable().propagate(circuit, policy, threads=1, memory_guard=False)) == terms(full)
    with pytest.raises(MemoryError):
        observable().propagate(circuit, policy, threads=1, memory_guard=allowance)
    # The allowance as text, and what is not an allowance.
    with pytest.raises(MemoryError):
        observable().propagate(circuit, policy, threads=1, memory_guard="48K")
    for bad, error in ((0, ValueError), ("12Q", ValueError), (1.5, TypeError), (-3, OverflowError)):
        with pytest.raises(error):
            observable().propagate(circuit, policy, threads=1, memory_guard=bad)


def test_memory_guard_is_a_bool_or_a_byte_count():
    with pytest.raises(ValueError, match="memory_guard: 'no'"):
        observable().propagate(growing_circuit(rounds=1), memory_guard="no")
    with pytest.raises(TypeError, match="memory_guard must be a bool or a byte count"):
        observable().propagate(growing_circuit(rounds=1), memory_guard=None)


@pytest.fixture
def gpu():
    if _core.cuda_device_count() == 0:
        pytest.skip("no GPU: " + _core.cuda_unavailable_reason())


def close(actual, expected, tol=1e-12):
    a = {(x, z): c for x, z, c in terms(actual)}
    b = {(x, z): c for x, z, c in terms(expected)}
    return all(abs(a.get(k, 0) - b.get(k, 0)) <= tol for k in set(a) | set(b))


def test_memory_limit_on_a_device_is_in_device_bytes(gpu):
    circuit = growing_circuit(n=12)
    budget = (2 << 20) // 208  # 2 MiB of device memory at 208 bytes a term (one word, real)
    _, free = observable(12).propagate_with_stats(circuit, device=0)
    assert free.peak_terms > budget
    limited, stats = observable(12).propagate_with_stats(circuit, device=0, memory_limit=2 << 20)
    assert stats.budget_truncations > 0
    assert stats.peak_terms <= budget
    assert len(limited) <= budget
    with pytest.raises(MemoryError, match="memory budget"):
        observable(12).propagate(circuit, device=0, memory_limit=2 << 20, auto_truncate=False)
    # The resident sum takes the same limit.
    resident = observable(12).to_device(0)
    stats = resident.propagate_with_stats(circuit, memory_limit="2M")
    assert stats.budget_truncations > 0
    assert len(resident) <= budget
    assert terms(resident.to_host()) == terms(limited)


def test_an_out_of_memory_device_leaves_the_resident_sum_usable(gpu):
    circuit = growing_circuit()
    policy = truncation.coeff(1e-9)
    expected = observable().propagate(circuit, policy, threads=1)
    resident = observable().to_device(0)
    before = terms(resident.to_host())
    try:
        _core._fail_device_allocations_from(1)  # the first layer's join table already
        with pytest.raises(MemoryError, match="out of memory"):
            resident.propagate(circuit, policy)
    finally:
        _core._fail_device_allocations_from(0)
    assert terms(resident.to_host()) == before
    resident.propagate(circuit, policy)
    assert close(resident.to_host(), expected)
    assert close(observable().propagate(circuit, policy, device=0), expected)


def test_the_import_chooses_the_wait_policy_and_gives_the_environment_back():
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env["OMP_DISPLAY_ENV"] = "true"  # libgomp prints the policy it read when it is loaded
    code = "import os, paulistrings; print(os.environ.get('OMP_WAIT_POLICY'))"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "None"
    assert "OMP_WAIT_POLICY = 'PASSIVE'" in out.stderr
    env["OMP_WAIT_POLICY"] = "active"  # the user's choice stays
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "active"
    assert "OMP_WAIT_POLICY = 'ACTIVE'" in out.stderr
