#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Writes a synthetic native trace of multi-node training jobs (deterministic for a seed).

Usage: gen_synthetic_trace.py JOBS [SEED [CLUSTER_GPUS]] > trace.csv. JOBS is 1 to 1,000,000
(the trace then spans about 1.8e8 s, within replay's 1e9 s), SEED 0 to 2^64 - 1, CLUSTER_GPUS
1,024 to 16,777,216 (default 16,384). Sizes follow a heavy-tailed mix: many 8-64 GPU jobs, some
128-1024 GPU jobs, TP in {4, 8}, PP in {1, 2, 4}; arrivals are Poisson with a mean gap of
180 s x 16,384 / CLUSTER_GPUS (180 s: about 90% of a 16,384-GPU cluster); run times are
log-uniform from 10 minutes to 2 days. Bad arguments: a message on stderr and exit 2;
-h or --help: this text on stdout.
"""
import math
import random
import sys

MAX_JOBS = 1_000_000
MAX_SEED = 2**64 - 1


USAGE = "usage: gen_synthetic_trace.py JOBS [SEED [CLUSTER_GPUS]] > trace.csv"


def fail(message):
    """Prints the message and the usage on stderr; exit 2 (bad input)."""
    print(f"gen_synthetic_trace.py: {message}\n{USAGE}", file=sys.stderr)
    sys.exit(2)


def whole_number(text, name, lo, hi):
    """The decimal whole number `text`, from lo to hi; else fail()."""
    if not (text.isascii() and text.isdigit() and len(text) <= 20 and lo <= int(text) <= hi):
        fail(f"{name} {text!r} is not a whole number from {lo} to {hi}")
    return int(text)


def main():
    if any(a in ("-h", "--help") for a in sys.argv[1:]):
        print(f"{USAGE}\n\n{__doc__}", end="")
        return
    for a in sys.argv[1:]:
        if a.startswith("-"):
            fail(f"unknown option {a!r}")
    if not 2 <= len(sys.argv) <= 4:
        fail("give JOBS, and optionally SEED and CLUSTER_GPUS")
    jobs = whole_number(sys.argv[1], "JOBS", 1, MAX_JOBS)
    seed = whole_number(sys.argv[2], "SEED", 0, MAX_SEED) if len(sys.argv) > 2 else 7
    cluster = whole_number(sys.argv[3], "CLUSTER_GPUS", 1024, 2**24) if len(sys.argv) > 3 else 16384
    gap = 180.0 * 16384 / cluster
    rng = random.Random(seed)
    sizes = [8, 16, 32, 64, 128, 256, 512, 1024]
    weights = [30, 20, 15, 12, 10, 7, 4, 2]
    print("id,submit,duration,gpus,tp,pp,dp,nvl")
    t = 0.0
    for i in range(jobs):
        t += rng.expovariate(1 / gap)
        gpus = rng.choices(sizes, weights)[0]
        tp = rng.choice([4, 8])
        pp = rng.choice([1, 1, 2, 4]) if gpus >= 64 else 1
        dp = gpus // (tp * pp)
        duration = math.exp(rng.uniform(math.log(600), math.log(172800)))
        nvl = rng.choices(["strict", "prefer", "off"], [8, 1, 1])[0]
        print(f"s{i},{t:.1f},{duration:.0f},{gpus},{tp},{pp},{dp},{nvl}")


if __name__ == "__main__":
    main()
