"""GPU propagation from Python: ``cuda_available()``, ``device=`` of ``PauliSum.propagate`` (one
device, or a device list: GPU partitions) and the resident ``GpuPauliSum``.

Without a usable GPU (a build without CUDA, or no device) every GPU path fails with a RuntimeError
that carries the reason, and ``device="auto"`` runs on the CPU; the tests of that case skip where a
GPU is present. With a GPU, device runs, GPU partitions and the resident sum must match the CPU
engine term by term to 1e-12 on random circuits; those tests skip ("no GPU: <reason>") elsewhere,
and the ones that need two devices skip with fewer.
"""

import logging
import math
import signal
import threading
import time

import numpy as np
import pytest

import paulistrings
from paulistrings import Circuit, GpuPauliSum, PauliSum, _core, truncation

TOL = 1e-12


def gpu_count():
    return _core.cuda_device_count()


@pytest.fixture
def gpu():
    """Skips unless a CUDA device is usable."""
    if gpu_count() == 0:
        pytest.skip("no GPU: " + _core.cuda_unavailable_reason())


@pytest.fixture
def no_gpu():
    """Skips where a CUDA device is usable: the tests of the fallbacks need a machine without one."""
    if gpu_count() > 0:
        pytest.skip("a GPU is available: " + _core.describe_device(0))
    return _core.cuda_unavailable_reason()


def as_dict(s):
    x, z, c = s.x_array(), s.z_array(), s.coefficients_array()
    return {(tuple(int(v) for v in x[i]), tuple(int(v) for v in z[i])): complex(c[i]) for i in range(len(s))}


def assert_close(actual, expected, tol=TOL):
    """Term by term: every key of either sum, to `tol` (a key missing from one counts as 0)."""
    assert actual.num_qubits == expected.num_qubits
    da, db = as_dict(actual), as_dict(expected)
    for k in set(da) | set(db):
        assert abs(da.get(k, 0) - db.get(k, 0)) <= tol, (k, da.get(k), db.get(k))


def random_unitary(dim, rng):
    m = rng.normal(size=(dim, dim)) + 1j * rng.normal(size=(dim, dim))
    q, r = np.linalg.qr(m)
    return q * (np.diag(r) / abs(np.diag(r)))


def random_circuit(n, length, rng, noisy=True, complex_gates=True):
    """Every gate kind of the package, on random qubits (spread over the whole width)."""
    kinds = ["h", "s", "sdg", "x", "y", "z", "cnot", "cz", "swap", "rz", "rx", "ry", "pauli_rotation"]
    if complex_gates:
        kinds += ["unitary_1q", "unitary_2q"]
    if noisy:
        kinds += ["depolarize", "dephase", "amplitude_damping", "pauli_channel", "depolarize2"]
    c = Circuit(n)
    for _ in range(length):
        kind = kinds[int(rng.integers(len(kinds)))]
        q = int(rng.integers(n))
        q0, q1 = (int(v) for v in rng.choice(n, size=2, replace=False))
        theta = float(rng.uniform(-math.pi, math.pi))
        p = float(rng.uniform(0.0, 0.2))
        if kind in ("h", "s", "sdg", "x", "y", "z"):
            getattr(c, kind)(q)
        elif kind in ("cnot", "cz", "swap"):
            getattr(c, kind)(q0, q1)
        elif kind in ("rz", "rx", "ry"):
            getattr(c, kind)(theta, q)
        elif kind == "pauli_rotation":
            k = int(rng.integers(1, min(n, 4) + 1))
            qs = [int(v) for v in rng.choice(n, size=k, replace=False)]
            c.pauli_rotation("".join(rng.choice(list("XYZ"), size=k)), qs, theta)
        elif kind == "unitary_1q":
            c.unitary_1q(q, random_unitary(2, rng))
        elif kind == "unitary_2q":
            c.unitary_2q(q0, q1, random_unitary(4, rng))
        elif kind == "depolarize":
            c.depolarize(p, [q])
        elif kind == "dephase":
            c.dephase(p, [q])
        elif kind == "amplitude_damping":
            c.amplitude_damping(p, [q])
        elif kind == "pauli_channel":
            px, py, pz = (float(v) for v in rng.uniform(0, 0.1, size=3))
            c.pauli_channel(px, py, pz, [q])
        else:
            c.depolarize2(p, [(q0, q1)])
    return c


