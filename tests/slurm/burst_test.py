#!/usr/bin/env python3
"""The burst's checker (contrib/cluster/burst.py) on slurmctld logs written by hand: which
allocation each started job is compared with. A pairing that is too loose reports a silent
difference that is not there (slurm.faults failed that way after a SIGKILL); one that is too
tight stops checking jobs. Runs without a cluster (ctest label unit); the layouts are read by
the nvlplace CLI given as the first argument."""
import os
import sys
import tempfile
import types
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "contrib", "cluster"))
import burst  # noqa: E402
import placement_log  # noqa: E402

CLI = None  # the nvlplace binary (argv[1])
TOPOLOGY = os.path.join(os.path.dirname(__file__), "..", "..", "configs", "lab-islands.yaml")


def placed(t, job, layout):
    # A placement line as plugin/placement_line.cc formats it (placement_log_test.py reads
    # the writer's own examples).
    return (f"[2026-11-24T00:53:{t}] nvlplace: JobId={job} v=1 event=placed asked_gpus=2 "
            f"asked_nodes=any tp=2 pp=1 dp=1 nvl=strict max_tier=none model=any exclusive=no "
            f"gpus={layout} domains=node01:nvl1 span_domains=1 span_nodes=1 span_tier=node "
            f"score=99.6 origin=x slurm_gpus={layout} candidate=1 candidates=2 relaxations=none")


def backfill_started(t, job):
    return f"[2026-11-24T00:53:{t}] sched/backfill: _start_job: Started JobId={job} in gpu on n"


def ctld_started(t):
    return f"[2026-11-24T00:53:{t}] slurmctld version 22.05.8 started on cluster nvlplace"


class DecisionsTest(unittest.TestCase):
    def decisions(self, *lines):
        with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
            f.write("\n".join(lines) + "\n")
        try:
            return burst.decisions(f.name, CLI)
        finally:
            os.unlink(f.name)

    def test_a_start_pairs_with_the_placement_just_before_it(self):
        out, unpaired = self.decisions(placed("53.019", "5_7(5)", "node01:2-3"),
                                       backfill_started("53.019", "5_7(84)"))
        self.assertEqual(out[84].layout, {"node01": [2, 3]})
        self.assertEqual(unpaired, {})

    def test_a_placement_whose_start_a_killed_slurmctld_never_logged_is_dropped(self):
        # Seen in slurm.faults: placed, slurmctld SIGKILLed before the start, restarted, the
        # job started by cons_tres while nvlplace.yaml was broken (no placement line).
        out, unpaired = self.decisions(placed("53.019", "5_9(5)", "node01:6-7"),
                                       ctld_started("54.459"),
                                       backfill_started("56.571", "5_9(5)"))
        self.assertNotIn(5, out)
        self.assertEqual(unpaired, {})

    def test_a_start_long_after_the_placement_is_not_paired(self):
        out, _ = self.decisions(placed("10.000", "7", "node01:0-1"),
                                backfill_started("16.500", "7"))
        self.assertNotIn(7, out)

    def test_a_later_start_without_a_placement_drops_the_earlier_pairing(self):
        out, _ = self.decisions(placed("10.000", "7", "node01:0-1"),
                                backfill_started("10.001", "7"),
                                backfill_started("30.000", "7"))
        self.assertNotIn(7, out)

    def test_without_a_start_line_the_start_time_pairs(self):
        # 26.05's sched/backfill logs no start line.
        logged, unpaired = self.decisions(placed("20.900", "3_1(3)", "node02:0-1"))
        job = {"array": (3, "1"), "start": "2026-11-24T00:53:21"}
        self.assertEqual(burst.decision_for(3, job, logged, unpaired)[0], {"node02": [0, 1]})
        late = {"array": (3, "1"), "start": "2026-11-24T00:53:27"}
        self.assertIsNone(burst.decision_for(3, late, logged, unpaired))
        other = {"array": (3, "2"), "start": "2026-11-24T00:53:21"}
        self.assertIsNone(burst.decision_for(3, other, logged, unpaired))

    def test_a_job_id_handed_out_again_after_a_sigkill_is_not_the_placed_job(self):
        # Seen in slurm-26.05.faults (CI, 2026-11-25): task 3_8 placed and started as job 70,
        # slurmctld SIGKILLed before it saved either; after the restart job id 70 went to a
        # one-GPU task that 26.05's backfill started without a line, and task 3_8 started
        # again later elsewhere.
        logged, unpaired = self.decisions(placed("22.001", "3_8(3)", "node01:0-1"),
                                           backfill_started("22.001", "3_8(70)"),
                                           ctld_started("27.400"))
        other = {"array": (12, "4"), "start": "2026-11-24T00:53:31"}
        self.assertIsNone(burst.decision_for(70, other, logged, unpaired))
        same = {"array": (3, "8"), "start": "2026-11-24T00:53:22"}
        self.assertEqual(burst.decision_for(70, same, logged, unpaired)[0], {"node01": [0, 1]})

    def test_a_task_started_again_after_the_restart_is_not_paired_with_its_first_placement(self):
        # The same burst: task 3_9 (job 3) placed and started on node04, slurmctld SIGKILLed,
        # restarted within START_AFTER_PLACED_S, and the task started again on node02 by a
        # backfill that logs no line.
        logged, unpaired = self.decisions(placed("22.001", "3_9(3)", "node04:0-1"),
                                           backfill_started("22.001", "3_9(3)"),
                                           ctld_started("26.300"))
        again = {"array": (3, "9"), "start": "2026-11-24T00:53:26"}
        self.assertIsNone(burst.decision_for(3, again, logged, unpaired))
        before = {"array": (3, "9"), "start": "2026-11-24T00:53:22"}
        self.assertEqual(burst.decision_for(3, before, logged, unpaired)[0], {"node04": [0, 1]})


