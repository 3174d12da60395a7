"""Partitioned propagation from Python: ``partitions=`` (in-process partitions, the library's
``propagate_partitioned``) and ``comm=`` (one partition per MPI rank, an mpi4py communicator).

Partitioned results must equal the unpartitioned ones term by term (the same keys, coefficients to
1e-12 relative) on seeded random circuits under every truncation that has a partitioned form;
``PropagationStats.partition`` must describe the run; bad arguments raise the documented errors. The
MPI test launches ``mpirun -np 2`` on tests/mpi_partition_script.py (skipped, with the reason, when
mpirun, mpi4py or the build's MPI support is missing).
"""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import paulistrings
from paulistrings import Circuit, PartitionStats, PauliSum, _core, truncation
from test_gpu import assert_close, random_circuit, random_observable  # the device tests' helpers

REL = 1e-12
HERE = os.path.dirname(os.path.abspath(__file__))


def as_dict(s):
    x, z, c = s.x_array(), s.z_array(), s.coefficients_array()
    return {(tuple(int(v) for v in x[i]), tuple(int(v) for v in z[i])): complex(c[i]) for i in range(len(s))}


def sorted_terms(s):
    """Keys (x words then z words, one row a term) and coefficients, in lexicographic key order."""
    keys = np.hstack([s.x_array(), s.z_array()])
    order = np.lexsort(keys.T[::-1]) if len(keys) else np.arange(0)
    return keys[order], s.coefficients_array()[order]


def assert_same_terms(actual, expected, rel=REL):
    """The same keys, and every coefficient equal to `rel` relative (of the larger magnitude, with a
    floor of 1e-300 so exact zeros compare)."""
    assert actual.num_qubits == expected.num_qubits
    ka, ca = sorted_terms(actual)
    kb, cb = sorted_terms(expected)
    assert ka.shape == kb.shape and np.array_equal(ka, kb), (len(ka), len(kb))
    bound = rel * np.maximum(np.maximum(abs(ca), abs(cb)), 1e-300)
    bad = np.nonzero(abs(ca - cb) > bound)[0]
    assert len(bad) == 0, (ka[bad[0]], ca[bad[0]], cb[bad[0]])


POLICIES = {
    "none": lambda: None,
    "coeff": lambda: truncation.coeff(1e-3),
    "weight": lambda: truncation.weight(4),
    "topn": lambda: truncation.topn(40),
    "approx_topn": lambda: truncation.approx_topn(40),
    "coeff&weight&topn": lambda: truncation.coeff(1e-4) & truncation.weight(5) & truncation.topn(60),
}


def random_case(seed):
    """A seeded random circuit and observable; widths spread over one and two words."""
    rng = np.random.default_rng(1000 + seed)
    n = [5, 8, 12, 70, 130][seed % 5]
    c = random_circuit(n, 24 + seed % 3 * 8, rng, noisy=seed % 2 == 0, complex_gates=seed % 4 != 1)
    obs = random_observable(n, rng, count=4 + seed % 4, complex_coefficients=seed % 3 == 0)
    return c, obs


# ---------------------------------------------------------------- in-process partitions


@pytest.mark.parametrize("seed", range(24))
def test_partitions_match_unpartitioned_on_random_circuits(seed):
    c, obs = random_case(seed)
    names = list(POLICIES)
    for k, name in enumerate([names[seed % len(names)], names[(seed + 3) % len(names)]]):
        policy = POLICIES[name]()
        direction = "heisenberg" if (seed + k) % 2 else "forward"
        expected = obs.propagate(c, policy, direction, threads=1)
        for parts in (1, 2, 4):
            got, st = obs.propagate_with_stats(c, policy, direction, partitions=parts, threads=2)
            assert_same_terms(got, expected)
            assert st.final_terms == len(expected)
            if parts == 1:
                assert st.partition is None
            else:
                assert st.partition.partitions == parts


