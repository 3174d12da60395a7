#!/usr/bin/env python3
"""⟨Z62⟩ of the 127-qubit heavy-hex kicked Ising circuit as a function of the kick angle θh.

The utility-scale workload of Kim et al., Nature 618, 500 (2023) on IBM Eagle's heavy-hex coupling
map: each Trotter step is rx(θh) on every qubit, then a ZZ rotation by −π/2 on every one of the 144
edges; the observable Z62 is propagated in the Heisenberg picture with a coefficient cutoff and
read out in |0…0⟩. For every θh the script records the value, the peak number of Pauli strings and
the time, prints a table, writes a CSV, and saves a PNG with two panels: value vs θh and peak terms
vs θh (needs matplotlib; without it the script says so and keeps the table and the CSV).

    python3 examples/kicked_ising_sweep.py                       # 5 steps, 17 angles in [0, π/2]
    python3 examples/kicked_ising_sweep.py --steps 20 --points 17 --coeff 1e-4 --max-weight 8
    PYTHONPATH=build/python python3 examples/kicked_ising_sweep.py --out sweep.png

Written against the original package's API (Circuit, PauliSum, truncation) so it runs on either.
"""

import argparse
import csv
import math
import sys
import time

try:
    from paulistrings import Circuit, PauliSum, truncation
except ImportError:  # pragma: no cover - depends on how the package was built
    sys.exit("kicked_ising_sweep: cannot import paulistrings; install it (pip install --no-build-isolation .) "
             "or run with PYTHONPATH=build/python after scripts/build.sh")


def heavy_hex_edges():
    """The 144 edges of the 127-qubit heavy-hex map (embedded in this package's library)."""
    from paulistrings.workloads import heavy_hex_127_edges

    return heavy_hex_127_edges()


def kicked_ising(steps, theta_h, edges, theta_zz=-math.pi / 2):
    circuit = Circuit(127)
    for _ in range(steps):
        for q in range(127):
            circuit.rx(theta_h, q)
        for a, b in edges:
            circuit.pauli_rotation("ZZ", [a, b], theta_zz)
    return circuit


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=5, help="Trotter steps (default 5)")
    parser.add_argument("--points", type=int, default=17, help="angles θh = k·(π/2)/(points−1) (default 17)")
    parser.add_argument("--coeff", type=float, default=2.0**-12, help="drop |c| at or below this (default 2^-12)")
    parser.add_argument("--max-weight", type=int, default=None, help="also drop Pauli weight above this")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads (default: every core)")
    parser.add_argument("--out", default="kicked_ising_sweep.png", help="PNG file (default kicked_ising_sweep.png)")
    parser.add_argument("--csv", default=None, help="CSV file (default: the PNG name with .csv)")
    args = parser.parse_args(argv)
    if args.points < 2 or args.steps < 0:
        parser.error("--points must be at least 2 and --steps non-negative")
    return args


def sweep(args):
    edges = heavy_hex_edges()
    policy = truncation.coeff(args.coeff)
    if args.max_weight is not None:
        policy = truncation.weight(args.max_weight) & policy
    observable = PauliSum.from_strings({"I" * 62 + "Z" + "I" * 64: 1.0}, num_qubits=127)
    extra = {} if args.threads is None else {"threads": args.threads}
    rows = []
    print(f"127-qubit heavy-hex kicked Ising, {args.steps} steps, <Z62> in |0...0>, policy {policy!r}")
    print(f"{'theta_h':>10} {'<Z62>':>14} {'peak_terms':>12} {'final_terms':>12} {'seconds':>9}")
    for k in range(args.points):
        theta = k * (math.pi / 2) / (args.points - 1)
        circuit = kicked_ising(args.steps, theta, edges)
        start = time.perf_counter()
        evolved, stats = observable.propagate_with_stats(circuit, policy, direction="heisenberg", **extra)
        seconds = time.perf_counter() - start
        value = evolved.expectation("z+").real
        rows.append((theta, value, stats.peak_terms, stats.final_terms, seconds))
        print(f"{theta:10.6f} {value:14.10f} {stats.peak_terms:12d} {stats.final_terms:12d} {seconds:9.2f}", flush=True)
    return rows


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["theta_h", "z62", "peak_terms", "final_terms", "seconds"])
        writer.writerows(rows)


def plot(path, rows, args):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(
            "\nkicked_ising_sweep: matplotlib is not installed, so no plot was made "
            f"({path} not written). Install it (pip install matplotlib, or apt-get install python3-matplotlib) "
            "and run again; the table above and the CSV hold the data.",
            file=sys.stderr,
        )
        return False
    thetas = [r[0] for r in rows]
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(6.4, 6.4))
    top.plot(thetas, [r[1] for r in rows], "o-")
    top.set_ylabel(r"$\langle Z_{62} \rangle$")
    top.set_title(f"127-qubit kicked Ising, {args.steps} steps, |c| > {args.coeff:.3g}")
    top.grid(True, alpha=0.3)
    bottom.semilogy(thetas, [max(r[2], 1) for r in rows], "s-", color="tab:red")
    bottom.set_ylabel("peak Pauli strings")
    bottom.set_xlabel(r"$\theta_h$ (rad)")
    bottom.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"\nplot written to {path}")
    return True


def main(argv=None):
    args = parse_args(argv)
    rows = sweep(args)
    csv_path = args.csv or (args.out[:-4] if args.out.endswith(".png") else args.out) + ".csv"
    write_csv(csv_path, rows)
    print(f"data written to {csv_path}")
    plot(args.out, rows, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