class ParseJobsTest(unittest.TestCase):
    def test_hostlists_indexes_and_gpus_without_index(self):
        text = ("JobId=9 JobState=RUNNING Reason=None\n"
                "   Nodes=node[01-02] CPU_IDs=0 Mem=0 GRES=gpu(IDX:0-1,4)\n"
                "   Nodes=node03 CPU_IDs=0 Mem=0 GRES=gpu:2(CNT:2)\n")
        jobs = burst.parse_jobs(CLI, " ".join(text.split("\n")))
        self.assertEqual(jobs[9]["gpus"], {"node01": [0, 1, 4], "node02": [0, 1, 4], "node03": []})
        self.assertEqual(jobs[9]["indexless"], ["node03"])

    def test_a_node_without_gpus_of_the_job(self):
        # Seen in the faults burst: an empty index list on one node of a job (CI, 2026-11-25).
        text = ("JobId=10 JobState=RUNNING Reason=None"
                " Nodes=node04 CPU_IDs=0 Mem=0 GRES=gpu(IDX:0-3)"
                " Nodes=node[05-06] CPU_IDs=0 Mem=0 GRES=gpu(IDX:)")
        jobs = burst.parse_jobs(CLI, text)
        self.assertEqual(jobs[10]["gpus"], {"node04": [0, 1, 2, 3], "node05": [], "node06": []})
        self.assertEqual(jobs[10]["indexless"], [])


class RecordedTest(unittest.TestCase):
    def test_each_job_counts_its_own_record(self):
        # Job 14 ran `show job 14` as the array's first task: it lists task 15 not yet
        # started. Jobs 15 and 16 wrote their own records; 16's also lists 15, pending.
        run = "JobState=RUNNING Reason=None Nodes=node0{} CPU_IDs=0 Mem=0 GRES=gpu(IDX:{})"
        pending = "JobState=PENDING Reason=Resources"
        files = {"14": f"JobId=14 {run.format(1, '0-3')}\nJobId=15 {pending}\n",
                 "15": f"JobId=15 {run.format(2, '4-7')}\n",
                 "16": f"JobId=16 {run.format(3, '0')}\nJobId=15 {pending}\n"}
        with tempfile.TemporaryDirectory() as d:
            for name, text in files.items():
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
            jobs = burst.recorded(CLI, d)
        self.assertEqual({jid: j["gpus"] for jid, j in jobs.items()},
                         {14: {"node01": [0, 1, 2, 3]}, 15: {"node02": [4, 5, 6, 7]},
                          16: {"node03": [0]}})