def test_partitions_exact_topn_and_approx_topn_on_a_growing_sum():
    """A brickwork circuit whose sum outgrows the cut every layer: the layer passes run over all
    partitions (distributed selection for topn, a shared histogram for approx_topn)."""
    n = 10
    c = Circuit(n)
    for layer in range(6):
        for q in range(n):
            c.rx(0.3 + 0.05 * q, q)
        for q in range(layer % 2, n - 1, 2):
            c.pauli_rotation("ZZ", [q, q + 1], 0.9 - 0.03 * q)
    obs = PauliSum.from_strings({"Z4": 1.0, "X2 X7": 0.5}, num_qubits=n)
    for policy in (truncation.topn(100), truncation.approx_topn(100),
                   truncation.topn(100) & truncation.coeff(1e-6)):
        expected, est = obs.propagate_with_stats(c, policy, "heisenberg")
        assert max(est.terms_out) <= 100 and est.total_discarded_weight > 0  # the pass really cuts
        for parts in (2, 4, 8):
            got, st = obs.propagate_with_stats(c, policy, "heisenberg", partitions=parts)
            assert_same_terms(got, expected)
            assert st.terms_out == est.terms_out and st.terms_in == est.terms_in
            assert st.discarded_weight == pytest.approx(est.discarded_weight, rel=1e-9, abs=1e-15)


def test_partition_row_policies_give_the_same_result():
    rng = np.random.default_rng(7)
    n = 12
    c = random_circuit(n, 40, rng)
    obs = random_observable(n, rng)
    expected = obs.propagate(c, truncation.coeff(1e-4))
    runs = {
        "seed": dict(partitions=4, partition_row_seed=12345),
        "blocks": dict(partitions=4, partition_row_blocks=[[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]]),
        "exclude": dict(partitions=2, partition_row_exclude={"x": [0, 1], "z": [5]}),
        "exclude_x_only": dict(partitions=2, partition_row_exclude={"x": [3]}),
    }
    rows = {}
    for name, kwargs in runs.items():
        got, st = obs.propagate_with_stats(c, truncation.coeff(1e-4), **kwargs)
        assert_same_terms(got, expected)
        rows[name] = st.partition.rows
    assert rows["seed"] == "seeded(12345)"
    assert rows["blocks"] == "cut(4 blocks, z)"
    assert rows["exclude"].endswith("excluding 3 qubits")  # x and z lists: both bits of 0, 1, 5
    assert rows["exclude_x_only"].endswith("excluding 1 qubits")


def test_cut_rows_keep_x_kicks_local():
    """A Z-basis cut: rx kicks never cross partitions, ZZ rotations only across block edges."""
    n = 8
    c = Circuit(n)
    for q in range(n):
        c.rx(0.4, q)
    for q in range(n - 1):
        c.pauli_rotation("ZZ", [q, q + 1], 0.7)
    obs = PauliSum.from_strings({"Z0": 1.0, "Z7": 1.0}, num_qubits=n)
    expected = obs.propagate(c)
    got, st = obs.propagate_with_stats(c, partitions=2, partition_row_blocks=[[0, 1, 2, 3], [4, 5, 6, 7]])
    assert_same_terms(got, expected)
    p = st.partition
    # Only the ZZ rotation on the edge (3, 4) crosses the cut.
    assert p.remote_layers == 1 and p.local_layers == len(c) - 1
    assert p.local == [True] * n + [q != 3 for q in range(n - 1)]
    assert p.partners == [0] * n + [1 if q == 3 else 0 for q in range(n - 1)]


