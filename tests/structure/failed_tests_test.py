#!/usr/bin/env python3
"""contrib/tools/failed_tests.py on a hand-written ctest log: the end of a CI run names each
failed test's output, and the tests that a failed fixture kept from running."""
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
LOG = """Start testing: Nov 25 02:09 UTC
----------------------------------------------------------
684/719 Testing: slurm-24.11.cluster_start
684/719 Test: slurm-24.11.cluster_start
Command: "/x/tests/slurm/cluster_start.sh"
Directory: /x/build/tests/slurm
"slurm-24.11.cluster_start" start time: Nov 25 02:09 UTC
Output:
----------------------------------------------------------
line 1
cluster: slurmctld stopped at start: fatal: Unable to bind listen port (23700)
FAIL cluster_start: cannot start the cluster with nvlplace
<end of output>
Test time =   4.10 sec
----------------------------------------------------------
Test Failed.
"slurm-24.11.cluster_start" end time: Nov 25 02:09 UTC
685/719 Testing: unit.passes
685/719 Test: unit.passes
Output:
----------------------------------------------------------
passing output
<end of output>
"""


def run(temporary, *args):
    return subprocess.run([sys.executable, str(ROOT / "contrib/tools/failed_tests.py"),
                           str(temporary.parents[1]), *args],
                          capture_output=True, text=True, check=True).stdout


def main():
    with tempfile.TemporaryDirectory() as build:
        temporary = pathlib.Path(build) / "Testing" / "Temporary"
        temporary.mkdir(parents=True)
        (temporary / "LastTest.log").write_text(LOG)
        assert run(temporary) == "", "no LastTestsFailed.log: nothing to say"
        (temporary / "LastTestsFailed.log").write_text(
            "684:slurm-24.11.cluster_start\n686:slurm-24.11.tp_island\n")
        out = run(temporary, "--lines", "2")
        assert "--- slurm-24.11.cluster_start (last 2 of 3 lines):" in out, out
        assert "fatal: Unable to bind listen port (23700)" in out, out
        assert "FAIL cluster_start" in out, out
        assert "line 1" not in out, out
        assert "passing output" not in out, out
        assert out.rstrip().endswith("ctest stopped): slurm-24.11.tp_island"), out
    print("failed_tests: ok")


if __name__ == "__main__":
    main()
