#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Writes an irregular Slurm topology.conf and a matching gres.conf, a test fixture."""
# Usage: contrib/tools/gen_irregular_topology.py OUTDIR [--seed N] [--cli NVLPLACE]
#   (default seed 7; hostlists are written by `nvlplace check hostlist --compress`)
# The checked-in fixture is tests/fixtures/irregular/, made with the default seed:
#   python3 contrib/tools/gen_irregular_topology.py tests/fixtures/irregular
#
# The cluster looks like one that grew over years: leaves of 2..8 nodes, spines over 1..6
# leaves, one core above every spine plus a service leaf wired straight to the core, rack
# numbers (and so leaf names) with gaps, node numbers with gaps (retired nodes), and nodes
# re-cabled to a neighbouring leaf, so that Nodes= lists read like cn[001-007,010,012-015].
# Four node kinds, one gres.conf Type each:
#   cn  8 x H100 SXM on NVSwitch     File=/dev/nvidia[0-7], one NVLink island
#   hx  4 x H100 SXM (HGX 4-GPU)     File=/dev/nvidia[0-3], one island (all-to-all NVLink)
#   px  8 x H100 PCIe, two 4-GPU NVLink islands (made up; real H100 PCIe bridges join pairs):
#       one line per GPU with Links= (2 islands)
#   nv  4 x H100 NVL, NVLink-bridged pairs:     one line per GPU with Links= (2 islands)
# Only the standard library and the nvlplace CLI; the same seed gives the same bytes.
import argparse
import os
import random
import subprocess
import sys

KINDS = {
    # prefix: (gres Type, GPUs per node, islands or None for one island, Links value)
    "cn": ("H100", 8, None, 0),
    "hx": ("H100", 4, None, 0),
    "px": ("H100-PCIe", 8, [[0, 1, 2, 3], [4, 5, 6, 7]], 2),
    "nv": ("H100-NVL", 4, [[0, 1], [2, 3]], 3),
}
KIND_WEIGHTS = [("cn", 10), ("hx", 3), ("px", 2), ("nv", 2)]
WIDTH = 3               # node numbers are zero padded to 3 digits
MIN_LEAF, MAX_LEAF = 2, 8
MIN_NODES, MAX_NODES = 300, 400


CLI = None  # the nvlplace binary (--cli): hostlists are the CLI's to write


def compress(names):
    """The Slurm hostlist of these names, as `nvlplace check hostlist --compress` writes it."""
    r = subprocess.run([CLI, "check", "hostlist", "--compress", *names], text=True,
                       capture_output=True, check=False)
    if r.returncode != 0:
        sys.exit(f"gen_irregular_topology.py: {CLI} check hostlist: {r.stderr.strip()}")
    return r.stdout.strip()


def pick_kind(rng):
    total = sum(w for _, w in KIND_WEIGHTS)
    x = rng.randrange(total)
    for kind, w in KIND_WEIGHTS:
        if x < w:
            return kind
        x -= w
    raise AssertionError


def build(seed):
    rng = random.Random(seed)
    # Leaves (one per rack), sizes 2..8, until the node count lands in range.
    while True:
        sizes = []
        while sum(sizes) < MIN_NODES:
            sizes.append(rng.randint(MIN_LEAF, MAX_LEAF))
        if sum(sizes) <= MAX_NODES:
            break
    next_num = {k: 1 for k in KINDS}
    leaves = []   # dicts: name, kind, nodes (list of names)
    rack = 0
    for size in sizes:
        rack += 1 + (1 if rng.random() < 0.15 else 0)          # some rack numbers unused
        kind = pick_kind(rng)
        nodes = []
        while len(nodes) < size:
            if rng.random() < 0.06:                              # a retired node number
                next_num[kind] += 1 + rng.randrange(2)
            nodes.append(f"{kind}{next_num[kind]:0{WIDTH}d}")
            next_num[kind] += 1
        leaves.append({"name": f"leaf{rack:02d}", "kind": kind, "nodes": nodes,
                       "speed": rng.choice([None, None, 200, 400])})
    # Re-cabling: a few nodes move to the nearest other leaf of the same kind (Slurm does not
    # care which names a leaf holds), which breaks both leaves' ranges into pieces.
    for _ in range(12):
        a = rng.randrange(len(leaves))
        la = leaves[a]
        same = [b for b in range(len(leaves)) if b != a and leaves[b]["kind"] == la["kind"]]
        if not same:
            continue
        lb = leaves[min(same, key=lambda b: (abs(b - a), b))]
        if len(la["nodes"]) <= MIN_LEAF or len(lb["nodes"]) >= MAX_LEAF:
            continue
        moved = la["nodes"].pop(rng.randrange(1, len(la["nodes"]) - 1))
        lb["nodes"].append(moved)
    # The last leaf is the service leaf wired straight to the core; the rest go under spines
    # of 1..6 consecutive leaves.
    service = leaves.pop()
    service["name"] = "svc-leaf"
    spines = []
    i = 0
    while i < len(leaves):
        n = min(rng.choice([1, 2, 3, 3, 4, 4, 5, 6]), len(leaves) - i)
        spines.append({"name": f"spine{len(spines) + 1}", "leaves": leaves[i:i + n],
                       "speed": 400 if rng.random() < 0.7 else None})
        i += n
    return leaves, service, spines