def test_partition_stats_are_filled():
    rng = np.random.default_rng(3)
    n = 10
    c = random_circuit(n, 30, rng)
    obs = random_observable(n, rng)
    out, st = obs.propagate_with_stats(c, truncation.coeff(1e-5), "heisenberg", partitions=4)
    p = st.partition
    assert isinstance(p, PartitionStats)
    assert p.partitions == 4 and p.rank is None and p.size is None and p.devices is None
    assert p.transport == "in-process"
    assert p.rows.startswith("seeded(")
    layers = st.layers
    assert layers == len(c)
    for name in ("local", "rows_exported", "bytes_exported", "imbalance", "partners", "max_terms"):
        assert len(getattr(p, name)) == layers, name
    assert p.terms_in is None and p.terms_out is None and p.nanos is None
    assert p.remote_layers + p.local_layers == layers
    assert p.remote_layers == sum(not local for local in p.local) and p.remote_layers > 0
    assert 0 <= p.orbit_routed_layers <= p.remote_layers
    assert p.total_rows_exported == sum(p.rows_exported) > 0
    assert p.total_bytes_exported == sum(p.bytes_exported) > p.total_rows_exported
    assert all(rows == 0 for rows, local in zip(p.rows_exported, p.local) if local)
    assert all(partners == 0 for partners, local in zip(p.partners, p.local) if local)
    assert all(1.0 <= x <= 4.0 for x in p.imbalance)
    assert p.max_imbalance == max(p.imbalance)
    # max_terms: the largest partition, between a quarter of the layer's output and all of it.
    for k in range(layers):
        assert (st.terms_out[k] + 3) // 4 <= p.max_terms[k] <= st.terms_out[k]
    assert st.final_terms == len(out) and st.terms_in[0] == len(obs)
    # Per partition: the shares add up to the result; each partition's time is split in two.
    assert len(p.final_terms) == 4 and sum(p.final_terms) == len(out)
    assert len(p.transport_seconds) == len(p.work_seconds) == 4
    assert all(t >= 0.0 for t in p.transport_seconds + p.work_seconds)
    assert "PartitionStats(partitions=4" in repr(p) and "in-process" in repr(p)
    # propagate (no stats) returns the same sum.
    assert_same_terms(obs.propagate(c, truncation.coeff(1e-5), "heisenberg", partitions=4), out)


def haar_unitary(rng, dim):
    """A Haar-random unitary (QR of a complex Gaussian matrix, phases fixed)."""
    z = rng.normal(size=(dim, dim)) + 1j * rng.normal(size=(dim, dim))
    q, r = np.linalg.qr(z)
    return q * (np.diagonal(r) / abs(np.diagonal(r)))


def test_route_orbits_from_routes_remote_dense_layers():
    # Random two-qubit unitaries (dense tables: ~16 outputs an input) on 4 partitions: route_orbits_from=0
    # routes every remote one (each output computed once, from its whole orbit, as by one engine); the
    # default threshold (8192 terms) leaves this small sum unrouted. The same terms either way.
    rng = np.random.default_rng(5)
    n = 8
    c = Circuit(n)
    for _ in range(10):
        a, b = rng.choice(n, size=2, replace=False)
        c.unitary_2q(int(a), int(b), haar_unitary(rng, 4))
    obs = PauliSum.from_strings({"ZZIIIIII": 1.0, "IIXYIIII": 0.5, "IIIIIIZX": 0.25})
    expected = obs.propagate(c, truncation.coeff(1e-6), "heisenberg")
    routed, st = obs.propagate_with_stats(c, truncation.coeff(1e-6), "heisenberg", partitions=4,
                                          route_orbits_from=0)
    assert st.partition.remote_layers > 2
    assert 0 < st.partition.orbit_routed_layers <= st.partition.remote_layers
    assert_same_terms(routed, expected)
    plain, st = obs.propagate_with_stats(c, truncation.coeff(1e-6), "heisenberg", partitions=4)
    assert st.partition.orbit_routed_layers == 0
    assert_same_terms(plain, expected)
    with pytest.raises(ValueError, match="partitioned runs"):
        obs.propagate(c, route_orbits_from=0)
    with pytest.raises(OverflowError):
        obs.propagate(c, partitions=2, route_orbits_from=-1)
    with pytest.raises(TypeError):
        obs.propagate(c, partitions=2, route_orbits_from="always")


def test_partitions_with_checkpoint_resume_and_memory_limit(tmp_path):
    rng = np.random.default_rng(11)
    n = 9
    c = random_circuit(n, 30, rng)
    obs = random_observable(n, rng)
    policy = truncation.coeff(1e-5)
    expected = obs.propagate(c, policy)
    path = tmp_path / "run.ckpt"
    got, st = obs.propagate_with_stats(c, policy, partitions=2, checkpoint=path, checkpoint_every=7)
    assert_same_terms(got, expected)
    assert os.path.exists(path)
    assert st.layers == len(c) and len(st.partition.local) == len(c)  # the segments' records joined
    assert st.partition.remote_layers + st.partition.local_layers == len(c)
    resumed = obs.propagate(c, policy, partitions=4, resume=path)
    assert_same_terms(resumed, expected)
    # A memory limit far above the need changes nothing.
    assert_same_terms(obs.propagate(c, policy, partitions=2, memory_limit="64G"), expected)


