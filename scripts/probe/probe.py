"""Crash probe (scripts/gpu_device.sh probe): runs variants of a failing Python case, each in its own
subprocess with segv_backtrace.so preloaded, and prints each exit code and, for a crash, the faulting
thread's frames symbolized with addr2line — which option makes it crash, and where, on a machine
without gdb. The variants are those of the 2026-12-01 hunt (test_device_partitions_truncation_match_cpu
[coeff]: docs/PERFORMANCE.md); edit VARIANTS for the next case.

usage: python3 scripts/probe/probe.py PATH/TO/segv_backtrace.so [VARIANT ...]   (from the repo root,
       with PYTHONPATH pointing at the built package)"""
import os, re, subprocess, sys, textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SETUP = textwrap.dedent("""
    import sys, threading, numpy as np
    sys.path.insert(0, "python/tests")
    from test_gpu import crossing_case, random_circuit, random_observable, assert_close
    from paulistrings import truncation
    pol = truncation.coeff(1e-4)
""")
VARIANTS = {
    "selftest": "import ctypes; ctypes.string_at(8)",
    "base_stats": "c, obs = crossing_case(41, 10); out, st = obs.propagate_with_stats(c, pol, 'heisenberg', device=[0,0,0,0]); assert_close(out, obs.propagate(c, pol, 'heisenberg'))",
    "plain": "c, obs = crossing_case(41, 10); obs.propagate(c, pol, 'heisenberg', device=[0,0,0,0])",
    "threads4": "c, obs = crossing_case(41, 10); obs.propagate(c, pol, 'heisenberg', device=[0,0,0,0], threads=4)",
    "threads16": "c, obs = crossing_case(41, 10); obs.propagate(c, pol, 'heisenberg', device=[0,0,0,0], threads=16)",
    "two": "c, obs = crossing_case(41, 10); obs.propagate(c, pol, 'heisenberg', device=[0,0])",
    "thread_nopoll": "c, obs = crossing_case(41, 10); t = threading.Thread(target=lambda: obs.propagate(c, pol, 'heisenberg', device=[0,0,0,0])); t.start(); t.join()",
    "forward": "c, obs = crossing_case(41, 10); obs.propagate(c, pol, 'forward', device=[0,0,0,0])",
    "nopol": "c, obs = crossing_case(41, 10); obs.propagate(c, None, 'heisenberg', device=[0,0,0,0])",
    "cpu4": "c, obs = crossing_case(41, 10); assert_close(obs.propagate(c, pol, 'heisenberg', partitions=4), obs.propagate(c, pol, 'heisenberg'))",
    "real_gates": "rng = np.random.default_rng(41); c = random_circuit(10, 60, rng, complex_gates=False); obs = random_observable(10, rng, count=8); obs.propagate(c, pol, 'heisenberg', device=[0,0,0,0])",
    "noiseless": "rng = np.random.default_rng(41); c = random_circuit(10, 60, rng, noisy=False); obs = random_observable(10, rng, count=8); obs.propagate(c, pol, 'heisenberg', device=[0,0,0,0])",
    "seeds": "[ (lambda c, obs: obs.propagate(c, pol, 'heisenberg', device=[0,0,0,0]))(*crossing_case(s, 10)) or print('seed', s, 'ok', flush=True) for s in range(42, 52)]",
}

def symbolize(text):
    out = []
    for line in text.splitlines():
        m = re.match(r"FRAME (\S+) (0x[0-9a-f]+) (\S+)", line)
        if m and os.path.exists(m.group(1)):
            r = subprocess.run(["addr2line", "-f", "-C", "-i", "-e", m.group(1), m.group(2)],
                               capture_output=True, text=True)
            where = r.stdout.strip().replace("\n", " | ")
            out.append(f"{os.path.basename(m.group(1))} {m.group(2)}: {where[:400]}")
        else:
            out.append(line)
    return "\n".join(out)

def main():
    so = sys.argv[1]
    names = sys.argv[2:] or [n for n in VARIANTS if n != "selftest"]
    env = dict(os.environ, LD_PRELOAD=so)
    for name in names:
        code = ("" if name == "selftest" else SETUP) + VARIANTS[name] + "\nprint('VARIANT DONE', flush=True)\n"
        try:
            r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
            rc, text = r.returncode, r.stdout + r.stderr
        except subprocess.TimeoutExpired as e:
            rc, text = "timeout", str(e.stdout or "") + str(e.stderr or "")
        print(f"=== {name}: exit {rc}", flush=True)
        if rc != 0:
            print(symbolize(text)[-6000:], flush=True)
        elif "seed" in text:
            print(text[-800:])

main()
