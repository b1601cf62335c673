#!/usr/bin/env python3
"""The placement line's one reader (contrib/cluster/placement_log.py) on the lines its one
writer formats: tests/fixtures/plugin/placement_lines.txt, which plugin/placement_line_test.cc
compares with Format's output. Each example is read as slurmctld logs it and as a
SystemComment; the command is run as the shell tests run it. No cluster (ctest label unit)."""
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "contrib", "cluster"))
import placement_log  # noqa: E402

GOLDEN = os.path.join(ROOT, "tests", "fixtures", "plugin", "placement_lines.txt")
CLI = os.path.join(ROOT, "contrib", "cluster", "placement_log.py")


def examples():
    """{name: line} of the golden file."""
    out = {}
    with open(GOLDEN, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                continue
            name, _, text = line.rstrip("\n").partition("\t")
            out[name] = text
    return out


TP8X2 = {"asked_gpus": "16", "asked_nodes": "any", "tp": "8", "pp": "1", "dp": "2",
         "nvl": "strict", "max_tier": "none", "model": "any", "exclusive": "no"}
TWO_NODES = {"gpus": "node2:0-7 node3:0-7", "domains": "node2,node3", "span_domains": "2",
             "span_nodes": "2", "span_tier": "leaf", "score": "96.9",
             "origin": "best fit under leaf0"}
ONE_ISLAND = {"gpus": "node01:4-7", "domains": "node01:nvl1", "span_domains": "1",
              "span_nodes": "1", "span_tier": "node", "score": "99.6",
              "origin": "best fit under node01"}


def request(gpus, tp="1", dp="1", nvl="strict"):
    return {"asked_gpus": gpus, "asked_nodes": "any", "tp": tp, "pp": "1", "dp": dp, "nvl": nvl,
            "max_tier": "none", "model": "any", "exclusive": "no"}


# What the writer meant by each example (placement_line_test.cc's Examples()).
WANT = {
    "placed": {"v": "1", "event": "placed", **TP8X2, **TWO_NODES,
               "slurm_gpus": "node2:0-7 node3:0-7", "candidate": "1", "candidates": "2",
               "relaxations": "none"},
    "placed-back": {"v": "1", "event": "placed", **TP8X2, **TWO_NODES,
                    "slurm_gpus": "node2:0-7 node3:0-7", "candidate": "1", "candidates": "1",
                    "relaxations": "none", "back_to": "node2,node3"},
    "placed-typed": {
        "v": "1", "event": "placed", "asked_gpus": "8", "asked_nodes": "2", "tp": "4", "pp": "1",
        "dp": "2", "nvl": "prefer", "max_tier": "leaf", "max_tier_required": "no",
        "model": "H100", "exclusive": "yes", "gpus": "node00:4-7 node04:0-3",
        "domains": "node00:nvl1,node04:nvl0", "span_domains": "2", "span_nodes": "2",
        "span_tier": "spine", "score": "71.2", "origin": "fewest hosts under spine0",
        "locality_traded": "best fit under leaf1 would be 2 NVLink domains under one leaf, the "
                           "choice is 2 NVLink domains under one spine; it scored 70.0 against "
                           "71.3: lower fragmentation 40.0 vs 55.0 (weight 5)",
        "slurm_gpus": "node00:4-7 node04:0-3", "candidate": "2", "candidates": "3",
        "relaxations": "max-tier leaf preferred but no leaf holds 2 nodes with 4 free GPUs",
        "cons_tres_alone": "node00:2-3,6-7 node01:0-3"},
    "placed-alone-none": {"v": "1", "event": "placed", **request("4", tp="4"), **ONE_ISLAND,
                          "slurm_gpus": "node01:4-7", "candidate": "1", "candidates": "1",
                          "relaxations": "none", "cons_tres_alone": "none"},
    "differs": {"v": "1", "event": "differs", **request("8"), **TWO_NODES,
                "slurm_gpus": "node00:0-7", "candidate": "1", "candidates": "3",
                "relaxations": "cons_tres allocated node00:0-7 instead of node2:0-7 node3:0-7"},
    "rejected": {"v": "1", "event": "rejected", **TP8X2, **TWO_NODES,
                 "slurm_gpus": "node2:1-7 node3:4", "candidate": "1", "candidates": "2"},
    "placed-by-cons_tres": {
        "v": "1", "event": "placed-by-cons_tres", **request("4"),
        "slurm_gpus": "node05:0-3 node06:no-gpu-index", "candidates": "3",
        "relaxations": "cons_tres refused the 3 node sets of nvlplace, first node00:0-3"},
    "cons_tres": {"v": "1", "event": "cons_tres", **request("2", nvl="off"),
                  "slurm_gpus": "node07:0-1"},
    "waiting": {"v": "1", "event": "waiting", **request("8", tp="4", dp="2"),
                "why": "needs 2 TP groups of 4 GPUs, each inside one NVLink domain; the free "
                       "NVLink domains hold only 0 such groups (largest free domain has 2 GPUs, "
                       "32 GPUs free in all)"},
    "waiting-exhausted": {"v": "1", "event": "waiting", **TP8X2,
                          "why": "cons_tres refused the 2 node sets that keep it (CPUs, memory "
                                 "or other limits)",
                          **TWO_NODES, "candidate": "1", "candidates": "2"},
    "held": {"v": "1", "event": "held",
             "why": "--nvl-tp='fo\"ur\\n': must be a whole number from 1 to 65536; resubmit "
                    "with other --nvl-* options or GPUs"},
    "refused": {"v": "1", "event": "refused", "mode": "test_only", **request("8", tp="8"),
                "why": "never runnable on this cluster: needs 1 TP group of 8 GPUs inside one "
                       "NVLink domain; no NVLink domain holds it (largest domain has 4 GPUs)"},
    "will-run": {"v": "1", "event": "will-run", "mode": "will_run", **request("4", tp="4"),
                 "start_in": "100", **ONE_ISLAND, "candidate": "1", "candidates": "1",
                 "relaxations": "none"},
    "candidate-refused": {"v": "1", "event": "candidate-refused", "mode": "will_run", **TP8X2,
                          **TWO_NODES, "candidate": "2", "candidates": "2"},
    "candidate-taken": {"v": "1", "event": "candidate-taken", "mode": "test_only", **TP8X2,
                        **TWO_NODES, "origin": "", "candidate": "1", "candidates": "1"},
    "cons_tres-error": {"v": "1", "event": "cons_tres",
                        "why": "internal error: a \\ b\tc = d \"e\" \x1b[0m caf\u00e9"},
}


class ExamplesTest(unittest.TestCase):
    def test_every_example_reads_as_its_writer_meant(self):
        got = examples()
        self.assertEqual(sorted(got), sorted(WANT))
        for name, text in got.items():
            with self.subTest(name):
                self.assertEqual(placement_log.parse_fields(text), WANT[name])
                # The fields keep the writer's order: v, then event.
                self.assertEqual(list(placement_log.parse_fields(text))[:2], ["v", "event"])

    def test_as_slurmctld_logs_them_and_as_a_system_comment(self):
        for name, text in examples().items():
            with self.subTest(name):
                for prefix in ("", "error: "):
                    r = placement_log.parse(
                        f"[2026-11-24T00:53:20.123] {prefix}nvlplace: JobId=5_7(84) {text}\n")
                    self.assertEqual((r.job, r.time, r.fields),
                                     ("5_7(84)", "2026-11-24T00:53:20.123", WANT[name]))
                r = placement_log.parse(f"nvlplace: {text}")
                self.assertEqual((r.job, r.time, r.fields), (None, None, WANT[name]))

    def test_gpu_words(self):
        self.assertEqual(placement_log.gpu_words(WANT["placed-typed"]["cons_tres_alone"]),
                         ["node00:2-3,6-7", "node01:0-3"])
        self.assertEqual(placement_log.gpu_words("none"), [])


class ParseTest(unittest.TestCase):
    def test_other_lines_are_not_placement_lines(self):
        for line in ["[2026-11-24T00:53:20] nvlplace: loaded /etc/slurm/nvlplace.yaml: ...",
                     "[2026-11-24T00:53:20] nvlplace: JobId=5: no memory for a decision",
                     "[2026-11-24T00:53:20] sched: Allocate JobId=12 NodeList=node01",
                     # the free text of nvlplace before the placement line had a version
                     "nvlplace: JobId=4 placed 4 GPUs (TP=4 PP=1 DP=1, nvl=strict) -> node01:4-7",
                     "nvlplace: waiting: 8 GPUs (TP=4 PP=1 DP=2, nvl=strict): needs 2 TP groups"]:
            self.assertIsNone(placement_log.parse(line), line)

    def test_what_this_reader_refuses(self):
        for text, why in [("v=2 event=placed", "newer than this reader"),
                          ("v=x event=placed", "no version"),
                          ("v=1 event=placed why=\"open", "never ends"),
                          ("v=1 event=placed why=\"a\\qb\"", "bad escape"),
                          ("v=1 event=placed event=waiting", "event twice"),
                          ("v=1 event=placed \"x\"", "no key=value"),
                          ("v=1 why=\"a\"b", "no space after")]:
            with self.subTest(text):
                with self.assertRaisesRegex(placement_log.LineError, why):
                    placement_log.parse(f"nvlplace: JobId=3 {text}")


def run(*args, stdin=""):
    r = subprocess.run([sys.executable, CLI, *args], input=stdin, capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


class CommandTest(unittest.TestCase):
    """The command as tests/slurm/lib.sh calls it (log_line_has, comment_has, log_field)."""

    @classmethod
    def setUpClass(cls):
        ex = examples()
        lines = [f"[2026-11-24T00:53:1{i}] nvlplace: JobId={job} {ex[name]}"
                 for i, (job, name) in enumerate([("12", "waiting"), ("12", "placed"),
                                                  ("5_7(84)", "rejected"), ("5_7(84)", "placed"),
                                                  ("13", "refused")])]
        lines.insert(2, "[2026-11-24T00:53:12] sched: Allocate JobId=12 NodeList=node2,node3")
        cls.log = "\n".join(lines) + "\n"
        cls.comment = f"nvlplace: {ex['waiting']}"

    def test_conditions_on_a_job_of_the_log(self):
        placed = ["--job", "12", "event=placed", "gpus=node2:0-7 node3:0-7", "candidate=1",
                  "relaxations=none", "tp=8", "pp=1", "dp=2", "nvl=strict", "domains~node3"]
        self.assertEqual(run("--log", "-", *placed, stdin=self.log)[0], 0)
        # Any condition false, or another job: no line.
        for bad in ["candidate=2", "model=H100", "domains~nvl", "locality_traded~"]:
            with self.subTest(bad):
                self.assertEqual(run("--log", "-", *placed, bad, stdin=self.log)[0], 1)
        self.assertEqual(run("--log", "-", "--job", "13", "event=placed", stdin=self.log)[0], 1)

    def test_any_job_or_none(self):
        log = self.log + f"nvlplace: {examples()['held']}\n"  # job_submit's: no job id
        self.assertEqual(run("--log", "-", "--count", "--job", "*", stdin=log)[1], "5\n")
        self.assertEqual(run("--log", "-", "--count", stdin=log)[1], "6\n")
        self.assertEqual(run("--log", "-", "--job", "*", "event=held", stdin=log)[0], 1)
        self.assertEqual(run("--log", "-", "event=held", stdin=log)[0], 0)

    def test_an_array_task_is_found_by_each_of_its_ids(self):
        for job in ["5_7(84)", "5", "84"]:
            code, out, _ = run("--log", "-", "--job", job, "--field", "event", stdin=self.log)
            self.assertEqual((code, out), (0, "placed\n"))  # the last line of the job

    def test_fields_count_and_everything(self):
        code, out, _ = run("--log", "-", "--job", "12", "event=placed", "--field", "gpus",
                           "--field", "slurm_gpus", stdin=self.log)
        self.assertEqual((code, out), (0, "node2:0-7 node3:0-7\nnode2:0-7 node3:0-7\n"))
        self.assertEqual(run("--log", "-", "--count", "event=placed", stdin=self.log)[:2],
                         (0, "2\n"))
        self.assertEqual(run("--log", "-", "--count", "event=held", stdin=self.log)[:2],
                         (0, "0\n"))
        code, out, _ = run("--log", "-", "--job", "13", stdin=self.log)
        self.assertEqual(code, 0)
        self.assertIn("why=never runnable on this cluster: needs 1 TP group of 8 GPUs inside "
                      "one NVLink domain; no NVLink domain holds it (largest domain has 4 GPUs)\n",
                      out)
        code, out, err = run("--log", "-", "--job", "13", "--field", "gpus", stdin=self.log)
        self.assertEqual(code, 1)
        self.assertIn("no gpus in", err)

    def test_a_log_file_and_a_system_comment(self):
        with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
            f.write(self.log)
        try:
            self.assertEqual(run("--log", f.name, "--job", "12", "--field", "event")[:2],
                             (0, "placed\n"))
        finally:
            os.unlink(f.name)
        code, out, _ = run("--comment", self.comment, "event=waiting", "--field", "why")
        self.assertEqual(code, 0)
        self.assertTrue(out.startswith("needs 2 TP groups of 4 GPUs, each inside one NVLink"))
        self.assertEqual(run("--comment", "", "event=waiting")[0], 1)
        self.assertEqual(run("--comment", "a comment of someone else's")[0], 1)

    def test_bad_arguments_and_unreadable_lines(self):
        self.assertEqual(run("--log", "-", "event", stdin=self.log)[0], 2)
        code, _, err = run("--comment", "nvlplace: v=2 event=placed")
        self.assertEqual(code, 2)
        self.assertIn("newer than this reader", err)


if __name__ == "__main__":
    unittest.main()