def small_case():
    """A 4-qubit circuit, an observable and its unpartitioned result."""
    c = Circuit(4)
    c.h(0)
    c.cnot(0, 1)
    c.rz(0.3, 1)
    c.cnot(1, 2)
    obs = PauliSum.from_strings({"ZIII": 1.0, "IXII": 0.5})
    return c, obs, obs.propagate(c)


def test_partitions_auto_and_cpu_lists():
    c, obs, expected = small_case()
    nodes = len(paulistrings.numa_nodes())
    auto = 1
    while auto * 2 <= nodes:
        auto *= 2
    out, st = obs.propagate_with_stats(c, partitions="auto")
    assert_same_terms(out, expected)
    assert (st.partition is None) if auto == 1 else (st.partition.partitions == auto)
    # CPU lists give the count and pin partition r to list r (the C++ tests watch the binding); the
    # caller's own binding is back afterwards. More partitions than NUMA nodes are fine.
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) >= 2:
        out, st = obs.propagate_with_stats(c, partitions=[[cpus[0]], [cpus[-1]]])
        assert_same_terms(out, expected)
        assert st.partition.partitions == 2
        assert sorted(os.sched_getaffinity(0)) == cpus
    out, st = obs.propagate_with_stats(c, partitions=[cpus])
    assert_same_terms(out, expected)
    assert st.partition.partitions == 1 and sorted(os.sched_getaffinity(0)) == cpus
    with pytest.raises(ValueError, match="not one this process may run on"):
        obs.propagate(c, partitions=[[cpus[0]], [100000]])
    out, st = obs.propagate_with_stats(c, partitions=8)
    assert_same_terms(out, expected)
    assert st.partition.partitions == 8


def test_openmp_binding_keeps_every_cpu_for_cpu_lists():
    # Under OMP_PROC_BIND the OpenMP runtime binds the main thread to one CPU as the extension loads;
    # CPU lists naming the process's other CPUs must still run, and numa_nodes() must still cover them.
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2 or "OMP_PROC_BIND" in os.environ or "OMP_PLACES" in os.environ:
        pytest.skip("needs two CPUs and a process not bound by OpenMP already")
    script = (
        "import json, os, paulistrings\n"
        "from paulistrings import Circuit, PauliSum\n"
        "c = Circuit(4)\n"
        "c.h(0); c.cnot(0, 1); c.rz(0.3, 1); c.cnot(1, 2)\n"
        "obs = PauliSum.from_strings({'ZIII': 1.0, 'IXII': 0.5})\n"
        f"out, st = obs.propagate_with_stats(c, partitions=[[{cpus[0]}], [{cpus[-1]}]])\n"
        "print(json.dumps({'nodes': paulistrings.numa_nodes(), 'partitions': st.partition.partitions,\n"
        "                  'bound': sorted(os.sched_getaffinity(0))}))\n"
    )
    for bind in ({"OMP_PROC_BIND": "close", "OMP_PLACES": "cores"}, {"OMP_PROC_BIND": "true"}):
        env = dict(os.environ, **bind)
        proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, (bind, proc.stderr)
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        assert result["partitions"] == 2, bind
        assert sorted(c for node in result["nodes"] for c in node) == cpus, (bind, result)


def test_partitions_auto_pins_one_partition_per_numa_node(monkeypatch):
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("needs two CPUs to stand in for two NUMA nodes")
    c, obs, expected = small_case()
    nodes = [[cpus[0]], [cpus[-1]]]
    monkeypatch.setattr(paulistrings._run_args, "numa_nodes", lambda: nodes)
    seen = []
    run = paulistrings._sum._core.propagate

    def spy(*args, **kwargs):
        seen.append(args[2].partition.cpu_lists)  # the RunOptions handed to the library
        return run(*args, **kwargs)

    monkeypatch.setattr(paulistrings._sum._core, "propagate", spy)
    out, st = obs.propagate_with_stats(c, partitions="auto")
    assert_same_terms(out, expected)
    assert st.partition.partitions == 2
    assert seen == [nodes]
    assert sorted(os.sched_getaffinity(0)) == cpus


