"""One rank of test_partitions.py's MPI test (run as ``mpirun -np 2 python3 mpi_partition_script.py OUTDIR``).

Every rank propagates the same seeded random cases unpartitioned, with ``comm=COMM_WORLD,
result="gather"`` (checked here against the unpartitioned sum, term by term to 1e-12 relative) and
with ``result="local"`` (its share, written to OUTDIR/rank<r>.json for the test to add up), and
checks checkpoints in parts (written by every rank, resumed with and without comm=), the documented
errors of comm= runs, including ranks that pass different circuits (an error
on every rank, not a hang). With a GPU, every rank also runs its partition on device 0 (``device=0``
and one device per rank, ``device=[0, 0]``) and checks the gathered sum; without one, ``device=``
must raise the RuntimeError of a machine without CUDA on every rank.
"""

import json
import os
import sys
import traceback

from mpi4py import MPI  # initializes MPI (thread level "multiple" by default)

import numpy as np

import paulistrings
from paulistrings import Circuit, PauliSum, truncation
from test_gpu import random_circuit, random_observable

REL = 1e-12


def as_dict(s):
    x, z, c = s.x_array(), s.z_array(), s.coefficients_array()
    return {(tuple(int(v) for v in x[i]), tuple(int(v) for v in z[i])): complex(c[i]) for i in range(len(s))}


def same_terms(actual, expected):
    da, db = as_dict(actual), as_dict(expected)
    if set(da) != set(db):
        return f"key sets differ: {len(set(da) - set(db))} extra, {len(set(db) - set(da))} missing"
    for k, a in da.items():
        b = db[k]
        if abs(a - b) > REL * max(abs(a), abs(b), 1e-300):
            return f"coefficient of {k}: {a} vs {b}"
    return None


def terms(s):
    return [[list(map(list, key)), [c.real, c.imag]] for key, c in as_dict(s).items()]


CASES = [
    ("none", None, "heisenberg"),
    ("coeff", truncation.coeff(1e-3), "forward"),
    ("weight", truncation.weight(3), "heisenberg"),
    ("topn", truncation.topn(30), "heisenberg"),
    ("approx_topn", truncation.approx_topn(30), "forward"),
    ("coeff&topn", truncation.coeff(1e-4) & truncation.topn(50), "heisenberg"),
    ("none-wide", None, "forward"),
]