def random_observable(n, rng, count=6, complex_coefficients=False):
    labels, values = [], []
    for _ in range(count):
        support = [int(v) for v in rng.choice(n, size=min(n, 3), replace=False)]
        labels.append(" ".join(f"{rng.choice(list('XYZ'))}{q}" for q in sorted(support)))
        c = float(rng.normal())
        values.append(complex(c, float(rng.normal())) if complex_coefficients else c)
    return PauliSum.from_strings(labels, values, num_qubits=n)


def brickwork(n, steps):
    c = Circuit(n)
    for layer in range(steps):
        for q in range(n):
            c.rx(0.7, q)
        for q in range(layer % 2, n - 1, 2):
            c.pauli_rotation("ZZ", [q, q + 1], 0.9)
    return c


# ---------------------------------------------------------------- any machine


def test_cuda_available_reports_the_device_count():
    assert isinstance(_core.cuda, bool)
    assert paulistrings.cuda_available() is (gpu_count() > 0)
    if not _core.cuda:
        assert gpu_count() == 0 and "no GPU engine" in _core.cuda_unavailable_reason()
    if gpu_count() == 0:
        assert _core.cuda_unavailable_reason()
    else:
        assert _core.cuda_unavailable_reason() == ""


def test_bad_device_values_raise_documented_errors():
    s = PauliSum.from_strings({"XI": 1.0})
    c = Circuit(2)
    c.h(0)
    with pytest.raises(OverflowError, match="-1"):
        s.propagate(c, device=-1)
    with pytest.raises(OverflowError, match="-2"):
        s.propagate(c, device=[-2])
    with pytest.raises(ValueError, match="'cuda'"):
        s.propagate(c, device="cuda")
    with pytest.raises(TypeError, match="bool"):
        s.propagate(c, device=True)
    with pytest.raises(TypeError, match="bool"):
        s.propagate(c, device=[False])
    with pytest.raises(TypeError, match="float"):
        s.propagate(c, device=1.5)
    with pytest.raises(TypeError, match="dict"):
        s.propagate(c, device={})
    with pytest.raises(ValueError, match="power-of-two"):
        s.propagate(c, device=[0, 1, 2])
    with pytest.raises(ValueError, match="power-of-two"):
        s.propagate(c, device=[])
    with pytest.raises(ValueError, match="power-of-two"):
        s.propagate(c, device=[0] * 128)
    with pytest.raises(OverflowError, match=r"device\[1\].*-1"):
        s.propagate(c, device=[0, -1])
    with pytest.raises(TypeError, match=r"device\[1\].*float"):
        s.propagate(c, device=(0, 1.5))
    with pytest.raises(TypeError, match="str"):
        s.propagate(c, device=["0", "1"])
    # GPU partitions are a device list: device=int with partitions= names the list to pass.
    with pytest.raises(ValueError, match=r"mutually exclusive.*device=\[0\] \* 2"):
        s.propagate(c, device=0, partitions=2)
    with pytest.raises(ValueError, match=r"device=\[3\] \* 4"):
        s.propagate(c, device=3, partitions=4)
    with pytest.raises(ValueError, match="mutually exclusive"):
        s.propagate(c, device=[0, 0], partitions=2)
    # These are argument errors on every machine, checked before CUDA is required.
    with pytest.raises(ValueError, match="partitioned run"):
        s.propagate(c, device=[0], partition_row_seed=3)  # one device: unpartitioned
    with pytest.raises(ValueError, match="expected 2 blocks"):
        s.propagate(c, device=[0, 0], partition_row_blocks=[[0], [1], [0]])
    with pytest.raises(ValueError, match="collapse_sample"):
        s.propagate(c, truncation.collapse_sample(2, 1), device=[0, 0])
    with pytest.raises(ValueError, match="comm="):
        s.propagate(c, device="auto", comm=object())
    with pytest.raises(OverflowError, match="-1"):
        s.to_device(-1)
    with pytest.raises(TypeError, match="bool"):
        s.to_device(True)
    with pytest.raises(TypeError, match="str"):
        s.to_device("auto")
    with pytest.raises(TypeError, match="PauliSum"):
        GpuPauliSum("XI")
    with pytest.raises(TypeError):
        GpuPauliSum()