def test_partitions_bad_arguments_raise_documented_errors():
    c = Circuit(4)
    c.h(0)
    c.cnot(0, 1)
    s = PauliSum.from_strings({"XIII": 1.0})
    with pytest.raises(ValueError, match="collapse_sample"):
        s.propagate(c, truncation.collapse_sample(2, seed=1), partitions=2)
    with pytest.raises(ValueError, match="power of two"):
        s.propagate(c, partitions=128)
    with pytest.raises(ValueError, match="power of two"):
        s.propagate(c, partitions=6)
    with pytest.raises(ValueError, match="expected 2 blocks"):
        s.propagate(c, partitions=2, partition_row_blocks=[[0], [1], [2], [3]])
    with pytest.raises(ValueError, match="cannot be combined"):
        s.propagate(c, partitions=2, partition_row_blocks=[[0], [1]], partition_row_seed=3)
    with pytest.raises(TypeError):
        s.propagate(c, partitions=2, partition_row_blocks="01")
    with pytest.raises(ValueError):  # the library's check: a qubit in two blocks
        s.propagate(c, partitions=2, partition_row_blocks=[[0, 1], [1, 2]])
    with pytest.raises(ValueError):  # the library's check: a qubit out of range
        s.propagate(c, partitions=2, partition_row_blocks=[[0], [9]])
    with pytest.raises(ValueError):  # an excluded qubit out of range
        s.propagate(c, partitions=2, partition_row_exclude={"z": [4]})
    with pytest.raises(ValueError, match="partition_row_exclude"):
        s.propagate(c, partitions=2, partition_row_exclude={"y": [0]})
    with pytest.raises(OverflowError):
        s.propagate(c, partitions=2, partition_row_seed=-1)
    with pytest.raises(OverflowError):
        s.propagate(c, partitions=2, partition_row_seed=2**64)
    # NCCL is for GPU ranks under comm=: anywhere else it is an argument error.
    with pytest.raises(TypeError, match="nccl must be a bool"):
        s.propagate(c, nccl=1)
    with pytest.raises(ValueError, match="needs comm= and device="):
        s.propagate(c, nccl=True)
    with pytest.raises(ValueError, match="needs comm= and device="):
        s.propagate(c, partitions=2, nccl=True)
    assert_close(s.propagate(c, nccl=False), s.propagate(c))
    with pytest.raises(ValueError, match="input must be"):
        s.propagate(c, input="halves")
    with pytest.raises(ValueError, match="needs comm="):
        s.propagate(c, partitions=2, input="scattered")
    with pytest.raises(ValueError, match="mutually exclusive"):
        s.propagate(c, partitions=2, device=0)
    with pytest.raises(ValueError, match="comm="):  # which GPU is a rank's is the caller's choice
        s.propagate(c, device="auto", comm=object())
    # One qubit has 2 independent row candidates (x0, z0): 8 partitions cannot be told apart.
    one = PauliSum.from_strings({"X": 1.0})
    c1 = Circuit(1)
    c1.h(0)
    with pytest.raises(ValueError):
        one.propagate(c1, partitions=8)
    assert_same_terms(one.propagate(c1, partitions=2), one.propagate(c1))


def test_partitioned_run_releases_the_gil_and_stops_on_ctrl_c(tmp_path):
    import threading
    import time

    from test_threads_signals import assert_ctrl_c_stops_and_checkpoints, brickwork, observable

    # The GIL is released: the main thread keeps running Python code during a partitioned run.
    c = brickwork(8, n=8)  # ~10^4 terms over ~90 layers
    result = {}

    def work():
        result["start"] = time.monotonic()
        result["sum"] = observable(8).propagate(c, direction="heisenberg", partitions=2, threads=2)
        result["end"] = time.monotonic()

    worker = threading.Thread(target=work)
    ticks = []
    worker.start()
    while worker.is_alive():
        ticks.append(time.monotonic())
        sum(range(200))
    worker.join()
    during = [t for t in ticks if result["start"] < t < result["end"]]
    assert result["end"] - result["start"] > 0.01 and len(during) > 50
    assert_same_terms(result["sum"], observable(8).propagate(c, direction="heisenberg"))

    # Ctrl-C stops a long partitioned run after a layer (the poll runs on partition 0, the calling
    # thread), writes the checkpoint and leaves the interpreter usable.
    long = brickwork(2000)
    path = tmp_path / "interrupted.ckpt"
    assert_ctrl_c_stops_and_checkpoints(
        lambda: observable().propagate(long, direction="heisenberg", partitions=4, threads=2, checkpoint=path),
        path)


