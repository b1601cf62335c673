#!/usr/bin/env python3
"""The burst's checker (contrib/cluster/burst.py) on slurmctld logs written by hand: which
allocation each started job is compared with. A pairing that is too loose reports a silent
difference that is not there (slurm.faults failed that way after a SIGKILL); one that is too
tight stops checking jobs. Runs without a cluster (ctest label unit)."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "contrib", "cluster"))
import burst  # noqa: E402


def placed(t, job, layout):
    return (f"[2026-11-24T00:53:{t}] nvlplace: JobId={job} placed 2 GPUs (TP=2 PP=1 DP=1, "
            f"nvl=strict) -> {layout} domains=node01:nvl1 score=99.6 origin=\"x\"; slurm gpus "
            f"{layout}; candidate 1 of 2; relaxations: none")


def backfill_started(t, job):
    return f"[2026-11-24T00:53:{t}] sched/backfill: _start_job: Started JobId={job} in gpu on n"


def ctld_started(t):
    return f"[2026-11-24T00:53:{t}] slurmctld version 22.05.8 started on cluster nvlplace"


class DecisionsTest(unittest.TestCase):
    def decisions(self, *lines):
        with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
            f.write("\n".join(lines) + "\n")
        try:
            return burst.decisions(f.name)
        finally:
            os.unlink(f.name)

    def test_a_start_pairs_with_the_placement_just_before_it(self):
        out, unpaired = self.decisions(placed("53.019", "5_7(5)", "node01:2-3"),
                                       backfill_started("53.019", "5_7(84)"))
        self.assertEqual(out[84][0], {"node01": [2, 3]})
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
        _, unpaired = self.decisions(placed("20.900", "3_1(3)", "node02:0-1"))
        job = {"array": (3, "1"), "start": "2026-11-24T00:53:21"}
        self.assertEqual(burst.at_start(job, unpaired)[0], {"node02": [0, 1]})
        late = {"array": (3, "1"), "start": "2026-11-24T00:53:27"}
        self.assertIsNone(burst.at_start(late, unpaired))
        other = {"array": (3, "2"), "start": "2026-11-24T00:53:21"}
        self.assertIsNone(burst.at_start(other, unpaired))


if __name__ == "__main__":
    unittest.main()
