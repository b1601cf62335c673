#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The parts of contrib/bench/papers.sh that are not shell: the openb trace inflated as FGD
replays it, and the tables that set the replay's figures beside the papers' published ones.

Usage: papers.py openb-inflate POD_LIST.csv --gpus N [--to R] > inflated.csv
       papers.py openb-table --recorded DIR --inflated DIR [--points 0.9,1.0,1.1,1.2]
       papers.py spread-table --run LABEL=DIR [--run LABEL=DIR ...]

openb-inflate  FGD (Weng et al., ATC'23) fills the cluster with pods drawn from the trace, none
               leaving, and counts the GPUs left unallocated as the arrived workload grows. Here:
               the pods with GPUs, in file order, cycled until their GPUs (a GPU-sharing pod
               counts one GPU, as the replay places it) reach R (default 1.2) x N, one pod a
               second, every pod running 1e7 s, so that nothing ends while pods arrive.
openb-table    markdown: per policy, the GPUs unallocated when the arrived GPUs reach each point
               (a share of the cluster's GPUs; from the inflated replay's jobs.csv: GPUs of the
               pods started by then), and the recorded replay's unallocated_gpus_mean.
spread-table   markdown: per fabric, per policy, the DP groups' mean spread per level, the
               widest group's spread over leaves, the estimated step time against the replay's
               common baseline (summary.json), firstfit / policy beside Arnold's 1.67x (of the
               maximum spread), and the spread over leaf switches by job size (jobs.csv).
