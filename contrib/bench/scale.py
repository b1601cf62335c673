#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Frontier-scale figures (issue 12), one command: generated fabrics of 131,072 to 1,048,576
GPUs (contrib/tools/gen_fabric.py; written under the build tree, never committed), and for
each: reading and building the model (scale_bench; cold: once on memory new to the process,
as a CLI run or slurmctld's start or reconfigure does, and warm: repeated on memory the
allocator holds), `nvlplace validate` (wall time, minor page faults and peak memory), the peak memory of one `nvlplace place` (the model, the engine and its index), and
the whole `nvlplace place` process with a busy list in Slurm hostlist form (time and peak
memory, growth from the smallest fabric: at most linear; the fabrics run in turn, best of 5;
also with glibc's heap on transparent huge pages, for comparison), and
the decision time of the topo policy beside firstfit measured in the same run, at 50% and 85%
occupancy, for TP=8 jobs of 64 and 1,024 GPUs, with the index kept with the state (a replay,
and the plugin when Slurm offers every node) and built per decision (the plugin when Slurm
offers fewer nodes than the job may use), and at 131,072 GPUs the whole call slurmctld makes
(`nvl_decide` through the plugin's facade, `facade_bench --cluster`: the nodes' free lists
read into its kept state, the decision, the node set taken) under topo and firstfit. Prints
Markdown tables; exits 1 when a target is missed:
parse + build (cold) under 100 ms at 131,072 GPUs, peak under 1 GiB at 1,048,576, decision median under
1 ms at 131,072 and 10 ms at 1,048,576 GPUs (kept index).

Usage: contrib/bench/scale.py [--kinds h100-rail,gb200-nvl72] [--gpus 131072,262144,1048576]
                              [--repetitions 5]
"""
import argparse
import json
import mmap
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("NVLPLACE_BUILD_DIR", os.path.join(ROOT, "build"))
WHOLE_ROUNDS = 5  # whole-process `nvlplace place` runs per fabric, the fabrics in turn


def run_timed(cmd, env=None):
    """(wall seconds, peak RSS in MiB, minor page faults) of a command, which must succeed.
    The wall time is the clock around /usr/bin/time and the command (its %e has 10 ms steps:
    a 30 ms run read as 0.03 s put 15% of noise into each growth ratio on a fast machine)."""
    with tempfile.NamedTemporaryFile(mode="r") as t:
        started = time.perf_counter()
        subprocess.run(["/usr/bin/time", "-f", "%M %R", "-o", t.name] + cmd, check=True,
                       stdout=subprocess.DEVNULL, env=env)
        secs = time.perf_counter() - started
        kb, faults = t.read().split()[-2:]
    return secs, int(kb) / 1024, int(faults)


def fault_us():
    """Microseconds this machine takes to give a process one fresh page of memory (a minor
    page fault), median of 5 rounds of 16 MiB: the part of a cold load that is the machine's
    (about 0.1-0.5 us on bare metal; far more in some virtual machines)."""
    rounds = []
    for _ in range(5):
        m = mmap.mmap(-1, 16 << 20)
        started = time.perf_counter()
        for off in range(0, len(m), mmap.PAGESIZE):
            m[off] = 1
        rounds.append((time.perf_counter() - started) * 1e6 / (len(m) // mmap.PAGESIZE))
        m.close()
    return sorted(rounds)[len(rounds) // 2]


def busy_file(config, path):
    """A busy list in Slurm hostlist form for the generated fabric `config`: half of its nodes
    whole (runs of 16), and every 7th of the others with GPUs 0-1; the nodes are read from
    its one `names: PREFIX[FIRST-LAST]` line."""
    with open(config, encoding="utf-8") as f:
        m = re.search(r"names: (\S+)\[(\d+)-(\d+)\]", f.read())
    prefix, first, last = m.group(1), int(m.group(2)), int(m.group(3))
    width = len(m.group(2))
    whole, partial = [], []
    for start in range(first, last + 1, 32):
        end = min(start + 15, last)
        whole.append(f"{start:0{width}d}-{end:0{width}d}")
        partial += [f"{n:0{width}d}" for n in range(end + 1, min(start + 32, last + 1), 7)]
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"{prefix}[{','.join(whole)}]\n")
        f.write(f"{prefix}[{','.join(partial)}]:0-1\n")


def bench(config, repetitions, *extra, min_time=0.05):
    """scale_bench's medians: {name: microseconds} and {name: counters}. With the default
    min_time a load runs about once per repetition, on memory new to the process (cold); with
    0.5 s it runs several times and reuses what the allocator got before (warm)."""
    out = subprocess.run(
        [os.path.join(BUILD, "contrib", "scale_bench"), f"--config={config}",
         "--benchmark_format=json", f"--benchmark_repetitions={repetitions}",
         "--benchmark_report_aggregates_only=true", f"--benchmark_min_time={min_time}",
         *extra],
        check=True, capture_output=True, text=True).stdout
    times, counters = {}, {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        name = b["run_name"]
        scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[b["time_unit"]]
        # CPU time: on a machine shared with other work (this one has two cores) the wall
        # time of a single-threaded run includes the time it waited for a core; on a quiet
        # machine the two agree.
        times[name] = b["cpu_time"] * scale
        counters[name] = b
    return times, counters


def facade(config, policy, busy, repetitions):
    """facade_bench --cluster's medians in microseconds: {case: us} (cluster/tp8x64, ...)."""
    out = subprocess.run(
        [os.path.join(BUILD, "contrib", "facade_bench"), f"--cluster={config}",
         f"--policy={policy}", f"--busy={busy}", "--benchmark_filter=^cluster/",
         "--benchmark_format=json", f"--benchmark_repetitions={repetitions}",
         "--benchmark_report_aggregates_only=true", "--benchmark_min_time=0.2"],
        check=True, capture_output=True, text=True).stdout
    times = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") == "median":
            scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[b["time_unit"]]
            times[b["run_name"]] = b["cpu_time"] * scale
    return times


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--kinds", default="h100-rail,gb200-nvl72")
    p.add_argument("--gpus", default="131072,262144,1048576")
    p.add_argument("--repetitions", type=int, default=5)
    a = p.parse_args()
    if a.repetitions < 2:
        # Google Benchmark reports medians only over repetitions: with one there is none.
        p.error("--repetitions must be 2 or more: the figures are medians of the repetitions")
    subprocess.run([os.path.join(ROOT, "contrib", "build.sh"), "--target", "nvlplace",
                    "scale_bench", "facade_bench"], check=True, stdout=subprocess.DEVNULL)
    work = os.path.join(BUILD, "scale-bench")
    os.makedirs(work, exist_ok=True)
    nvl = os.path.join(BUILD, "contrib", "nvlplace")
    missed = []
    load_rows, place_rows, call_rows = [], [], []
    growth = {}  # kind: {GPUs: (whole-process place seconds, peak MB, page faults)}, best
    page_us = fault_us()
    kinds, sizes = a.kinds.split(","), [int(g) for g in a.gpus.split(",")]
    for kind in kinds:
        for gpus in sizes:
            config = os.path.join(work, f"{kind}-{gpus}.yaml")
            subprocess.run([sys.executable, os.path.join(ROOT, "contrib", "tools", "gen_fabric.py"),
                            kind, str(gpus), "--out", config], check=True)
            size_mb = os.path.getsize(config) / 2**20
            validate_s, validate_mb, faults = run_timed([nvl, "validate", config])
            _, place_mb, _ = run_timed([nvl, "place", "--topology", config, "--gpus", "64",
                                        "--tp", "8"])
            busy_file(config, os.path.join(work, f"{kind}-{gpus}.busy"))
            started = time.time()
            times, counters = bench(config, a.repetitions)
            warm, _ = bench(config, 3, "--benchmark_filter=load/(parse|build)", min_time=0.5)
            parse, build = times["load/parse"] / 1e3, times["load/build"] / 1e3
            warm_ms = (warm["load/parse"] + warm["load/build"]) / 1e3
            engine = times["load/engine"] / 1e3
            load_rows.append(f"| {kind} | {gpus:,} | {size_mb:.1f} MB | {parse:.0f} ms | "
                             f"{build:.0f} ms | {warm_ms:.0f} ms | {engine:.1f} ms | "
                             f"{validate_s:.2f} s | {faults:,} | {validate_mb:.0f} MB | "
                             f"{place_mb:.0f} MB |")
            if gpus <= 131072 and parse + build >= 100:
                missed.append(f"{kind} {gpus}: parse + build {parse + build:.0f} ms >= 100 ms "
                              f"(warm {warm_ms:.0f} ms; validate takes {faults:,} fresh pages "
                              f"at {page_us:.1f} us each here)")
            if gpus >= 1048576 and place_mb >= 1024:
                missed.append(f"{kind} {gpus}: peak {place_mb:.0f} MB >= 1 GiB")
            limit_us = 1000 if gpus <= 131072 else 10000
            for busy in (50, 85):
                for job in (64, 1024):
                    cells = []
                    for kept in (1, 0):
                        args = f"busy%:{busy}/gpus:{job}/kept:{kept}"
                        topo, ff = times[f"place/topo/{args}"], times[f"place/firstfit/{args}"]
                        cand = counters[f"place/topo/{args}"].get("candidates", 0)
                        cells += [f"{topo:,.0f} us", f"{ff:,.0f} us", f"{topo / ff:.1f}",
                                  f"{cand:.0f}"]
                        if kept and topo >= limit_us:
                            missed.append(f"{kind} {gpus} {args}: topo {topo:.0f} us >= "
                                          f"{limit_us} us")
                    place_rows.append(f"| {kind} | {gpus:,} | {busy}% | {job} | " +
                                      " | ".join(cells) + " |")
            if gpus == 131072:
                for busy in (50, 85):
                    calls = {p: facade(config, p, busy, a.repetitions) for p in ("topo", "firstfit")}
                    for case in ("tp8x64", "tp8x1024", "plain4", "will-run-tp8x64"):
                        topo, ff = calls["topo"][f"cluster/{case}"], calls["firstfit"][f"cluster/{case}"]
                        call_rows.append(f"| {kind} | {gpus:,} | {busy}% | {case} | {topo:,.0f} us | "
                                         f"{ff:,.0f} us | {topo / ff:.2f} |")
                        if case.startswith("tp8") and topo > 2 * ff:
                            missed.append(f"{kind} {gpus} busy {busy}% {case}: the plugin's call "
                                          f"under topo {topo:.0f} us > 2 x firstfit's {ff:.0f} us")
            print(f"scale: {kind} {gpus:,} GPUs done in {time.time() - started:.0f} s",
                  file=sys.stderr)
    # The whole process as a user or a script runs it: load, a busy list in hostlist form, one
    # decision; best of WHOLE_ROUNDS, the fabrics taken in turn within each round, so that a
    # machine whose speed drifts over minutes (a shared VM: 1.7x within an hour here) moves
    # every size alike and leaves the growth ratios alone.
    # Each also with glibc's heap on transparent huge pages (GLIBC_TUNABLES, read when a
    # process starts; the kernel's THP mode `madvise`, Debian's default): at 1M GPUs most of
    # a load is first touches of fresh 4 KiB pages, which this shows apart from the work.
    huge_env = dict(os.environ, GLIBC_TUNABLES="glibc.malloc.hugetlb=1")
    huge = {}  # kind: {GPUs: (seconds, peak MB, page faults)} with huge pages, best of the rounds
    for _ in range(WHOLE_ROUNDS):
        for kind in kinds:
            for gpus in sizes:
                base = os.path.join(work, f"{kind}-{gpus}")
                cmd = [nvl, "place", "--topology", base + ".yaml", "--busy", base + ".busy",
                       "--gpus", "64", "--tp", "8"]
                for table, env in ((growth, None), (huge, huge_env)):
                    secs, mb, faults = run_timed(cmd, env)
                    best = table.setdefault(kind, {}).get(gpus, (secs, mb, faults))
                    table[kind][gpus] = (min(best[0], secs), min(best[1], mb),
                                         min(best[2], faults))
    print(f"A fresh page of memory costs {page_us:.2f} us on this machine (minor page fault).")
    print()
    print("| fabric | GPUs | YAML | parse | build | parse + build, warm | engine set-up | "
          "validate | validate page faults | validate peak | place peak |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(load_rows))
    print()
    print("| fabric | GPUs | busy | job GPUs (TP=8) | topo, index kept | firstfit | ratio | "
          "candidates | topo, index per decision | firstfit | ratio | candidates |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(place_rows))
    print()
    if call_rows:
        print("The whole call slurmctld makes at 131,072 GPUs (`nvl_decide` through the facade, "
              "its kept state brought to the nodes' free lists, the first node set taken; "
              "facade_bench --cluster, medians):")
        print()
        print("| fabric | GPUs | busy | job | topo | firstfit | ratio |")
        print("|---|---|---|---|---|---|---|")
        print("\n".join(call_rows))
        print()
    print("Whole-process `nvlplace place --busy` (64 GPUs, TP=8; half the nodes busy, in "
          f"hostlist form; best of {WHOLE_ROUNDS}, the sizes in turn), growth against the "
          "smallest fabric:")
    print()
    print("| fabric | GPUs | wall | peak | page faults | GPUs x | wall x | peak x | "
          "huge pages: wall | page faults | wall x |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for kind, by_gpus in growth.items():
        rows = [(g, t, m, f) for g, (t, m, f) in sorted(by_gpus.items())]
        g0, t0, m0, _ = rows[0]
        h0 = huge[kind][g0][0]
        for g, t, m, f in rows:
            h, _, hf = huge[kind][g]
            print(f"| {kind} | {g:,} | {t * 1000:.1f} ms | {m:.0f} MB | {f:,} | {g / g0:.1f} | "
                  f"{t / t0:.2f} | {m / m0:.1f} | {h * 1000:.1f} ms | {hf:,} | {h / h0:.2f} |")
            # Linear at most, with 10% for the noise of a shared machine.
            if g > g0 and (t / t0 > 1.1 * g / g0 or m / m0 > 1.1 * g / g0):
                missed.append(f"{kind} {g}: whole-process place grows x{t / t0:.2f} in time and "
                              f"x{m / m0:.1f} in memory for x{g / g0:.1f} the GPUs")
    for m in missed:
        print(f"MISSED: {m}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
