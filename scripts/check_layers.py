#!/usr/bin/env python3
"""Checks that every #include between the library's layers points down (docs/design.md §3).

Usage: scripts/check_layers.py [REPO_ROOT]. Prints each include that reaches a layer its file may not
use and exits 1 if there is one. Test, benchmark and fuzz sources (names with .test., .perf., .fuzz. or
"test") may include any layer; so may testing/. The table below is §3's list of what each layer may
include: change both together.
"""
import pathlib
import re
import sys

MODELS = {"core", "channels", "circuit", "truncation", "readout"}
ENGINES = {"engine", "core", "channels", "circuit", "truncation"}
ALLOWED = {
    "core": set(),
    "channels": {"core"},
    "truncation": {"core"},
    "readout": {"core"},
    "circuit": {"channels", "core"},
    "engine": ENGINES,
    "cpu": ENGINES,
    "gpu": ENGINES,
    "partition": ENGINES | {"cpu", "gpu"},
    "sweep": ENGINES | {"readout", "cpu"},
    "io": MODELS,
    "run": MODELS | ENGINES | {"cpu", "gpu", "partition", "sweep", "io"},
    "cli": MODELS | ENGINES | {"cpu", "gpu", "partition", "sweep", "io", "run"},
}
ALLOWED["python"] = ALLOWED["cli"]  # python/src: the other front end
INCLUDE = re.compile(r'\s*#\s*include\s+"paulistrings/(\w+)/')
SOURCE = re.compile(r"\.(h|cc|inl|cuh|cu)$")


def is_test_source(name: str) -> bool:
    return any(part in name for part in (".test.", ".perf.", ".fuzz.", "test"))


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[1])
    folders = [(d.name, d) for d in sorted((root / "src/paulistrings").iterdir()) if d.is_dir()]
    folders.append(("python", root / "python/src"))
    problems = []
    for layer, folder in folders:
        if layer == "testing":
            continue
        if layer not in ALLOWED:
            problems.append(f"{folder}: a layer that scripts/check_layers.py does not know (docs/design.md §3)")
            continue
        for path in sorted(folder.iterdir()):
            if not SOURCE.search(path.name) or is_test_source(path.name):
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                match = INCLUDE.match(line)
                if match and match.group(1) != layer and match.group(1) not in ALLOWED[layer]:
                    problems.append(f"{path.relative_to(root)}:{number}: {layer}/ may not include "
                                    f"{match.group(1)}/: {line.strip()}")
    for problem in problems:
        print(problem)
    print(f"check_layers: {len(problems)} include(s) pointing up or sideways")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