"""

import argparse
import collections
import csv
import json
import os
import sys

DURATION_S = 10_000_000
# Published figures, as the papers state them (abstracts: ATC'23 and NeurIPS'25).
FGD_PUBLISHED = ("FGD vs the best packing-based baseline: up to 49% fewer unallocated GPUs "
                 "(290 more GPUs allocated; emulated 6,200-GPU cluster, openb, GPU-sharing pods "
                 "as fractions of a GPU)")
ARNOLD_RATIO = 1.67
ARNOLD_PUBLISHED = ("Arnold vs its baseline: up to 1.67x smaller maximum spread of communication "
                    "groups (simulation); +10.6% end-to-end throughput on 9,600+ GPUs (production)")


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def usage_text():
    return __doc__.split("\n\n", 1)[1]


def openb_inflate(args):
    with open(args.pod_list, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        fields = reader.fieldnames
        pods = [r for r in reader if int(r["num_gpu"] or 0) > 0]
    if not pods:
        raise UsageError(f"{args.pod_list}: no pod with GPUs")
    target = args.to * args.gpus
    out = csv.DictWriter(sys.stdout, fieldnames=fields, lineterminator="\n")
    out.writeheader()
    total, i = 0, 0
    while total < target:
        pod = dict(pods[i % len(pods)])
        pod["name"] = f"{pod['name']}-{i // len(pods)}"
        pod["creation_time"] = pod["scheduled_time"] = str(i)
        pod["deletion_time"] = str(i + DURATION_S)
        pod["pod_phase"] = "Running"
        out.writerow(pod)
        total += int(pod["num_gpu"])
        i += 1


def load_summary(run_dir):
    with open(os.path.join(run_dir, "summary.json"), encoding="utf-8") as f:
        return json.load(f)


def load_jobs(run_dir):
    with open(os.path.join(run_dir, "jobs.csv"), encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def relative(value, base):
    """`value` against `base` (GPUs): -49% when it is 49% fewer; the difference when base is 0."""
    if base is None:
        return "-"
    if base == 0:
        return "tie (0)" if value == 0 else f"+{value:,} GPUs (0 there)"
    return f"{100 * (value / base - 1):+.0f}% ({value - base:+,} GPUs)"


def openb_table(args):
    recorded = load_summary(args.recorded)
    inflated = load_summary(args.inflated)
    gpus = inflated["topology"]["gpus"]
    points = [float(p) for p in args.points.split(",")]
    jobs = collections.defaultdict(list)
    for j in load_jobs(args.inflated):
        jobs[j["policy"]].append(j)
    # Arrival time at which the arrived GPUs first reach each point (same for every policy).
    first = next(iter(jobs.values()))
    order = sorted(first, key=lambda j: float(j["submit"]))
    reach, total = {}, 0
    for j in order:
        total += int(j["gpus"])
        for p in points:
            if p not in reach and total >= p * gpus:
                reach[p] = float(j["submit"])
    points = [p for p in points if p in reach]
    unalloc = {}
    for policy, rows in jobs.items():
        unalloc[policy] = {}
        for p in points:
            used = sum(int(j["gpus"]) for j in rows
                       if j["start"] and float(j["start"]) <= reach[p] < DURATION_S)
            unalloc[policy][p] = gpus - used
    policies = [p["policy"] for p in inflated["policies"]]
    at = 1.0 if 1.0 in points else points[-1]  # FGD's point: the arrived GPUs fill the cluster
    lines = [f"openb ({inflated['topology']['nodes']:,} nodes, {gpus:,} GPUs): GPUs left "
             "unallocated as pods arrive, none leaving (FGD's experiment); a GPU-sharing pod "
             "takes one whole GPU.", ""]
    head = ["policy"] + [f"unallocated at {100 * p:.0f}% arrived" for p in points] + \
        [f"vs firstfit at {100 * at:.0f}%", f"vs best other at {100 * at:.0f}%",
         "as recorded: unallocated_gpus_mean"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    rec = {p["policy"]: p for p in recorded["policies"]}
    for policy in policies:
        u = unalloc[policy]
        cells = [policy] + [f"{u[p]:,} ({100 * u[p] / gpus:.1f}%)" for p in points]
        ff = unalloc.get("firstfit", {}).get(at)
        cells.append(relative(u[at], ff) if policy != "firstfit" else "-")
        others = [unalloc[o][at] for o in policies if o != policy]
        cells.append(relative(u[at], min(others)) if others else "-")
        r = rec.get(policy)
        cells.append(f"{r['unallocated_gpus_mean']:,.0f} ({100 * r['utilization_mean']:.1f}% used)"
                     if r else "-")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("| FGD, published | " + " | ".join(["not published here"] * len(points)) +
                 " | - | up to -49% (vs the best baseline) | - |")
    lines += ["", f"Published: {FGD_PUBLISHED}. `pack` (best fit: least fragmentation) is a "
              "packing heuristic like FGD's baselines, not FGD; the closest figure to compare is "
              "the best policy here against the best other one.", ""]
    return lines


def spread_table(args):
    lines = []
    for spec in args.run:
        label, run_dir = spec.split("=", 1)
        s = load_summary(run_dir)
        levels = s["estimates"]["spread_levels"][1:]  # switch tiers; NVLink domains apart
        by = {p["policy"]: p for p in s["policies"]}
        t = s["topology"]
        e = s["estimates"]
        base = (f"{e['baseline_placement']}'s" if e.get("baseline_placement")
                else "each policy's own")
        lines.append(f"{label}: {t['name']} ({t['nodes']:,} nodes, {t['gpus']:,} GPUs), "
                     f"{s['trace']['jobs']:,} jobs; DP groups' spread (switches each DP group "
                     "spans: mean over a job's groups, and its widest group, then mean over "
                     "jobs); step time from the cost model against "
                     f"{base} placement of each job on the empty cluster "
                     f"(communication {100 * e['comm_share']:.0f}% of a step"
                     f"{', assumed' if e.get('comm_share_assumed') else ''}).")
        lines.append("")
        leaf = levels[0]
        head = ["policy", "DP jobs"] + [f"DP spread: {lv}" for lv in levels] + \
            [f"firstfit / policy: {lv}" for lv in levels[:2]] + \
            [f"DP max spread: {leaf}", f"firstfit / policy: max {leaf}", "Arnold (max)",
             "step / baseline", "throughput vs firstfit", "mean wait"]
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
        ff = by.get("firstfit")
        for name, p in by.items():
            sp = p["dp_group_spread"]
            mx = p.get("dp_group_spread_max", {})
            cells = [name, f"{p['dp_group_jobs']:,}"] + [f"{sp[lv]:.2f}" for lv in levels]
            for lv in levels[:2]:
                cells.append(f"{ff['dp_group_spread'][lv] / sp[lv]:.2f}x" if ff and sp[lv] else "-")
            cells.append(f"{mx[leaf]:.2f}" if leaf in mx else "-")
            ffmx = ff.get("dp_group_spread_max", {}) if ff else {}
            if mx.get(leaf) and leaf in ffmx:
                r = ffmx[leaf] / mx[leaf]
                cells.append(f"{r:.2f}x")
                cells.append("met" if r >= ARNOLD_RATIO else
                             f"missed by {100 * (1 - r / ARNOLD_RATIO):.1f}%"
                             if name != "firstfit" else "-")
            else:
                cells += ["-", "-"]
            cells.append(f"x{p['step_time_ratio_mean']:.3f}")
            cells.append(f"{100 * (ff['step_time_ratio_mean'] / p['step_time_ratio_mean'] - 1):+.1f}%"
                         if ff and name != "firstfit" else "-")
            cells.append(f"{p['wait_s']['mean'] / 3600:.1f} h")
            lines.append("| " + " | ".join(cells) + " |")
        lines += ["", f"{label}: DP groups' spread over leaf switches by job size (jobs with DP "
                  "groups)", ""]
        lines += size_table(run_dir, list(by))
        lines.append("")
    lines.append(f"Published: {ARNOLD_PUBLISHED}. Arnold's figure is the maximum spread: "
                 "compare with the max columns.")
    return lines


def size_table(run_dir, policies):
    sums = collections.defaultdict(lambda: [0.0, 0])
    for j in load_jobs(run_dir):
        if j["status"] != "started" or not j["dp_span_leaves"]:
            continue
        k = (j["policy"], int(j["gpus"]))
        sums[k][0] += float(j["dp_span_leaves"])
        sums[k][1] += 1
    sizes = sorted({g for _, g in sums})
    head = ["job GPUs", "jobs"] + policies + ["firstfit / topo"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for g in sizes:
        mean = {p: sums[(p, g)][0] / sums[(p, g)][1] for p in policies if sums[(p, g)][1]}
        n = max((sums[(p, g)][1] for p in policies), default=0)
        cells = [f"{g:,}", f"{n:,}"] + [f"{mean[p]:.2f}" if p in mean else "-" for p in policies]
        ratio = (f"{mean['firstfit'] / mean['topo']:.2f}x"
                 if "firstfit" in mean and mean.get("topo") else "-")
        out.append("| " + " | ".join(cells + [ratio]) + " |")
    return out


def main():
    argv = sys.argv[1:]
    if argv and argv[0] in ("-h", "--help"):
        print(usage_text(), end="")
        return 0
    try:
        ap = Parser(prog="papers.py", add_help=False)
        sub = ap.add_subparsers(dest="cmd", required=True, parser_class=Parser)
        p = sub.add_parser("openb-inflate", add_help=False)
        p.add_argument("pod_list")
        p.add_argument("--gpus", type=int, required=True)
        p.add_argument("--to", type=float, default=1.2)
        p = sub.add_parser("openb-table", add_help=False)
        p.add_argument("--recorded", required=True)
        p.add_argument("--inflated", required=True)
        p.add_argument("--points", default="0.9,1.0,1.1,1.2")
        p = sub.add_parser("spread-table", add_help=False)
        p.add_argument("--run", action="append", required=True)
        args = ap.parse_args(argv)
        if args.cmd == "openb-inflate":
            if not (args.gpus > 0 and 0 < args.to <= 10):
                raise UsageError("--gpus must be positive and --to from 0 to 10")
            openb_inflate(args)
        else:
            lines = openb_table(args) if args.cmd == "openb-table" else spread_table(args)
            print("\n".join(lines))
    except UsageError as e:
        print(f"papers.py: {e}\n{usage_text()}", file=sys.stderr, end="")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