def test_device_auto_gives_the_cpu_result_or_the_gpu_result():
    rng = np.random.default_rng(5)
    c = random_circuit(5, 40, rng)
    obs = random_observable(5, rng)
    cpu = obs.propagate(c, direction="heisenberg")
    auto, stats = obs.propagate_with_stats(c, direction="heisenberg", device="auto")
    if gpu_count() == 0:
        # the CPU engine itself: the same terms, bit for bit
        assert as_dict(auto) == as_dict(cpu)
    else:
        assert_close(auto, cpu)
    assert stats.layers == len(c) and stats.final_terms == len(auto)
    # Several visible devices: GPU partitions on devices 0..k-1, k the largest power of two of them.
    k = 1
    while k * 2 <= min(gpu_count(), 64):
        k *= 2
    if k == 1:
        assert stats.partition is None  # the CPU, or the single-device engine
    else:
        assert stats.partition.devices == list(range(k)) and stats.partition.partitions == k


# ---------------------------------------------------------------- without a GPU


def test_without_gpu_cuda_is_unavailable(no_gpu):
    assert paulistrings.cuda_available() is False
    assert no_gpu  # a reason is given


def test_without_gpu_every_gpu_path_raises_with_the_reason(no_gpu):
    reason = no_gpu
    s = PauliSum.from_strings({"XI": 1.0, "ZZ": 0.5})
    c = Circuit(2)
    c.h(0)
    before = as_dict(s)
    for call in (
        lambda: s.to_device(),
        lambda: s.to_device(0),
        lambda: s.to_device(3, complex_coefficients=True),
        lambda: GpuPauliSum(s),
        lambda: GpuPauliSum(s, 1),
        lambda: s.propagate(c, device=0),
        lambda: s.propagate(c, device=1),
        lambda: s.propagate(c, device=[0]),
        lambda: s.propagate(c, device=[0, 0]),
        lambda: s.propagate(c, device=[0, 1]),
        lambda: s.propagate_with_stats(c, device=(0, 0, 1, 1), partition_row_blocks=[[0], [1], [0], [1]]),
        lambda: s.propagate_with_stats(c, device=0),
        lambda: s.propagate(c, truncation.coeff(1e-3), "heisenberg", device=0),
    ):
        with pytest.raises(RuntimeError) as info:
            call()
        assert reason in str(info.value)
        assert not isinstance(info.value, NotImplementedError)
    assert as_dict(s) == before
    with pytest.raises(RuntimeError, match="CUDA"):  # the reason names CUDA in every build
        s.to_device()


def test_without_gpu_the_core_raises_runtime_error(no_gpu):
    # below the Python checks: gpu::GpuUnavailable from the library maps to RuntimeError
    s = PauliSum.from_strings({"XI": 1.0})
    c = Circuit(2)
    c.h(0)
    with pytest.raises(RuntimeError, match="CUDA"):
        _core.DeviceSum(s._s, 0)

    def run_options(device=-1, partitions=1, devices=()):
        options = _core.RunOptions()
        options.propagate.device = device
        options.partition.partitions = partitions
        options.partition.devices = list(devices)
        return options

    with pytest.raises(RuntimeError, match="CUDA"):
        _core.propagate(s._s.copy(), c._c, run_options(device=0))
    with pytest.raises(RuntimeError, match="CUDA"):
        _core.describe_device(0)
    # GPU partitions: the library's partition throws gpu::GpuUnavailable; its check of the list
    # against the partition count comes first.
    with pytest.raises(RuntimeError, match="CUDA"):
        _core.propagate(s._s.copy(), c._c, run_options(partitions=2, devices=[0, 0]))
    with pytest.raises(ValueError, match="partitions = 4 but 2 devices"):
        _core.propagate(s._s.copy(), c._c, run_options(partitions=4, devices=[0, 0]))


# ---------------------------------------------------------------- with a GPU

WIDTHS = [5, 70, 150, 300, 700]  # 1, 2, 4, 8 and 16 words a term