# ---------------------------------------------------------------- comm= (MPI)


def test_comm_rejects_what_is_not_a_communicator():
    s = PauliSum.from_strings({"XI": 1.0})
    c = Circuit(2)
    c.h(0)
    if not _core.mpi:
        with pytest.raises(RuntimeError, match="no MPI support"):
            s.propagate(c, comm=object())
    else:
        with pytest.raises(TypeError, match="mpi4py"):
            s.propagate(c, comm=object())
    assert paulistrings.mpi_available() is (bool(_core.mpi) and _has_mpi4py())


def _has_mpi4py():
    import importlib.util

    return importlib.util.find_spec("mpi4py") is not None


def _mpirun():
    """The mpirun command line for 2 ranks, or the reason it cannot run."""
    if not _core.mpi:
        return None, "this build has no MPI/mpi4py support (paulistrings.mpi_available() is False)"
    if not _has_mpi4py():
        return None, "mpi4py is not installed (Debian: apt-get install python3-mpi4py)"
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        return None, "mpirun not found (Debian: apt-get install openmpi-bin)"
    command = [mpirun, "-np", "2", "--oversubscribe"]
    if os.geteuid() == 0:
        command.append("--allow-run-as-root")
    return command, None


def test_comm_two_ranks_gather_and_local_match_unpartitioned(tmp_path):
    command, reason = _mpirun()
    if command is None:
        pytest.skip(reason)
    env = dict(os.environ)
    package = os.path.dirname(os.path.dirname(os.path.abspath(paulistrings.__file__)))
    env["PYTHONPATH"] = package + os.pathsep + HERE + os.pathsep + env.get("PYTHONPATH", "")
    env.update({"OMP_NUM_THREADS": "1", "OMP_WAIT_POLICY": "passive", "OMPI_MCA_rmaps_base_oversubscribe": "1"})
    script = os.path.join(HERE, "mpi_partition_script.py")
    proc = subprocess.run(command + [sys.executable, script, str(tmp_path)], env=env, capture_output=True,
                          text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    reports = []
    for rank in range(2):
        with open(tmp_path / f"rank{rank}.json") as f:
            reports.append(json.load(f))
    cases = reports[0]["cases"]
    assert len(cases) >= 6 and len(reports[1]["cases"]) == len(cases)
    for k, case in enumerate(cases):
        # Each rank checked gather == unpartitioned itself; here the local shares: disjoint, and
        # together the unpartitioned sum (compared to 1e-12 relative).
        expected = {tuple(map(tuple, key)): complex(*v) for key, v in case["expected"]}
        shares = [{tuple(map(tuple, key)): complex(*v) for key, v in r["cases"][k]["local"]} for r in reports]
        assert not set(shares[0]) & set(shares[1]), case["name"]
        union = {**shares[0], **shares[1]}
        assert set(union) == set(expected), case["name"]
        for key, b in expected.items():
            a = union[key]
            assert abs(a - b) <= REL * max(abs(a), abs(b), 1e-300), (case["name"], key, a, b)
        for r in reports:
            c = r["cases"][k]
            assert c["gather_ok"], (case["name"], c.get("gather_error"))
            assert c["stats"]["partitions"] == 2 and c["stats"]["transport"] == "mpi"
            assert c["stats"]["size"] == 2 and c["stats"]["rank"] == r["rank"]
    assert reports[0]["errors_ok"] and reports[1]["errors_ok"], (reports[0].get("errors"), reports[1].get("errors"))
    for r in reports:  # the distributed load paths (input="scattered" and "share") give the same result
        assert r["scattered_error"] is None and r["share_error"] is None, (r["scattered_error"], r["share_error"])
        assert r["checkpoint_problems"] == [], r["checkpoint_problems"]
