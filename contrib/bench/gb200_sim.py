#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""gb200.sh's nvlplace-gpus setup without Slurm: the same load patterns and job mix placed by
`nvlplace place` in submission order, each job running base time x the cost model's stretch
for the GPUs it got (`nvlplace check comm`), as the benchmark's job scripts do. A quick
pre-check of a policy change (a minute a pattern on 288 trays) before the benchmark's runs
on the local cluster; it does not model Slurm's scheduler (no backfill reservations, no
scheduling delays), so it compares policies and setups with each other only.

Usage: gb200_sim.py [--cli CLI] [--topology FILE] [--trays N] [--patterns P,...]
                    [--setups S,...] [--policy FILE] [--jobs N] [--seed S]
                    [--base-seconds S] [--fifo] [-v]

--setups   nvlplace (the default): placed by `nvlplace place` under --policy;
           block: a model of stock cons_tres + topology/block with the benchmark's
           --segment (TP=8 jobs: segments of 2 whole trays, TP=16: of 4; each segment in the
           rack with the fewest whole free trays that holds it; a plain --gpus=8 job inside
           the rack with the fewest free GPUs that holds it, else it waits), run time from
           the cost model for Slurm's node order, as the benchmark's job scripts have it;
           ideal: any free GPUs of trays not drained, every job at its best speed (stretch
           1): no NVLink rule and no communication cost, a reference rather than a bound
           (a placement that cannot start a big job lets later small ones start, which can
           lower the mean completion: see the README)

--policy   the policy the jobs are placed under; by default the benchmark's: the topo
           preset with use_spares: true and max_comm_ratio: 3
--fifo     a job that does not fit holds back every job after it (default: later jobs that
           fit start, as backfill lets them when they delay no one)
--trays    144 (configs/gb200-nvl72-su.yaml) or 288 (configs/gb200-nvl72-2su.yaml, the default);
           --topology another cluster of 4-GPU trays named gb001, gb002, ... 18 to a rack