@pytest.mark.parametrize("n", WIDTHS)
@pytest.mark.parametrize("direction", ["forward", "heisenberg"])
def test_device_propagate_matches_cpu(gpu, n, direction):
    rng = np.random.default_rng(100 + n + (direction == "forward"))
    for trial in range(3):
        c = random_circuit(n, 60, rng)
        obs = random_observable(n, rng, complex_coefficients=trial == 1)
        before = as_dict(obs)
        cpu = obs.propagate(c, direction=direction)
        for device in (0, [0]):
            on_gpu = obs.propagate(c, direction=direction, device=device)
            assert_close(on_gpu, cpu)
        assert as_dict(obs) == before  # propagate returns a new sum


@pytest.mark.parametrize("policy", [
    truncation.coeff(1e-3),
    truncation.weight(3),
    truncation.coeff(1e-4) & truncation.weight(4),
    truncation.coeff(1e-3) | truncation.weight(2),
    truncation.topn(40),
    truncation.approx_topn(40),
], ids=["coeff", "weight", "and", "or", "topn", "approx_topn"])
def test_device_truncation_matches_cpu(gpu, policy):
    rng = np.random.default_rng(7)
    c = random_circuit(8, 80, rng)
    obs = random_observable(8, rng, count=10)
    cpu, cpu_stats = obs.propagate_with_stats(c, policy, "heisenberg")
    on_gpu, gpu_stats = obs.propagate_with_stats(c, policy, "heisenberg", device=0)
    assert_close(on_gpu, cpu)
    assert gpu_stats.layers == cpu_stats.layers == len(c)
    assert gpu_stats.gate_name == cpu_stats.gate_name
    assert gpu_stats.circuit_index == cpu_stats.circuit_index
    assert gpu_stats.final_terms == len(on_gpu)
    assert gpu_stats.total_discarded_weight == pytest.approx(cpu_stats.total_discarded_weight, abs=1e-9)


def test_resident_sum_accessors(gpu):
    s = PauliSum.from_strings({"XIZ": 1.0, "ZZI": -0.5})
    r = s.to_device()
    assert isinstance(r, GpuPauliSum)
    assert len(r) == 2 and r.num_qubits == 3 and r.device == 0 and r.num_buckets == 1
    assert r.width == 1 and r.is_complex is False
    assert r.device_bytes > 0 and r.peak_device_bytes >= r.device_bytes
    assert "CUDA device 0" in repr(r)
    assert_close(r.to_host(), s)
    assert len(r) == 2  # still resident after to_host
    assert GpuPauliSum(s, 0).num_qubits == 3
    assert s.to_device(0, complex_coefficients=True).is_complex
    assert PauliSum(3).to_device().to_host().num_qubits == 3  # empty sums travel too
    with pytest.raises(RuntimeError, match="does not exist"):
        s.to_device(gpu_count())
    with pytest.raises(RuntimeError, match="does not exist"):
        s.propagate(Circuit(3), device=gpu_count())


@pytest.mark.parametrize("n", WIDTHS)
def test_resident_sum_chained_calls_match_cpu(gpu, n):
    rng = np.random.default_rng(200 + n)
    obs = random_observable(n, rng, complex_coefficients=n % 2 == 0)
    before = as_dict(obs)
    resident = obs.to_device(0)
    host = obs
    for step in range(4):
        c = random_circuit(n, 30, rng)
        direction = "heisenberg" if step % 2 else "forward"
        policy = truncation.coeff(1e-6) if step == 2 else None
        host = host.propagate(c, policy, direction)
        if step == 3:
            stats = resident.propagate_with_stats(c, policy, direction)
            assert stats.layers == len(c) and stats.final_terms == len(resident)
        else:
            assert resident.propagate(c, policy, direction) is None
        assert len(resident) == len(host)
        assert_close(resident.to_host(), host)
    assert resident.peak_device_bytes >= resident.device_bytes > 0
    assert as_dict(obs) == before  # the uploaded host sum is unchanged


