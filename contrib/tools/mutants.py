#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Hand mutations of the guards that matter, each of which some test must kill."""
# Usage: contrib/tools/mutants.py [--build-dir build] [--check] [NAME ...]
#
# --check only verifies that each mutant's line is in its source exactly once (no build, no
# test run): ctest's `mutants_current` runs it, so that a change that moves a guarded line
# fails CI until its mutant is updated.
#
# Each mutant below breaks one promise of nvlplace in one line of its source: a strict TP
# job run as Slurm chose, a GPU named twice counted twice, a failed Allocate leaving GPUs
# held, a PCIe link priced as the fabric, and so on. For each, the tool writes the mutated
# line into the source, rebuilds the test binaries (and the CLI the golden tests run),
# runs `ctest -L 'unit|golden'`, and restores the file whatever happens. A mutant is
# killed when at least one test fails; the tool prints which. It exits 1 when a mutant
# survives, and 2 when a mutant's line is no longer in the source (the code moved: update
# the mutant, do not drop it) or ctest failed without naming a test.
#
# It rebuilds and reruns the suite once per mutant (about a minute each on a 2-core
# machine), so it is a developer command, not a CI test; its last results are in the
# README ("Tests").
import argparse
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

ENGINE_TESTS = ["engine_test", "engine_property_test", "search_test", "cost_model_test",
                "policies_test", "nvlplace"]
PLUGIN_TESTS = ["plugin_facade_test"]