def switch_line(name, key, value, speed, wrap):
    """One SwitchName line; wrap=True continues it over several lines with a trailing '\\'."""
    fields = [f"SwitchName={name}", f"{key}={value}"] + ([f"LinkSpeed={speed}"] if speed else [])
    if not wrap:
        return " ".join(fields) + "\n"
    return " \\\n    ".join(fields) + "\n"


def topology_conf(seed, leaves, service, spines):
    all_leaves = leaves + [service]
    n_nodes = sum(len(l["nodes"]) for l in all_leaves)
    n_gpus = sum(len(l["nodes"]) * KINDS[l["kind"]][1] for l in all_leaves)
    out = [
        "# Irregular Slurm topology/tree fixture: a cluster that grew over the years.\n",
        f"# Generated by contrib/tools/gen_irregular_topology.py --seed {seed}; edit the script, "
        "not this file.\n",
        f"# {n_nodes} nodes, {n_gpus} GPUs, {len(all_leaves)} leaves, {len(spines)} spines, "
        "1 core; see gres.conf for GPUs per node.\n",
        "# Leaf names follow rack numbers (some racks are empty); retired node numbers leave\n",
        "# gaps; re-cabled nodes sit on a neighbouring leaf. LinkSpeed is given where known.\n",
    ]
    for sp in spines:
        out.append("\n")
        out.append(f"# {sp['name']}: {len(sp['leaves'])} leaves, "
                   f"{sum(len(l['nodes']) for l in sp['leaves'])} nodes\n")
        for l in sp["leaves"]:
            hl = compress(l["nodes"])
            out.append(switch_line(l["name"], "Nodes", hl, l["speed"], wrap="," in hl))
        out.append(switch_line(sp["name"], "Switches", compress([l["name"] for l in sp["leaves"]]),
                               sp["speed"], wrap=False))
    out.append("\n# Service leaf, cabled straight to the core (no spine above it).\n")
    out.append(switch_line(service["name"], "Nodes", compress(service["nodes"]), 200, wrap=False))
    out.append("\n# The core joins every spine and the service leaf.\n")
    core_children = compress([sp["name"] for sp in spines]) + "," + service["name"]
    out.append(switch_line("core", "Switches", core_children, 800, wrap=True))
    return "".join(out)


def links_row(gpus, islands, value, g):
    mine = next(isl for isl in islands if g in isl)
    return ",".join("-1" if h == g else (str(value) if h in mine else "0") for h in range(gpus))


def gres_conf(seed, leaves, service):
    by_kind = {k: [] for k in KINDS}
    for l in leaves + [service]:
        by_kind[l["kind"]].extend(l["nodes"])
    out = [
        "# gres.conf matching the irregular topology.conf fixture.\n",
        f"# Generated by contrib/tools/gen_irregular_topology.py --seed {seed}; edit the script, "
        "not this file.\n",
        "AutoDetect=off\n",
    ]
    notes = {
        "cn": "8 x H100 SXM on NVSwitch: one NVLink island, one line for all GPUs.",
        "hx": "4 x H100 SXM on an HGX 4-GPU board: all-to-all NVLink, one island.",
        "px": "8 x H100 PCIe in two 4-GPU NVLink islands (made up to exercise islands; real "
              "H100 PCIe bridges join pairs): one line per GPU, Links= gives 2 islands.",
        "nv": "4 x H100 NVL in NVLink-bridged pairs: one line per GPU, Links= gives 2 islands.",
    }
    for kind, (gtype, gpus, islands, value) in KINDS.items():
        nodes = by_kind[kind]
        if not nodes:
            continue
        hl = compress(nodes)
        out.append(f"\n# {kind}: {notes[kind]} ({len(nodes)} nodes)\n")
        if islands is None:
            cores = " Cores=0-63" if gpus == 8 else ""
            out.append(f"NodeName={hl} Name=gpu Type={gtype} File=/dev/nvidia[0-{gpus - 1}]"
                       f"{cores}\n")
        else:
            for g in range(gpus):
                out.append(f"NodeName={hl} Name=gpu Type={gtype} File=/dev/nvidia{g} "
                           f"Links={links_row(gpus, islands, value, g)}\n")
    return "".join(out)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("outdir", help="directory to write topology.conf and gres.conf into")
    ap.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
    ap.add_argument("--cli", default=os.environ.get("NVLPLACE_BIN", "build/contrib/nvlplace"),
                    help="the nvlplace binary (default $NVLPLACE_BIN, else build/contrib/nvlplace)")
    args = ap.parse_args(argv)
    global CLI
    CLI = args.cli
    leaves, service, spines = build(args.seed)
    os.makedirs(args.outdir, exist_ok=True)
    for fname, text in (("topology.conf", topology_conf(args.seed, leaves, service, spines)),
                        ("gres.conf", gres_conf(args.seed, leaves, service))):
        path = os.path.join(args.outdir, fname)
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