def test_resident_coefficient_storage(gpu):
    # Every channel the Python API builds has real Pauli transfer amplitudes, so a real resident sum
    # takes any circuit; complex_coefficients=True uploads complex storage with the same results.
    rng = np.random.default_rng(31)
    c = random_circuit(6, 60, rng)
    s = random_observable(6, rng)
    assert not s.is_complex
    expected = s.propagate(c, direction="heisenberg")
    real = s.to_device()
    forced = s.to_device(complex_coefficients=True)
    assert not real.is_complex and forced.is_complex
    real.propagate(c, direction="heisenberg")
    forced.propagate(c, direction="heisenberg")
    assert_close(real.to_host(), expected)
    assert_close(forced.to_host(), expected)
    assert forced.to_host().is_complex and not real.to_host().is_complex


def test_resident_sum_argument_checks(gpu):
    r = PauliSum.from_strings({"XI": 1.0}).to_device()
    with pytest.raises(TypeError):
        r.propagate("not a circuit")
    with pytest.raises(ValueError, match="num_qubits"):
        r.propagate(Circuit(3))
    with pytest.raises(ValueError):
        r.propagate(Circuit(2), direction="sideways")
    with pytest.raises(TypeError):
        r.propagate(Circuit(2), policy="coeff")
    with pytest.raises(ValueError):
        r.propagate(Circuit(2), target_bucket_len=0)
    r.propagate(Circuit(2), target_bucket_len=4, min_buckets=2)  # accepted, no buckets on the GPU
    assert len(r) == 1


def test_device_checkpoints_and_logging(gpu, tmp_path, caplog):
    rng = np.random.default_rng(11)
    c = random_circuit(6, 30, rng)
    obs = random_observable(6, rng)
    cpu = obs.propagate(c, direction="heisenberg")
    path = tmp_path / "gpu.ckpt"
    with caplog.at_level(logging.DEBUG, logger="paulistrings.propagate"):
        out = obs.propagate(c, direction="heisenberg", device=0, checkpoint=path, checkpoint_every=7)
    assert_close(out, cpu)
    assert path.exists()
    layer_lines = [r for r in caplog.records if r.levelno == logging.DEBUG]
    assert len(layer_lines) == len(c)
    assert any("CUDA device 0" in r.getMessage() for r in caplog.records if r.levelno == logging.INFO)
    caplog.clear()
    r = obs.to_device()
    with caplog.at_level(logging.DEBUG, logger="paulistrings.propagate"):
        r.propagate(c, direction="heisenberg")
    assert len([x for x in caplog.records if x.levelno == logging.DEBUG]) == len(c)
    assert_close(r.to_host(), cpu)


def test_resident_ctrl_c_stops_after_a_layer_and_keeps_it(gpu):
    n = 8
    c = brickwork(n, 200)  # ~2300 layers, each slowed by the observer below: seconds if not interrupted
    obs = PauliSum.from_strings({"Z" * n: 1.0})
    r = obs.to_device()
    layers = []
    started = threading.Event()

    class Observer(logging.Handler):
        def emit(self, record):
            if record.levelno != logging.DEBUG:
                return  # the INFO lines at the start and the end of the call
            layers.append(record)
            if len(layers) == 5:
                started.set()
            time.sleep(0.002)

    handler = Observer(level=logging.DEBUG)
    logger = logging.getLogger("paulistrings.propagate")
    old_level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)

    def send():
        if started.wait(60):
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            r.propagate(c, direction="heisenberg")
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
        started.set()
        sender.join()
    seen = len(layers)
    assert 5 <= seen < len(c)
    # The resident sum holds the output of the last completed layer (Heisenberg: the last k gates).
    # k is the number of layer records seen, or one more when the interrupt landed in the logging
    # call of layer k before the record reached the observer.
    host = as_dict(r.to_host())
    for k in (seen, seen + 1):
        expected = as_dict(obs.propagate(c[len(c) - k:], direction="heisenberg"))
        if expected.keys() == host.keys() and all(abs(v - expected[key]) <= TOL for key, v in host.items()):
            break
    else:
        pytest.fail(f"the resident sum is not the state after {seen} or {seen + 1} layers")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


# ---------------------------------------------------------------- GPU partitions (device lists)


def crossing_case(seed, n, complex_coefficients=False):
    """A random circuit over the whole width (most layers move rows between partitions) and an
    observable for it."""
    rng = np.random.default_rng(seed)
    return random_circuit(n, 60, rng), random_observable(n, rng, count=8, complex_coefficients=complex_coefficients)