# name, file, the exact text, its mutation, targets to rebuild, the promise it breaks
MUTANTS = [
    ("strict-split-guard", "plugin/decision.cc",
     "  if (hard_) {\n    decider_->Count(&Counters::strict_rejected);",
     "  if (false) {\n    decider_->Count(&Counters::strict_rejected);",
     PLUGIN_TESTS,
     "a strict job whose GPUs Slurm would change is refused, not run as Slurm chose"),
    ("facade-dedup", "plugin/decision.cc",
     "if (n < 0 || live->to_caller[n] >= 0) continue;",
     "if (n < 0) continue;",
     PLUGIN_TESTS,
     "a node slurmctld lists twice counts once (its first free list)"),
    ("kept-state-list-order", "plugin/decision.cc",
     "      if (idx <= before || static_cast<size_t>(idx) >= gpus.size() || state.busy(gpus[idx])) {",
     "      if (static_cast<size_t>(idx) >= gpus.size() || state.busy(gpus[idx])) {",
     PLUGIN_TESTS,
     "a node's free list with repeats or out of order is compared in full with the kept state"),
    ("kept-state-ungiven-busy", "plugin/decision.cc",
     "    if (live->to_caller[n] < 0 && state.free_on_node(n) > 0) {",
     "    if (false) {",
     PLUGIN_TESTS,
     "a node slurmctld does not give has every GPU busy in the kept state (never a free spare)"),
    ("kept-state-narrowed-listed", "plugin/decision.cc",
     "  if (narrowed) request->allowed_set = Request::kListed;",
     "  (void)narrowed;",
     PLUGIN_TESTS,
     "a request Slurm offers fewer nodes than it allows is a listed set, never the kept index's"),
    ("allocate-rollback", "placement/model/cluster_state.cc",
     "        if (!Held(gpus[j])) Set(gpus[j], false);",
     "",
     ["cluster_state_test"] + ENGINE_TESTS,
     "an Allocate that fails part-way leaves no GPU of it allocated"),
    ("release-rollback", "placement/model/cluster_state.cc",
     "        if (!Held(gpus[j])) Set(gpus[j], true);",
     "",
     ["cluster_state_test"] + ENGINE_TESTS,
     "a Release that fails part-way leaves every GPU of it allocated"),
    ("allocate-checks-ids", "placement/model/cluster_state.cc",
     "absl::Status ClusterState::Allocate(absl::Span<const GpuId> gpus) {\n"
     "  if (absl::Status s = CheckIds(gpus); !s.ok()) return s;",
     "absl::Status ClusterState::Allocate(absl::Span<const GpuId> gpus) {\n"
     "  for (GpuId g : gpus) if (g >= topo_->num_gpus()) return absl::OutOfRangeError(\"no GPU\");",
     ["cluster_state_test"] + ENGINE_TESTS,
     "every id is checked, negative ones too, before any GPU is allocated"),
    ("pcie-link-cost", "placement/engine/cost_model.cc",
     "  if (ga.node == gb.node) {\n    // Through the host",
     "  if (false) {\n    // Through the host",
     ENGINE_TESTS,
     "two NVLink islands of one node talk over PCIe, not over the fabric"),
    ("engine-strict-guard", "placement/engine/engine.cc",
     "if (r.nvl == NvlMode::kStrict && sc.facts.tp_groups_split > 0) {",
     "if (false) {",
     ENGINE_TESTS,
     "the engine never returns a strict candidate that splits a TP group"),
    ("tie-to-more-local", "placement/engine/engine.cc",
     "Locality(scored[i].facts) < Locality(scored[best].facts)",
     "false",
     ENGINE_TESTS,
     "a tie on every scorer goes to the more local candidate"),
    ("nodes-times-gpus-bound", "placement/model/request.cc",
     "    if (product > limits::kMaxJobGpus) {\n      return Bad(absl::StrCat(\"nodes x gpus-per-node",
     "    if (false) {\n      return Bad(absl::StrCat(\"nodes x gpus-per-node",
     ["request_test"] + ENGINE_TESTS,
     "nodes x gpus-per-node is bounded before it is used"),
    ("journal-keeps-repeats", "placement/model/cluster_state.cc",
     "    if (n != last) journal_.push_back(n);",
     "    if (n != last && (journal_.empty() || journal_.back() != n)) journal_.push_back(n);",
     ["cluster_state_test"] + ENGINE_TESTS,
     "an index kept with the state sees every change, a node's repeated ones too"),
    ("index-ancestor-largest", "placement/engine/search.cc",
     "    } else if (child_now < child_was && child_was == largest) {",
     "    } else if (false) {",
     ENGINE_TESTS,
     "the largest free domain under a switch shrinks when the child that held it does"),
    ("facade-guard-catches-all", "plugin/guard.h",
     "  } catch (...) {\n    LogCaught(entry, \"an exception that is not a std::exception\", "
     "consequence);\n  }",
     "  }",
     PLUGIN_TESTS,
     "no exception of any kind leaves the facade into slurmctld: the guard turns it into the "
     "entry's fallback"),
    ("facade-fallback-keeps-promises", "plugin/nvlplace_facade.cc",
     "return nvl_opts_promise(found, &opts, default_strict) ? &g_fallback_waits",
     "return false ? &g_fallback_waits",
     PLUGIN_TESTS,
     "when nvlplace cannot decide, a job whose options promise something waits, never runs as "
     "cons_tres would place it"),
    ("earliest-start-gallop", "placement/engine/earliest_start.cc",
     "    if (hi == times.size() - 1) return out;",
     "    if (true) return out;",
     ["earliest_start_test"] + ENGINE_TESTS,
     "backfill's start estimate looks past the first end time that does not make room"),
    ("segment-nodes-together", "placement/engine/engine.cc",
     "  int together = std::max(r.segment, 1);",
     "  int together = 1;",
     ENGINE_TESTS,
     "the nodes of a segment are taken together from one multi-node NVLink domain"),
    ("spares-kept", "placement/engine/search.cc",
     "  if (*room <= 0) return false;",
     "",
     ENGINE_TESTS,
     "a domain's spares stay free unless the job or the policy may take them"),
    ("replay-reservation-keeps-off", "contrib/replay/simulator.cc",
     "      for (NodeId n : nodes) {\n        for (GpuId g : topo_.nodes()[n].gpus) {\n"
     "          if (!state_->busy(g)) held_.push_back(g);",
     "      for (NodeId n : std::vector<NodeId>{}) {\n        for (GpuId g : topo_.nodes()[n].gpus) {\n"
     "          if (!state_->busy(g)) held_.push_back(g);",
     ["simulator_test", "nvlplace"],
     "a job the replay backfills past the head's reservation keeps off the reserved nodes, as "
     "Slurm's backfill does with the plugin's answer"),
]


def run(cmd, **kw):
    return subprocess.run(cmd, cwd=kw.pop("cwd", ROOT), text=True, capture_output=True, **kw)


