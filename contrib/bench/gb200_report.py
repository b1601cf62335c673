#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The parts of contrib/bench/gb200.sh that are not shell: the load patterns and the job mix
(seeded, the same in every setup), the sampler of GPUs left unusable, and the report.

Usage: gb200_report.py pattern --trays N --pattern whole|partial|drained [--seed S]
       gb200_report.py mix --jobs N [--seed S]
       gb200_report.py sample --out FILE --stop FILE --jobs-file FILE [--interval S]
       gb200_report.py job --cli CLI --topology FILE --out DIR --id ID (scontrol -o show job -d on stdin)
       gb200_report.py report --out DIR [--json FILE]

pattern  one line per action: "hold NODES GPUS_PER_NODE" (a holder job pinned with -w on
         NODES, a hostlist of trays of one rack) or "drain NODE". Per rack of 18 trays a number
         of whole trays stays free (a seeded permutation of a fixed list per 8 racks, so every
         pattern has racks where a TP group of 4 trays fits beside nvlplace's 2 spares):
           whole    free trays 3,4,5,6,6,7,8,10; every other tray fully busy
           partial  free trays 2,3,4,5,6,6,7,8; 5 trays with 1-3 GPUs busy; the rest busy
           drained  2 trays drained; free trays 3,4,5,6,6,7,8,9; 1 tray with 1-3 GPUs busy
mix      one line per measured job, in submission order: "KIND TP NODES GPUS" where KIND is
         tp8 (TP=8 over 2 trays), tp16x32 (32 GPUs at TP=16, 8 trays), tp16x64 (64 GPUs at
         TP=16, 16 trays) or plain (--gpus=8, no -N, TP 1 for the cost model); per 10 jobs
         4 tp8, 3 plain, 2 tp16x32, 1 tp16x64, in a seeded order.
sample   every --interval seconds until --stop exists: "TIME PENDING STRANDED" where PENDING
         is the number of measured jobs (ids in --jobs-file) still pending and STRANDED the
         free GPUs on trays that are partly allocated (1-3 of 4 GPUs busy, not drained).
job      one JSON line of a finished measured job (times, GPUs, placement line), from its
         scontrol record and the record its batch script wrote.
report   the markdown tables (one per pattern, the setups as columns) from DIR/*/*/jobs.jsonl,
         DIR/*/*/samples and DIR/*/*/sdiag; all figures also as JSON.
"""

import argparse
import datetime
import glob
import json
import os
import random
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cluster"))
import placement_log  # noqa: E402

RACK_TRAYS = 18
TRAY_GPUS = 4
# Whole free trays per rack, per 8 racks (permuted per pattern by the seed).
FREE_TRAYS = {
    "whole": [3, 4, 5, 6, 6, 7, 8, 10],
    "partial": [2, 3, 4, 5, 6, 6, 7, 8],
    "drained": [3, 4, 5, 6, 6, 7, 8, 9],
}
PARTIAL_TRAYS = {"whole": 0, "partial": 5, "drained": 1}
DRAINED_TRAYS = {"whole": 0, "partial": 0, "drained": 2}
# Kind: (TP, nodes or 0 for no -N, GPUs).
KINDS = {"tp8": (8, 2, 8), "tp16x32": (16, 8, 32), "tp16x64": (16, 16, 64), "plain": (1, 0, 8)}
MIX_OF_10 = ["tp8"] * 4 + ["plain"] * 3 + ["tp16x32"] * 2 + ["tp16x64"]
SETUPS = ["block", "tree", "nvlplace", "nvlplace-spares", "nvlplace-gpus"]


def tray(i):
    return f"gb{i + 1:03d}"


def hostlist(trays):
    """gb[003,005-007] style hostlist of tray indexes (0-based), sorted."""
    trays = sorted(trays)
    runs, start = [], None
    for k, t in enumerate(trays):
        if start is None:
            start = t
        if k + 1 == len(trays) or trays[k + 1] != t + 1:
            runs.append(f"{start + 1:03d}" if start == t else f"{start + 1:03d}-{t + 1:03d}")
            start = None
    return "gb" + (runs[0] if len(runs) == 1 and "-" not in runs[0] else "[" + ",".join(runs) + "]")


def pattern_actions(trays, name, seed):
    """The pattern's actions, as the pattern command prints them: ("drain", NODE) and
    ("hold", NODES, GPUS_PER_NODE)."""
    if trays % RACK_TRAYS:
        raise SystemExit(f"gb200_report.py: --trays {trays} is not a whole number of racks")
    racks = trays // RACK_TRAYS
    rng = random.Random(f"{seed}/{name}")
    free = []
    while len(free) < racks:
        block = list(FREE_TRAYS[name])
        rng.shuffle(block)
        free += block
    out = []
    for r in range(racks):
        rack = list(range(r * RACK_TRAYS, (r + 1) * RACK_TRAYS))
        rng.shuffle(rack)
        drained = rack[:DRAINED_TRAYS[name]]
        rest = rack[len(drained):]
        partial = rest[:PARTIAL_TRAYS[name]]
        busy = rest[len(partial) + free[r]:]
        out += [("drain", tray(t)) for t in sorted(drained)]
        if busy:
            out.append(("hold", hostlist(busy), TRAY_GPUS))
        out += [("hold", tray(t), rng.randint(1, TRAY_GPUS - 1)) for t in sorted(partial)]
    return out


def pattern(args):
    for action in pattern_actions(args.trays, args.pattern, args.seed):
        print(*action)


def mix_jobs(jobs, seed):
    """The measured jobs in submission order: (KIND, TP, NODES, GPUS)."""
    rng = random.Random(f"{seed}/mix")
    kinds = []
    while len(kinds) < jobs:
        block = list(MIX_OF_10)
        rng.shuffle(block)
        kinds += block
    return [(kind, *KINDS[kind]) for kind in kinds[:jobs]]


def mix(args):
    for job in mix_jobs(args.jobs, args.seed):
        print(*job)


def node_lines():
    """"NODE STATE GRES_USED" per tray, from sinfo (scontrol show node of 26.05 shows no
    GresUsed), or None when sinfo does not answer."""
    r = subprocess.run(["sinfo", "-h", "-N", "-O", "NodeList:20,StateLong:30,GresUsed:80"],
                       capture_output=True, text=True, check=False)
    return r.stdout.splitlines() if r.returncode == 0 else None


def stranded(lines):
    """Free GPUs on partly allocated trays that are not drained."""
    n = 0
    for line in set(lines):
        parts = line.split()
        if len(parts) < 3 or "drain" in parts[1]:
            continue
        used = re.match(r"gpu:(?:[^:(]*:)?(\d+)\(", parts[2])
        busy = int(used.group(1)) if used else 0
        if 0 < busy < TRAY_GPUS:
            n += TRAY_GPUS - busy
    return n


def sample(args):
    t0 = time.time()
    with open(args.out, "a") as out:
        while not os.path.exists(args.stop):
            ids = open(args.jobs_file).read().split() if os.path.exists(args.jobs_file) else []
            r = subprocess.run(["squeue", "-h", "-t", "PD", "-o", "%i"], capture_output=True,
                               text=True, check=False)
            pending = len(set(r.stdout.split()) & set(ids)) if r.returncode == 0 else -1
            lines = node_lines()
            if lines is not None and pending >= 0:
                out.write(f"{time.time() - t0:.1f} {pending} {stranded(lines)}\n")
                out.flush()
            time.sleep(args.interval)


def slurm_time(text):
    if not text or text in ("Unknown", "None", "N/A"):
        return None
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S").timestamp()


def field(line, key):
    m = re.search(rf"(?:^| ){key}=(\S*)", line)
    return m.group(1) if m else None


def job(args):
    text = sys.stdin.read()
    line = next((ln for ln in text.splitlines() if re.search(rf"\bJobId={args.id}\b", ln)), "")
    rec = {"id": int(args.id), "state": (field(line, "JobState") or "?")}
    for key in ("SubmitTime", "StartTime", "EndTime"):
        rec[key.lower()] = slurm_time(field(line, key))
    if rec["state"] == "PENDING":
        rec["starttime"] = rec["endtime"] = None
    own = os.path.join(args.out, "jobs", args.id)
    rec["ran"] = {}
    if os.path.exists(own):
        text = open(own).read().strip()
        rec["ran"] = placement_log.parse_fields("v=1 " + text) if text else {}
        rec["ran"].pop("v", None)
    comment = re.search(r"SystemComment=(.*?)(?= [A-Z][A-Za-z]*=|$)", line)
    rec["placement"] = None
    if comment and "nvlplace: " in comment.group(1):
        r = placement_log.parse("nvlplace: " + comment.group(1).split("nvlplace: ", 1)[1])
        rec["placement"] = r.fields if r else None
    words = rec["ran"].get("words", "").split()
    tp = int(rec["ran"].get("tp", "1"))
    rec["tp_groups"] = rec["tp_split"] = 0
    if words and tp > 1:
        r = subprocess.run([args.cli, "check", "tp-groups", "--topology", args.topology,
                            "--tp", str(tp), *words], capture_output=True, text=True, check=False)
        m = re.search(r"(\d+) TP groups? of \d+ GPUs, (\d+) spans?", r.stdout)
        if m:
            rec["tp_groups"], rec["tp_split"] = int(m.group(1)), int(m.group(2))
    print(json.dumps(rec))


def mean(xs):
    return sum(xs) / len(xs) if xs else None


def summary(run_dir):
    jobs = [json.loads(ln) for ln in open(os.path.join(run_dir, "jobs.jsonl")) if ln.strip()]
    meta = json.load(open(os.path.join(run_dir, "meta.json")))

    def queued(j):  # waiting counts from the partition's going up (time 0)
        return max(j["submittime"], meta["t0"])
    started = [j for j in jobs if j["starttime"] and j["starttime"] <= meta["window_end"]]
    done = [j for j in jobs if j["state"] == "COMPLETED" and j["endtime"]]
    tp_jobs = [j for j in done if int(j["ran"].get("tp", "1")) > 1]
    plain = [j for j in done if j["ran"].get("kind") == "plain"]
    groups = sum(j["tp_groups"] for j in tp_jobs)
    split = sum(j["tp_split"] for j in tp_jobs)
    samples = []
    path = os.path.join(run_dir, "samples")
    if os.path.exists(path):
        samples = [tuple(float(x) for x in ln.split()) for ln in open(path) if ln.strip()]
    waiting = [s[2] for s in samples if s[1] > 0]
    sdiag = {}
    path = os.path.join(run_dir, "sdiag")
    if os.path.exists(path):
        for ln in open(path):
            k, _, v = ln.partition("=")
            sdiag[k.strip()] = float(v) if v.strip() else None
    placed = [j for j in done if j["placement"]]
    # gpus is in rank order, slurm_gpus in Slurm's node order: the same GPUs, compared as sets.
    as_decided = [j for j in placed if j["placement"].get("event") == "placed"
                  and sorted(j["placement"].get("gpus", "").split())
                  == sorted(j["placement"].get("slurm_gpus", "-").split())]
    return {
        "jobs": len(jobs),
        "started_in_window": len(started),
        "completed": len(done),
        "window_s": meta["window_s"],
        "mean_wait_s": mean([j["starttime"] - queued(j) for j in started]),
        "mean_completion_s": mean([j["endtime"] - queued(j) for j in done]),
        "mean_run_s": mean([j["endtime"] - j["starttime"] for j in done]),
        "mean_stretch": mean([float(j["ran"]["stretch"]) for j in done if "stretch" in j["ran"]]),
        "makespan_s": (max(j["endtime"] for j in done) - meta["t0"]) if done else None,
        "tp_groups": groups,
        "tp_groups_in_rack": groups - split,
        "plain_jobs": len(plain),
        "plain_in_rack": sum(1 for j in plain if j["ran"].get("nvlink_domains") == "1"),
        "mean_racks_per_job": mean([int(j["ran"]["nvlink_domains"]) for j in done
                                    if "nvlink_domains" in j["ran"]]),
        "stranded_gpus_mean": mean(waiting),
        "stranded_samples": len(waiting),
        "main_cycles": sdiag.get("main_cycles"),
        "main_mean_cycle_us": sdiag.get("main_mean_us"),
        "bf_cycles": sdiag.get("bf_cycles"),
        "bf_mean_cycle_us": sdiag.get("bf_mean_us"),
        "nvlplace_placed": len(placed),
        "nvlplace_as_decided": len(as_decided),
        "nvlplace_no_line": len(done) - len(placed),
    }


def fmt(v, digits=1):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def report(args):
    out = {}
    for run_dir in sorted(glob.glob(os.path.join(args.out, "*", "*", "meta.json"))):
        run_dir = os.path.dirname(run_dir)
        pat, setup = run_dir.split(os.sep)[-2:]
        out.setdefault(pat, {})[setup] = summary(run_dir)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2, sort_keys=True)
    for pat in ("whole", "partial", "drained"):
        if pat not in out:
            continue
        cols = [s for s in SETUPS if s in out[pat]]
        s = {c: out[pat][c] for c in cols}
        a = s.get("block")
        print(f"\n### Pattern {pat}\n")
        print("| | " + " | ".join({"block": "(a) cons_tres + block, --segment",
                                    "tree": "(b) cons_tres + tree",
                                    "nvlplace": "(c) nvlplace, 2 spares per rack kept",
                                    "nvlplace-spares": "(c') nvlplace, spares usable",
                                    "nvlplace-gpus": "(d) nvlplace + tree, --gpus --nvl-tp"}[c]
                                   for c in cols) + " |")
        print("|---" * (len(cols) + 1) + "|")

        def row(name, fn):
            print(f"| {name} | " + " | ".join(fn(s[c]) for c in cols) + " |")

        row("jobs started in window", lambda x: f"{x['started_in_window']} of {x['jobs']}")
        row("jobs completed", lambda x: f"{x['completed']}")
        row("mean wait (s)", lambda x: fmt(x["mean_wait_s"]))

        def completion(x):
            text = fmt(x["mean_completion_s"])
            if a and a is not x and a["mean_completion_s"] and x["mean_completion_s"]:
                text += f" ({100 * (x['mean_completion_s'] / a['mean_completion_s'] - 1):+.0f}% vs a)"
            return text
        row("mean completion, wait + run (s)", completion)
        row("mean run (s) / mean stretch",
            lambda x: f"{fmt(x['mean_run_s'])} / {fmt(x['mean_stretch'], 2)}")
        row("TP groups inside one rack", lambda x: f"{x['tp_groups_in_rack']} of {x['tp_groups']}")
        row("plain jobs inside one rack", lambda x: f"{x['plain_in_rack']} of {x['plain_jobs']}")
        row("racks touched per job", lambda x: fmt(x["mean_racks_per_job"], 2))
        row("GPUs left unusable (mean, while jobs wait)",
            lambda x: f"{fmt(x['stranded_gpus_mean'])} ({x['stranded_samples']} samples)")
        row("sdiag main: cycles / mean (us)",
            lambda x: f"{fmt(x['main_cycles'], 0)} / {fmt(x['main_mean_cycle_us'], 0)}")
        row("sdiag backfill: cycles / mean (us)",
            lambda x: f"{fmt(x['bf_cycles'], 0)} / {fmt(x['bf_mean_cycle_us'], 0)}")
        row("placed as decided by nvlplace",
            lambda x: f"{x['nvlplace_as_decided']} of {x['completed']}"
            f" ({x['nvlplace_no_line']} without a placement line)" if x["nvlplace_placed"]
            else "-")


def main():
    p = argparse.ArgumentParser(prog="gb200_report.py", usage=__doc__.split("\n\n")[1][len("Usage: "):],
                                description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    q = sub.add_parser("pattern")
    q.add_argument("--trays", type=int, required=True)
    q.add_argument("--pattern", choices=sorted(FREE_TRAYS), required=True)
    q.add_argument("--seed", default="1")
    q = sub.add_parser("mix")
    q.add_argument("--jobs", type=int, required=True)
    q.add_argument("--seed", default="1")
    q = sub.add_parser("sample")
    q.add_argument("--out", required=True)
    q.add_argument("--stop", required=True)
    q.add_argument("--jobs-file", required=True)
    q.add_argument("--interval", type=float, default=5)
    q = sub.add_parser("job")
    q.add_argument("--cli", required=True)
    q.add_argument("--topology", required=True)
    q.add_argument("--out", required=True)
    q.add_argument("--id", required=True)
    q = sub.add_parser("report")
    q.add_argument("--out", required=True)
    q.add_argument("--json")
    args = p.parse_args()
    {"pattern": pattern, "mix": mix, "sample": sample, "job": job, "report": report}[args.cmd](args)


if __name__ == "__main__":
    main()
