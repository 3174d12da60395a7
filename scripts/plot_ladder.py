#!/usr/bin/python3
"""Plots a tfim_2d ladder: wall seconds against the side L, one line per configuration.

usage: scripts/plot_ladder.py LOG [LOG ...] --out PNG [--title TEXT] [--gpu NAME]

LOG holds the lines paulistrings-workloads prints (scripts/gpu_device.sh ladder writes ladder.txt),
e.g. "tfim_2d n=324 threads=1 engine=cpu keys=narrow blocks=on wall_s=16.9084 ...". Lines of other
workloads are ignored; a configuration measured twice at one side is plotted at its mean. Needs
matplotlib (Debian: python3-matplotlib); it draws the plots of docs/PERFORMANCE.md and nothing in the
build or the tests uses it.
"""

import argparse
import math
import re
import sys
from collections import defaultdict

FIELD = re.compile(r"(\w+)=(\S+)")


def read(paths, gpu="GPU"):
    """{label: {side: [seconds, ...]}} from the tfim_2d lines of the logs; GPU runs are labelled `gpu`."""
    series = defaultdict(lambda: defaultdict(list))
    for path in paths:
        with open(path, encoding="utf-8") as log:
            for line in log:
                if not line.startswith("tfim_2d "):
                    continue
                fields = dict(FIELD.findall(line))
                if "wall_s" not in fields or "n" not in fields:
                    continue
                side = math.isqrt(int(fields["n"]))
                engine = fields.get("engine", "cpu")
                if engine.startswith("gpu"):
                    label = gpu
                else:
                    threads = fields.get("threads", "?")
                    before = fields.get("keys") == "wide" and fields.get("blocks") == "off"
                    label = f"{threads} thread{'s' if threads != '1' else ''}" + (
                        ", one layer at a time, full-width keys" if before else "")
                series[label][side].append(float(fields["wall_s"]))
    return series


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", nargs="+")
    parser.add_argument("--out", required=True)
    parser.add_argument("--title", default="tfim_2d, 21 steps, |c| ≥ 1e-6")
    parser.add_argument("--gpu", default="GPU", help="the GPU runs' label (the logs do not name the card)")
    args = parser.parse_args()
    series = read(args.logs, args.gpu)
    if not series:
        sys.exit("plot_ladder: no tfim_2d lines in " + ", ".join(args.logs))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    for label in sorted(series):
        sides = sorted(series[label])
        seconds = [sum(series[label][s]) / len(series[label][s]) for s in sides]
        style = "--" if "one layer at a time" in label else "-"
        ax.plot(sides, seconds, style, marker="o", label=label)
    ax.set_xlabel("side L (L × L qubits)")
    ax.set_ylabel("wall seconds")
    ax.set_yscale("log")
    ax.set_title(args.title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out)
    print(f"plot_ladder: wrote {args.out} ({len(series)} lines)")


if __name__ == "__main__":
    main()