def build(build_dir, targets):
    # One build at a time on this machine: the lock contrib/build.sh takes.
    r = run(["flock", "/tmp/nvlplace-build.lock", "cmake", "--build", build_dir, "-j2",
             "--target"] + targets)
    return r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]


def failing_tests(build_dir):
    # Layout is not behaviour: the clang-format check is left out; so is mutants_current,
    # which fails on any mutated source.
    r = run(["ctest", "-L", "unit|golden", "-E", "^(format|mutants_current)$", "-j2"],
            cwd=build_dir)
    # ctest's summary: "The following tests FAILED:" then "\t 12 - Name (Failed)", or
    # (SEGFAULT), (Subprocess aborted), (Timeout)...
    summary = r.stdout.split("The following tests FAILED:", 1)[-1] if r.returncode else ""
    failed = [m.group(1)[:80] + ("" if m.group(2) == "Failed" else f" ({m.group(2)})")
              for m in re.finditer(r"^\s*\d+ - (.+) \(([^()]*)\)$", summary, re.M)]
    return r.returncode, failed, r.stdout[-1500:] + r.stderr[-500:]


def try_mutant(build_dir, mutant):
    name, rel, text, mutation, targets, promise = mutant
    path = os.path.join(ROOT, rel)
    with open(path) as f:
        original = f.read()
    if original.count(text) != 1:
        return "moved", f"{rel}: the mutant's line is found {original.count(text)} times, not once"
    try:
        with open(path, "w") as f:
            f.write(original.replace(text, mutation))
        ok, log = build(build_dir, targets)
        if not ok:
            return "killed", "by the compiler:\n" + log
        rc, failed, tail = failing_tests(build_dir)
        if rc == 0:
            return "survived", "every unit and golden test passed"
        if not failed:
            return "error", "ctest failed without naming a test:\n" + tail
        shown = ", ".join(failed[:4]) + (f" and {len(failed) - 4} more" if len(failed) > 4 else "")
        return "killed", f"by {len(failed)} test(s): {shown}"
    finally:
        with open(path, "w") as f:
            f.write(original)
        # The next mutant's tests must run on binaries of the unmutated source.
        build(build_dir, targets)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--check", action="store_true",
                    help="only check that each mutant's line is in its source exactly once")
    ap.add_argument("names", nargs="*", help="mutants to try (default: all)")
    args = ap.parse_args()
    known = [m[0] for m in MUTANTS]
    for n in args.names:
        if n not in known:
            sys.exit(f"mutants.py: no mutant '{n}'; mutants are {', '.join(known)}")
    chosen = [m for m in MUTANTS if not args.names or m[0] in args.names]
    if args.check:
        moved = []
        for name, rel, text, *_ in chosen:
            with open(os.path.join(ROOT, rel)) as f:
                found = f.read().count(text)
            if found != 1:
                moved.append(f"{name}: its line is found {found} times in {rel}, not once "
                             "(the code moved: update the mutant, do not drop it)")
        for line in moved:
            print(f"mutants.py: {line}", file=sys.stderr)
        print(f"{len(chosen)} mutants, {len(chosen) - len(moved)} current")
        sys.exit(2 if moved else 0)
    build_dir = os.path.abspath(args.build_dir)
    ok, log = build(build_dir, sorted({t for m in chosen for t in m[4]}))
    if not ok:
        sys.exit(f"mutants.py: the unmutated tree does not build in {build_dir}:\n{log}")
    rc, failed, _ = failing_tests(build_dir)
    if rc != 0:
        sys.exit(f"mutants.py: tests fail before any mutation: {', '.join(failed[:5])}")
    results = {}
    for m in chosen:
        start = time.monotonic()
        verdict, detail = try_mutant(build_dir, m)
        results[m[0]] = verdict
        print(f"{m[0]}: {verdict.upper()} in {time.monotonic() - start:.0f} s ({m[5]}); {detail}",
              flush=True)
    survived = [n for n, v in results.items() if v == "survived"]
    moved = [n for n, v in results.items() if v in ("moved", "error")]
    print(f"{len(chosen)} mutants: {sum(v == 'killed' for v in results.values())} killed, "
          f"{len(survived)} survived, {len(moved)} moved or in error")
    if moved:
        sys.exit(2)
    if survived:
        sys.exit(1)


if __name__ == "__main__":
    main()
