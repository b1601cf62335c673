#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The parts of contrib/bench/slurm_testsuite.sh that are not shell: the result of one run of
one of Slurm's expect tests, and the table that compares stock cons_tres with the plugin.

Usage: slurm_testsuite.py result --log FILE --rc N
       slurm_testsuite.py table --stock TSV --plugin TSV [--notes TSV] [--release VERSION]

result  one line "RESULT<TAB>COUNTS<TAB>REASON" for a test's output (expect's stdout and
        stderr) and exit code: RESULT is PASS (0), SKIP (255: the test or one of its subtests
        or testprocs skipped), TIMEOUT (124 or 137: timeout(1) stopped it) or FAIL; COUNTS is
        "passed/skipped/failed" of its subtests (else its testprocs, else "-"); REASON is the
        message of the skip or failure (for SKIP and FAIL), or the last line it printed
        (TIMEOUT), on one line.
table   the Markdown table of one release: a row per test in either results file (the TSV
        files slurm_testsuite.sh writes: test, result, counts, seconds, reason, cleanup),
        with both results and a difference column: "-" where result and counts agree, else
        the note for that test from --notes (TSV: release series such as 24.11 or *, test,
        explanation; lines starting with # are comments), else "UNEXPLAINED"; a note on a
        test alike in both modes is shown after its "-". Below it the reasons of every skip,
        once each, and a count of tests per outcome; exits 1 when a difference is
        unexplained.
"""

import argparse
import collections
import csv
import re
import sys

# "[2026-11-26 12:34:11.165] Warning MESSAGE (skip@globals:466,test39.8:35,...)", at the
# start of a line or after what an interactive shell of the test printed before it.
LOG_LINE_RE = re.compile(
    r"\[\d{4}-\d\d-\d\d [0-9:.]+\] (\w+)\s+(.*?)(?: \(([^()]*@[^()]*)\))?$")
COUNT_RE = re.compile(r"^  (Subtests|Testprocs) (passed|skipped|failed)\s*:\s*(\d+)")
DETAIL_RE = re.compile(r"^  (?:Subtest|Testproc)\s+\d+\s+(skipped|failed)\s*: (.*)$")
SKIPPING_RE = re.compile(r"^Skipping (?:testproc|subtest) \d+: ")
RESULTS = ("PASS", "SKIP", "FAIL", "TIMEOUT", "MISSING")


def one_line(text, limit=300):
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def bare_reason(text):
    """"Skipping testproc 3: (MESSAGE)" and "(MESSAGE)" as MESSAGE."""
    text = SKIPPING_RE.sub("", text.strip())
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1]
    return text.strip()


def parse_result(lines, rc):
    """(result, counts, reason) of one test run: its output lines and exit code."""
    if rc == 0:
        result = "PASS"
    elif rc in (124, 137):
        result = "TIMEOUT"
    elif rc == 255:
        result = "SKIP"
    else:
        result = "FAIL"
    counts = {}
    details = {"skipped": [], "failed": []}
    called = {"skip": [], "fail": []}
    last = ""
    for line in lines:
        line = line.rstrip("\n")
        if line.strip():
            last = line
        m = COUNT_RE.match(line)
        if m:
            counts.setdefault(m.group(1), {})[m.group(2)] = int(m.group(3))
            continue
        m = DETAIL_RE.match(line)
        if m:
            details[m.group(1)].append(m.group(2).strip())
            continue
        m = LOG_LINE_RE.search(line)
        if m and m.group(3):
            proc = m.group(3).split("@", 1)[0]
            if proc in called:
                called[proc].append(m.group(2))
    kind = "Subtests" if "Subtests" in counts else "Testprocs" if "Testprocs" in counts else None
    if kind:
        c = counts[kind]
        count_text = f"{c.get('passed', 0)}/{c.get('skipped', 0)}/{c.get('failed', 0)}"
    else:
        count_text = "-"
    if result == "SKIP":
        reasons = called["skip"] or details["skipped"]
    elif result == "FAIL":
        reasons = called["fail"] or details["failed"]
    elif result == "TIMEOUT":
        m = LOG_LINE_RE.search(last)
        reasons = ["killed by the per-test timeout; last line: " + (m.group(2) if m else last)]
    else:
        reasons = []
    # Subtest details repeat the testproc ones: each reason once, in order.
    reason = "; ".join(dict.fromkeys(bare_reason(r) for r in reasons))
    return result, count_text, one_line(reason)


def cmd_result(args):
    try:
        with open(args.log, encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
    except OSError as e:
        sys.exit(f"slurm_testsuite.py: {e}")
    print("\t".join(parse_result(lines, args.rc)))


def read_results(path):
    """{test: row} of a results TSV (its first line is the header)."""
    rows = {}
    with open(path, encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
            if row.get("test"):
                rows[row["test"]] = row
    return rows


def read_notes(path, release):
    """{test: explanation} for RELEASE from a notes TSV (series or * in the first column)."""
    notes = {}
    if not path:
        return notes
    series = ".".join(release.split(".")[:2]) if release else ""
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3:
                sys.exit(f"slurm_testsuite.py: {path}:{n}: want 3 tab-separated fields "
                         f"(series, test, explanation), got {len(parts)}")
            if parts[0] in ("*", series, release):
                notes[parts[1]] = parts[2]
    return notes


def test_key(name):
    """test39.10 after test39.9: the numbers compared as numbers."""
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


def cell(row):
    if row is None:
        return "-"
    text = row["result"]
    if row["counts"] not in ("", "-"):
        text += f" {row['counts']}"
    return text


def cmd_table(args):
    stock, plugin = read_results(args.stock), read_results(args.plugin)
    notes = read_notes(args.notes, args.release)
    out = ["| test | stock cons_tres | cons_tres_nvlplace | difference |",
           "|---|---|---|---|"]
    skips = collections.OrderedDict()
    outcome = collections.Counter()
    unexplained = 0
    for test in sorted(set(stock) | set(plugin), key=test_key):
        a, b = stock.get(test), plugin.get(test)
        same = (a is not None and b is not None
                and (a["result"], a["counts"]) == (b["result"], b["counts"]))
        if same:
            # A note on a test alike in both modes (a failure of Slurm's own) follows the "-".
            diff = f"- ({notes[test]})" if test in notes else "-"
            outcome[a["result"]] += 1
        else:
            diff = notes.get(test)
            outcome["different"] += 1
            if not diff:
                diff = "UNEXPLAINED"
                unexplained += 1
        out.append(f"| {test} | {cell(a)} | {cell(b)} | {diff} |")
        for row in (a, b):
            if row and row["result"] == "SKIP" and row["reason"]:
                skips.setdefault(row["reason"], set()).add(test)
    out.append("")
    out.append("Counts are subtests (else testprocs) passed/skipped/failed; a test with a "
               "skipped subtest reports SKIP.")
    if outcome["MISSING"]:
        out.append("MISSING: the testsuite used for this release has no such test.")
    if skips:
        out.append("")
        out.append("Skip reasons (Slurm's own words):")
        for reason, tests in skips.items():
            out.append(f"- {', '.join(sorted(tests, key=test_key))}: {reason}")
    out.append("")
    out.append("Same result in both modes: " + ", ".join(
        f"{outcome[r]} {r}" for r in RESULTS if outcome[r]) +
        f"; different: {outcome['different']} ({unexplained} unexplained).")
    print("\n".join(out))
    return 1 if unexplained else 0


def main():
    doc = __doc__.split("\n\n")
    p = argparse.ArgumentParser(prog="slurm_testsuite.py", usage=doc[1][len("Usage: "):],
                                description=doc[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    q = sub.add_parser("result")
    q.add_argument("--log", required=True)
    q.add_argument("--rc", type=int, required=True)
    q = sub.add_parser("table")
    q.add_argument("--stock", required=True)
    q.add_argument("--plugin", required=True)
    q.add_argument("--notes")
    q.add_argument("--release", default="")
    args = p.parse_args()
    if args.cmd == "result":
        cmd_result(args)
        return 0
    return cmd_table(args)


if __name__ == "__main__":
    sys.exit(main())