Prints one line per pattern: jobs started, mean completion (wait + run), mean wait,
makespan and mean stretch, all in seconds of simulated time, over the jobs that started (a
job the policy never places, e.g. one over max_comm_ratio anywhere, is counted apart).
"""

import argparse
import heapq
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gb200_report  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TOPOLOGY = {144: "configs/gb200-nvl72-su.yaml", 288: "configs/gb200-nvl72-2su.yaml"}


def run(*args):
    r = subprocess.run(args, capture_output=True, text=True, check=False)
    return r.returncode, r.stdout, r.stderr


class Sim:
    def __init__(self, args, setup, policy, work):
        self.a = args
        self.setup = setup
        self.policy = policy
        self.trays = [gb200_report.tray(i) for i in range(args.trays)]
        self.busy_file = os.path.join(work, "busy")
        self.busy = {}  # tray -> set of busy GPU indexes
        self.drained = []

    def expand(self, hosts):
        rc, out, err = run(self.a.cli, "check", "hostlist", "--expand", hosts)
        if rc != 0:
            raise SystemExit(f"gb200_sim.py: {self.a.cli} check hostlist {hosts}: {err.strip()}")
        return out.split()

    def load(self, pattern):
        for action in gb200_report.pattern_actions(self.a.trays, pattern, self.a.seed):
            if action[0] == "drain":
                self.drained.append(action[1])
                continue
            for tray in self.expand(action[1]):
                self.busy.setdefault(tray, set()).update(range(action[2]))

    def place(self, kind, tp, nodes, gpus):
        if self.setup == "block":
            return self.place_block(kind, tp, nodes, gpus)
        if self.setup == "ideal":
            free = [(t, g) for t in self.trays if t not in self.drained
                    for g in range(gb200_report.TRAY_GPUS) if g not in self.busy.get(t, ())]
            return free[:gpus] if len(free) >= gpus else None
        with open(self.busy_file, "w") as f:
            for tray, held in sorted(self.busy.items()):
                if held:
                    f.write(f"{tray}:{','.join(map(str, sorted(held)))}\n")
        cmd = [self.a.cli, "place", "--topology", self.a.topology, "--busy", self.busy_file,
               "--gpus", str(gpus), "--policy", self.policy, "--format", "json"]
        if self.drained:
            cmd += ["--exclude", ",".join(self.drained)]
        if kind != "plain":
            cmd += ["--tp", str(tp), "--nvl", "strict"]
        rc, out, err = run(*cmd)
        if rc not in (0, 1):
            raise SystemExit(f"gb200_sim.py: {' '.join(cmd)}: exit {rc}: {err.strip()}")
        try:
            decision = json.loads(out)
        except ValueError:
            raise SystemExit(f"gb200_sim.py: {' '.join(cmd)}: no JSON on stdout: {err.strip()}")
        if not decision["placed"]:
            return None
        return [(r["node"], r["gpu"]) for r in decision["ranks"]]

    def rack_trays(self, rack):
        return [t for t in self.trays[rack * gb200_report.RACK_TRAYS:
                                      (rack + 1) * gb200_report.RACK_TRAYS]
                if t not in self.drained]

    def place_block(self, kind, tp, nodes, gpus):
        """The block model (see --setups): best fit by rack, trays in name order."""
        racks = range(len(self.trays) // gb200_report.RACK_TRAYS)
        if kind == "plain":
            def free_gpus(rack):
                return [(t, g) for t in self.rack_trays(rack)
                        for g in range(gb200_report.TRAY_GPUS) if g not in self.busy.get(t, ())]
            free = {r: free_gpus(r) for r in racks}
            fits = [(len(free[r]), r) for r in racks if len(free[r]) >= gpus]
            return sorted(free[min(fits)[1]])[:gpus] if fits else None
        segment = 2 if tp == 8 else 4
        whole = {r: [t for t in self.rack_trays(r) if not self.busy.get(t)] for r in racks}
        chosen = []
        for _ in range(nodes // segment):
            fits = [(len(whole[r]), r) for r in racks if len(whole[r]) >= segment]
            if not fits:
                return None
            r = min(fits)[1]
            chosen += whole[r][:segment]
            whole[r] = whole[r][segment:]
        return [(t, g) for t in sorted(chosen) for g in range(gb200_report.TRAY_GPUS)]

    def room(self):
        """Free GPUs per rack, and what of them whole groups of 8 inside one rack can take (every
        job of the mix asks for groups of 8 or 16 that stay inside a rack)."""
        free = [sum(gb200_report.TRAY_GPUS - len(self.busy.get(t, ())) for t in self.rack_trays(r))
                for r in range(len(self.trays) // gb200_report.RACK_TRAYS)]
        return (f"free GPUs per rack {' '.join(map(str, free))}: {sum(free)} free, "
                f"{sum(f // 8 * 8 for f in free)} in whole groups of 8 inside racks")

    def stretch(self, ranks, tp):
        words = []
        for tray, gpu in ranks:
            if words and words[-1][0] == tray:
                words[-1][1].append(gpu)
            else:
                words.append((tray, [gpu]))
        rc, out, err = run(self.a.cli, "check", "comm", "--topology", self.a.topology,
                           "--tp", str(tp), *(f"{t}:{','.join(map(str, g))}" for t, g in words))
        if rc != 0 or "stretch=" not in out:
            raise SystemExit(f"gb200_sim.py: {self.a.cli} check comm: {err.strip() or out}")
        return float(out.split("stretch=")[1].split()[0])

    def simulate(self, pattern):
        name = pattern if self.setup == "nvlplace" else f"{pattern}, {self.setup}"
        if self.a.v:
            print(f"{name}, job by job:")
        self.load(pattern)
        pending = list(enumerate(gb200_report.mix_jobs(self.a.jobs, self.a.seed)))
        running = []  # (end, job index, ranks)
        started = {}  # job index -> (start, end, stretch)
        now = 0.0
        while pending:
            if self.a.v:
                print(f"  t={now:.1f} {self.room()}")
            waiting = []
            taken = 0
            for i, job in pending:
                kind, tp, nodes, gpus = job
                ranks = None if (self.a.fifo and waiting) else self.place(kind, tp, nodes, gpus)
                if ranks is None:
                    waiting.append((i, job))
                    continue
                for tray, gpu in ranks:
                    self.busy.setdefault(tray, set()).add(gpu)
                taken += len(ranks)
                s = 1.0 if self.setup == "ideal" else self.stretch(ranks, tp if kind != "plain" else 1)
                started[i] = (now, now + self.a.base_seconds * s, s)
                heapq.heappush(running, (started[i][1], i, ranks))
                if self.a.v:
                    trays = sorted({t for t, _ in ranks})
                    racks = sorted({(int(t[2:]) - 1) // gb200_report.RACK_TRAYS for t in trays})
                    print(f"  t={now:.1f} job {i} {kind} starts, stretch {s:.2f}, "
                          f"{len(trays)} trays in racks {','.join(map(str, racks))}")
            if self.a.v:
                print(f"  t={now:.1f} {taken} GPUs taken, jobs waiting: {len(waiting)}")
            pending = waiting
            if not running:
                break  # what waits can never start: the pattern leaves it no room
            now = running[0][0]
            while running and running[0][0] == now:
                for tray, gpu in heapq.heappop(running)[2]:
                    self.busy[tray].discard(gpu)
        ends = [e for _, e, _ in started.values()]
        n = len(started)
        if n == 0:
            return f"{name}: started 0 of {self.a.jobs}"
        return (f"{name}: started {n} of {self.a.jobs}, "
                f"mean completion {sum(ends) / n:.1f} s, "
                f"mean wait {sum(s for s, _, _ in started.values()) / n:.1f} s, "
                f"makespan {max(ends):.1f} s, "
                f"mean stretch {sum(x for _, _, x in started.values()) / n:.3f}"
                + (f"; {self.a.jobs - n} never started (the means leave them out)"
                   if n < self.a.jobs else ""))


def main():
    doc = __doc__.split("\n\n")
    p = argparse.ArgumentParser(prog="gb200_sim.py", usage=doc[1][len("Usage: "):],
                                description=doc[0], epilog="\n\n".join(doc[2:]),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cli", default=os.path.join(ROOT, "build", "contrib", "nvlplace"))
    p.add_argument("--topology")
    p.add_argument("--trays", type=int, choices=sorted(TOPOLOGY), default=288)
    p.add_argument("--patterns", default="whole,partial,drained")
    p.add_argument("--setups", default="nvlplace")
    p.add_argument("--policy")
    p.add_argument("--jobs", type=int, default=40)
    p.add_argument("--seed", default="1")
    p.add_argument("--base-seconds", type=float, default=20)
    p.add_argument("--fifo", action="store_true")
    p.add_argument("-v", action="store_true")
    a = p.parse_args()
    patterns = a.patterns.split(",")
    for name in patterns:
        if name not in gb200_report.FREE_TRAYS:
            p.error(f"--patterns: {name} is none of {', '.join(sorted(gb200_report.FREE_TRAYS))}")
    setups = a.setups.split(",")
    for name in setups:
        if name not in ("nvlplace", "block", "ideal"):
            p.error(f"--setups: {name} is none of nvlplace, block, ideal")
    if a.jobs < 1:
        p.error("--jobs must be at least 1")
    if not a.base_seconds > 0:
        p.error("--base-seconds must be more than 0")
    a.topology = a.topology or os.path.join(ROOT, TOPOLOGY[a.trays])
    if not os.access(a.cli, os.X_OK):
        p.error(f"--cli {a.cli} is not an executable (build it: cmake --build build)")
    with tempfile.TemporaryDirectory(prefix="gb200-sim.") as work:
        policy = a.policy
        if policy is None:
            policy = os.path.join(work, "policy.yaml")
            with open(os.path.join(ROOT, "configs", "policies", "topo.yaml")) as f:
                text = f.read()
            with open(policy, "w") as f:
                f.write(text + "use_spares: true\nmax_comm_ratio: 3\n")
        for name in patterns:
            for setup in setups:
                print(Sim(a, setup, policy, work).simulate(name), flush=True)


if __name__ == "__main__":
    main()