def assert_partitioned_like_cpu(obs, c, devices, policy=None, direction="heisenberg", **kwargs):
    """GPU partitions on `devices` give the CPU engine's single-partition result to rounding, and
    PartitionStats names the devices and counts the rows that crossed partitions."""
    cpu, cpu_stats = obs.propagate_with_stats(c, policy, direction)
    out, stats = obs.propagate_with_stats(c, policy, direction, device=devices, **kwargs)
    assert_close(out, cpu)
    assert stats.layers == len(c) and stats.final_terms == len(out)
    assert stats.total_discarded_weight == pytest.approx(cpu_stats.total_discarded_weight, abs=1e-9)
    p = stats.partition
    assert p.devices == list(devices) and p.partitions == len(devices)
    assert p.transport == "in-process" and p.rank is None and p.size is None
    assert p.remote_layers > 0 and p.total_rows_exported == sum(p.rows_exported) > 0
    assert len(p.rows_exported) == len(p.local) == stats.layers
    return stats


@pytest.mark.parametrize("devices", [[0, 0], [0, 0, 0, 0]], ids=["2-on-0", "4-on-0"])
@pytest.mark.parametrize("n", [12, 70, 150])
@pytest.mark.parametrize("direction", ["forward", "heisenberg"])
def test_device_partitions_sharing_a_device_match_cpu(gpu, devices, n, direction):
    c, obs = crossing_case(300 + n + len(devices), n, complex_coefficients=n == 70)
    assert_partitioned_like_cpu(obs, c, devices, direction=direction)


@pytest.mark.parametrize("policy", [
    truncation.coeff(1e-4),
    truncation.weight(4),
    truncation.topn(60),
    truncation.approx_topn(60),
    truncation.coeff(1e-5) & truncation.topn(80),
], ids=["coeff", "weight", "topn", "approx_topn", "coeff&topn"])
def test_device_partitions_truncation_match_cpu(gpu, policy):
    c, obs = crossing_case(41, 10)
    assert_partitioned_like_cpu(obs, c, (0, 0, 0, 0), policy)


def test_device_partitions_rows_checkpoints_and_errors(gpu, tmp_path, caplog):
    c, obs = crossing_case(52, 8)
    # Cut rows (one block of qubits per partition) and seeded rows of another seed.
    with caplog.at_level(logging.INFO, logger="paulistrings.propagate"):
        assert_partitioned_like_cpu(obs, c, [0, 0], partition_row_blocks=[[0, 1, 2, 3], [4, 5, 6, 7]])
    assert any("2 partitions, CUDA devices [0, 0]" in r.getMessage() for r in caplog.records)
    stats = assert_partitioned_like_cpu(obs, c, [0, 0], partition_row_seed=7)
    assert stats.partition.rows.startswith("seeded(")
    # Checkpoint segments: the stats of the segments joined, the result unchanged.
    path = tmp_path / "parts.ckpt"
    stats = assert_partitioned_like_cpu(obs, c, [0, 0], checkpoint=path, checkpoint_every=17)
    assert path.exists() and len(stats.partition.local) == len(c)
    # An ordinal that does not exist: the library's GpuUnavailable, naming it.
    with pytest.raises(RuntimeError, match=f"CUDA device {gpu_count()} does not exist"):
        obs.propagate(c, device=[0, gpu_count()])
    assert_close(obs.propagate(c, device=[0]), obs.propagate(c))  # one device: unpartitioned
    assert obs.propagate_with_stats(c, device=[0])[1].partition is None


@pytest.mark.parametrize("devices", [[0, 1], [0, 1, 0, 1], [1, 0]])
def test_device_partitions_on_two_gpus_match_cpu(devices):
    if gpu_count() < 2:
        pytest.skip(f"needs 2 GPUs, {gpu_count()} visible" + (": " + _core.cuda_unavailable_reason()
                                                                 if gpu_count() == 0 else ""))
    c, obs = crossing_case(61, 70)
    assert_partitioned_like_cpu(obs, c, devices)
    assert_partitioned_like_cpu(obs, c, devices, truncation.approx_topn(50), "forward")
