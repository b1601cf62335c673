#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Writes a synthetic native trace of multi-node training jobs (deterministic for a seed).

Usage: gen_synthetic_trace.py JOBS [SEED] > trace.csv. Sizes follow a heavy-tailed mix: many
8-64 GPU jobs, some 128-1024 GPU jobs, TP in {4, 8}, PP in {1, 2, 4}; arrivals are Poisson
with a mean gap of 180 s, about 90% of a 16,384-GPU cluster; run times are log-uniform from
10 minutes to 2 days.
"""
import math
import random
import sys


def main():
    jobs = int(sys.argv[1])
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 7)
    sizes = [8, 16, 32, 64, 128, 256, 512, 1024]
    weights = [30, 20, 15, 12, 10, 7, 4, 2]
    print("id,submit,duration,gpus,tp,pp,dp,nvl")
    t = 0.0
    for i in range(jobs):
        t += rng.expovariate(1 / 180.0)
        gpus = rng.choices(sizes, weights)[0]
        tp = rng.choice([4, 8])
        pp = rng.choice([1, 1, 2, 4]) if gpus >= 64 else 1
        dp = gpus // (tp * pp)
        duration = math.exp(rng.uniform(math.log(600), math.log(172800)))
        nvl = rng.choices(["strict", "prefer", "off"], [8, 1, 1])[0]
        print(f"s{i},{t:.1f},{duration:.0f},{gpus},{tp},{pp},{dp},{nvl}")


if __name__ == "__main__":
    main()
