"""examples/kicked_ising_sweep.py runs end to end: table, CSV, and the PNG when matplotlib is
installed (otherwise a clear message saying so)."""

import csv
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "kicked_ising_sweep.py"


@pytest.mark.skipif(not EXAMPLE.exists(), reason=f"{EXAMPLE} is not in this checkout")
def test_kicked_ising_sweep_example(tmp_path):
    png = tmp_path / "sweep.png"
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE), "--steps", "1", "--points", "3", "--threads", "1", "--out", str(png)],
        capture_output=True, text=True, timeout=120, env=dict(os.environ),
    )
    assert proc.returncode == 0, proc.stderr
    with open(tmp_path / "sweep.csv") as f:
        rows = list(csv.DictReader(f))
    assert [round(float(r["theta_h"]), 12) for r in rows] == [0.0, round(math.pi / 4, 12), round(math.pi / 2, 12)]
    # one Trotter step: <Z62> = cos(theta_h) exactly
    for r in rows:
        assert float(r["z62"]) == pytest.approx(math.cos(float(r["theta_h"])), abs=1e-12)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "matplotlib is not installed" in proc.stderr and not png.exists()
    else:
        assert png.exists() and png.stat().st_size > 1000