class QualityTest(unittest.TestCase):
    """--quality's spans, asked of `nvlplace check span --batch` once for all jobs."""

    def burst(self):
        fake = types.SimpleNamespace(c=types.SimpleNamespace(cli=CLI), leaf_tier="leaf",
                                     tier_rank={"node": 0, "leaf": 1, "spine": 2})
        fake.spans = lambda topology, texts: burst.Burst.spans(fake, topology, texts)
        return fake

    def test_spans(self):
        got = burst.Burst.spans(self.burst(), TOPOLOGY,
                                ["node05:4,5,6,7", "node00:0-3 node04:0-3", "node05:4,5,6,7"])
        # locality: the engine's rank, 1 domain on one node = 1; split under the spine (tier
        # 1) over 2 domains = 10^12 + 2 x 10^10 + 2.
        self.assertEqual(got, {"node05:4,5,6,7": (1, 1, "node", 1),
                               "node00:0-3 node04:0-3": (2, 2, "spine", 1_020_000_000_002)})

    def test_against_cons_tres_alone(self):
        tp4 = (1, "gpus=4 tp=4", [], 4, True)
        got = {1: {"node05": [4, 5, 6, 7]}, 2: {"node00": [0, 1], "node01": [0, 1]}}
        def line(**fields):
            return placement_log.Record("1", {"v": "1", "event": "placed", **fields}, None, "")
        placed = {1: ({}, line(cons_tres_alone="node05:2-5")),
                  2: ({}, line(locality_traded="x", cons_tres_alone="node00:0-3"))}
        q = burst.Burst.quality(self.burst(), got, {1: tp4, 2: tp4}, TOPOLOGY, placed)["tp"]
        self.assertEqual((q["jobs"], q["one_domain_share"], q["one_leaf_share"]), (2, 0.5, 1.0))
        v = q["vs_cons_tres_alone"]
        self.assertEqual((v["compared"], v["fewer_domains"], v["more_domains"], v["higher_tier"],
                          v["less_local_said"]), (2, 1, 1, 1, 1))


class PidFileTest(unittest.TestCase):
    """Cluster.pid as slurmctld leaves its pid file: rewritten in place on every reconfigure
    (23.11+) without truncation, so a shorter pid after a wrap-around keeps the old tail."""

    def pid_in(self, text):
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "run"))
            with open(os.path.join(d, "run", "slurmctld.pid"), "w") as f:
                f.write(text)
            cluster = burst.Cluster.__new__(burst.Cluster)
            cluster.run = d
            return cluster.pid("slurmctld.pid")

    def test_a_shorter_pid_written_over_a_longer_one_is_read_from_the_first_line(self):
        me = os.getpid()
        self.assertEqual(self.pid_in(f"{me}\n4\n"), me)  # 32764 then 706: '706\n4\n'

    def test_a_process_that_ended_or_is_a_zombie_is_not_alive(self):
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        # Ended and not reaped (WNOWAIT): a zombie until the waitpid below.
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        self.assertIsNone(self.pid_in(f"{pid}\n"))
        os.waitpid(pid, 0)
        self.assertIsNone(self.pid_in(f"{pid}\n"))

    def test_an_empty_or_missing_file_names_no_process(self):
        self.assertIsNone(self.pid_in(""))
        cluster = burst.Cluster.__new__(burst.Cluster)
        cluster.run = "/nonexistent"
        self.assertIsNone(cluster.pid("slurmctld.pid"))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: burst_test.py NVLPLACE_BINARY")
    CLI = sys.argv.pop(1)
    unittest.main()
