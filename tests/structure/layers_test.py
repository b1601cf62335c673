#!/usr/bin/env python3
"""The folders are layers that depend only downward (ARCHITECTURE.md): every #include of a
project header in a library source names a layer at or below the source's own, so there is
no include cycle between folders; no Slurm header is included below plugin/.

  model (placement/model) < formats (placement/formats) < engine (placement/engine)
    < policies < plugin < replay (contrib/replay) < cli, bench (contrib/cli, contrib/bench)

Tests (*_test.cc) may also read their fixtures through the formats layer and use tests/
helpers; tests/ itself holds the cross-layer tests. Exit 1 with one line per violation."""
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LAYERS = [  # (folder, rank)
    ("placement/model", 0),
    ("placement/formats", 1),
    ("placement/engine", 2),
    ("policies", 3),
    ("plugin", 4),
    ("contrib/replay", 5),
    ("contrib/cli", 6),
    ("contrib/bench", 6),
]
SOURCES = (".h", ".cc", ".c")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SLURM = re.compile(r'^\s*#\s*include\s+[<"](slurm/|src/)', re.M)


def layer_of(path):
    for folder, rank in LAYERS:
        if path == folder or path.startswith(folder + "/"):
            return folder, rank
    return None, None


def main():
    problems = []
    checked = 0
    for folder, rank in LAYERS:
        for dirpath, _, files in os.walk(os.path.join(ROOT, folder)):
            for name in sorted(files):
                if not name.endswith(SOURCES):
                    continue
                path = os.path.relpath(os.path.join(dirpath, name), ROOT)
                text = open(os.path.join(ROOT, path), encoding="utf-8").read()
                checked += 1
                is_test = name.endswith(("_test.cc", "_testing.h"))
                if rank < 4 and SLURM.search(text):
                    problems.append(f"{path}: includes a Slurm header below plugin/")
                for inc in INCLUDE.findall(text):
                    if inc.startswith("tests/") and is_test:
                        continue
                    target, target_rank = layer_of(inc)
                    if target is None:
                        if inc.startswith(("placement/", "policies/", "contrib/", "tests/")):
                            problems.append(f"{path}: includes {inc}, which is in no layer")
                        continue  # a system, library or same-folder (C plugin) header
                    if target_rank <= rank:
                        continue
                    if is_test and target == "placement/formats":
                        continue
                    problems.append(f"{path} ({folder}) includes {inc} ({target}), a layer above")
    for p in problems:
        print(p)
    print(f"layers: {checked} sources checked, {len(problems)} upward includes")
    return 1 if problems or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