def main():
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    out = {"rank": rank, "size": comm.Get_size(), "cases": []}
    assert paulistrings.mpi_available()
    for k, (name, policy, direction) in enumerate(CASES):
        rng = np.random.default_rng(500 + k)  # the same case on every rank
        n = 130 if name.endswith("wide") else [6, 9, 12][k % 3]
        c = random_circuit(n, 30, rng, noisy=k % 2 == 0)
        obs = random_observable(n, rng, complex_coefficients=k % 3 == 1)
        expected = obs.propagate(c, policy, direction, threads=1)
        gathered, st = obs.propagate_with_stats(c, policy, direction, comm=comm, result="gather", threads=1)
        error = same_terms(gathered, expected)
        if error is None and st.final_terms != len(expected):
            error = f"final_terms {st.final_terms} != {len(expected)}"
        local = obs.propagate(c, policy, direction, comm=comm, result="local", threads=1)
        p = st.partition
        out["cases"].append({
            "name": name,
            "gather_ok": error is None,
            "gather_error": error,
            "expected": terms(expected),
            "local": terms(local),
            "stats": {"partitions": p.partitions, "transport": p.transport, "rank": p.rank, "size": p.size,
                      "layers": len(p.local), "remote_layers": p.remote_layers},
        })

    # The distributed load path: each rank passes every size-th term only (input="scattered"), or
    # exactly its own partition's terms (input="share", taken from result="local" of a gathered run).
    rng = np.random.default_rng(700)  # the same case on every rank
    sc = random_circuit(10, 30, rng)
    sobs = random_observable(10, rng, count=40)
    expected = sobs.propagate(sc, truncation.coeff(1e-4), "heisenberg", threads=1)
    x, z, coefficients = sobs.x_array(), sobs.z_array(), sobs.coefficients_array()
    size = comm.Get_size()
    part = PauliSum.from_arrays(x[rank::size], z[rank::size], coefficients[rank::size], 10)
    scattered = part.propagate(sc, truncation.coeff(1e-4), "heisenberg", comm=comm, input="scattered", threads=1)
    out["scattered_error"] = same_terms(scattered, expected)
    mine = sobs.propagate(Circuit(10), comm=comm, result="local", threads=1)  # this rank's share, unchanged
    shared = mine.propagate(sc, truncation.coeff(1e-4), "heisenberg", comm=comm, input="share", threads=1)
    out["share_error"] = same_terms(shared, expected)

    # Checkpoints in parts: every rank writes its share (every 7 of 30 layers), a gathered and a local
    # result; resumed under comm= and without it (each rank then reads both parts and adds them); a
    # different observable is refused on every rank.
    problems = []
    ckpt = os.path.join(sys.argv[1], "run.ckpt")
    rng = np.random.default_rng(800)  # the same case on every rank
    kc = random_circuit(10, 30, rng)
    kobs = random_observable(10, rng, count=20)
    kpol = truncation.coeff(1e-4)
    expected = kobs.propagate(kc, kpol, "heisenberg", threads=1)
    runs = {
        "checkpointed, gathered": lambda: kobs.propagate(kc, kpol, "heisenberg", comm=comm, checkpoint=ckpt,
                                                          checkpoint_every=7, threads=1),
        "resumed under comm=": lambda: kobs.propagate(kc, kpol, "heisenberg", comm=comm, resume=ckpt, threads=1),
        "resumed without comm=": lambda: kobs.propagate(kc, kpol, "heisenberg", resume=ckpt, threads=1),
    }
    for what, run in runs.items():
        try:
            problem = same_terms(run(), expected)
        except Exception as e:  # noqa: BLE001
            problem = f"raised {e!r}"
        if problem:
            problems.append(f"{what}: {problem}")
        comm.Barrier()
        if what.startswith("checkpointed"):
            parts = sorted(name for name in os.listdir(sys.argv[1]) if name.startswith("run.ckpt"))
            if parts != ["run.ckpt.part-0-of-2", "run.ckpt.part-1-of-2"]:
                problems.append(f"checkpoint files: {parts}")
    local = kobs.propagate(kc, kpol, "heisenberg", comm=comm, checkpoint=ckpt + "2", checkpoint_every=7,
                           result="local", threads=1)
    union = {}
    for share in comm.allgather(as_dict(local)):
        union.update(share)
    if set(union) != set(as_dict(expected)) or sum(comm.allgather(len(local))) != len(expected):
        problems.append("checkpointed, local: the shares do not add up to the unpartitioned sum")
    try:
        random_observable(10, np.random.default_rng(801), count=5).propagate(kc, kpol, "heisenberg", comm=comm,
                                                                           resume=ckpt, threads=1)
        problems.append("resuming another observable did not raise")
    except ValueError as e:
        if "belongs to a different run" not in str(e):
            problems.append(f"resuming another observable: {e!r}")
    out["checkpoint_problems"] = problems

    # Documented errors (raised before any collective call, on every rank alike).
    s = PauliSum.from_strings({"XIII": 1.0})
    c = Circuit(4)
    c.h(0)
    c.cnot(0, 1)
    errors = []

    def expect(exc, match, **kwargs):
        try:
            s.propagate(c, **kwargs)
        except exc as e:
            if match not in str(e):
                errors.append(f"{kwargs}: message {e!r} lacks {match!r}")
            return
        except Exception as e:  # noqa: BLE001
            errors.append(f"{kwargs}: raised {e!r}, expected {exc.__name__}")
            return
        errors.append(f"{kwargs}: did not raise")

    expect(ValueError, "collapse_sample", policy=truncation.collapse_sample(2, 1), comm=comm)
    expect(ValueError, "mutually exclusive", comm=comm, partitions=2)
    expect(ValueError, "expected 2 blocks", comm=comm, partition_row_blocks=[[0], [1], [2], [3]])
    expect(ValueError, "one per rank", comm=comm, device=[0, 0, 0, 0])
    expect(ValueError, "comm=", comm=comm, device="auto")
    # GPU partitions under comm=: this rank's device (both ranks share device 0 on a one-GPU machine).
    if paulistrings.cuda_available():
        rng = np.random.default_rng(600)  # the same case on every rank
        gc = random_circuit(9, 30, rng)
        gobs = random_observable(9, rng)
        expected = gobs.propagate(gc, direction="heisenberg")
        for device in (0, [0, 0]):
            got, st = gobs.propagate_with_stats(gc, direction="heisenberg", comm=comm, device=device)
            problem = same_terms(got, expected)
            if problem:
                errors.append(f"device={device} over MPI: {problem}")
            if st.partition.devices != [0]:
                errors.append(f"device={device} over MPI: PartitionStats.devices is {st.partition.devices}")
    else:
        expect(RuntimeError, "GPU propagation is not available", comm=comm, device=0)
    try:
        s.anticommute_histogram([0], comm=comm)
        errors.append("anticommute_histogram(comm=) did not raise")
    except NotImplementedError:
        pass
    # Cut rows over MPI agree with the unpartitioned run.
    blocks_sum = s.propagate(c, comm=comm, partition_row_blocks=[[0, 1], [2, 3]])
    problem = same_terms(blocks_sum, s.propagate(c))
    if problem:
        errors.append("partition_row_blocks over MPI: " + problem)
    # Ranks that disagree on the circuit: every rank gets an error naming the field (no hang).
    mine = Circuit(4)
    mine.h(0)
    mine.rz(0.1 * (rank + 1), 1)
    try:
        s.propagate(mine, comm=comm)
        errors.append("mismatched circuits did not raise")
    except RuntimeError as e:
        if "disagree" not in str(e):
            errors.append(f"mismatched circuits: {e!r}")
    out["errors_ok"] = not errors
    out["errors"] = errors

    with open(os.path.join(sys.argv[1], f"rank{rank}.json"), "w") as f:
        json.dump(out, f)
    comm.Barrier()


if __name__ == "__main__":
    try:
        main()
    except BaseException:
        traceback.print_exc()
        sys.stdout.flush()
        sys.stderr.flush()
        MPI.COMM_WORLD.Abort(1)
