#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Every script in contrib/ (each .py and .sh, found here, not listed) answers -h and --help
with its usage on stdout and exit 0, and a wrong option with exit 2 and its usage on stderr,
before it does anything: it runs in an empty directory with every NVLPLACE_* path pointing
into it and with stand-ins for the commands that build, install or talk to Slurm first on
PATH; afterwards that directory must still be empty and no stand-in called (issue 27,
point 5)."""
import os
import pathlib
import shlex
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
# Sourced by other scripts, never run: no arguments of their own.
LIBRARIES = {"contrib/cluster/common.sh"}
# Commands a script may run once its arguments are parsed: never before.
STAND_INS = ["apt-get", "cmake", "dpkg-source", "flock", "make", "munged", "sbatch",
             "scancel", "scontrol", "squeue", "srun", "sudo"]
BOGUS = "--no-such-option"


def scripts():
    found = sorted(p for p in (ROOT / "contrib").rglob("*")
                   if p.suffix in (".py", ".sh") and p.is_file())
    return [p for p in found if str(p.relative_to(ROOT)) not in LIBRARIES]


def command(path):
    """The script's interpreter line and the script: ["/usr/bin/env", "python3", path]."""
    first = path.read_text(encoding="utf-8").split("\n", 1)[0]
    if not first.startswith("#!"):
        return None
    return shlex.split(first[2:]) + [str(path)]


def main():
    failures = []
    found = scripts()
    if len(found) < 20:  # contrib/ had 26 scripts when this test was written
        failures.append(f"only {len(found)} scripts found under {ROOT / 'contrib'}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        work, stubs = tmp / "work", tmp / "bin"
        work.mkdir()
        stubs.mkdir()
        calls = tmp / "calls"
        for name in STAND_INS:
            stub = stubs / name
            stub.write_text(f'#!/bin/sh\necho "{name} $*" >>"{calls}"\nexit 1\n')
            stub.chmod(0o755)
        env = dict(os.environ, PATH=f"{stubs}:{os.environ['PATH']}")
        for var in ("NVLPLACE_CLUSTER_DIR", "NVLPLACE_BUILD_DIR", "NVLPLACE_OUT",
                    "NVLPLACE_SLURM_CACHE", "NVLPLACE_SLURM_TARBALLS", "NVLPLACE_SLURM_PREFIX",
                    "NVLPLACE_PLUGIN_LIB"):
            env[var] = str(work / var.lower())
        for path in found:
            name = path.relative_to(ROOT)
            argv = command(path)
            if argv is None:
                failures.append(f"{name}: no #! line (a sourced file belongs in LIBRARIES)")
                continue
            for args, want in (["--help"], 0), (["-h"], 0), ([BOGUS], 2):
                try:
                    r = subprocess.run(argv + args, cwd=work, env=env, capture_output=True,
                                       text=True, timeout=60, check=False)
                except subprocess.TimeoutExpired:
                    failures.append(f"{name} {args[0]}: still running after 60 s")
                    continue
                usage_in = r.stdout if want == 0 else r.stderr
                if r.returncode != want:
                    failures.append(f"{name} {args[0]}: exit {r.returncode}, want {want}\n"
                                    f"  stdout: {r.stdout[:300]!r}\n  stderr: {r.stderr[:300]!r}")
                elif "usage" not in usage_in.lower():
                    where = "stdout" if want == 0 else "stderr"
                    failures.append(f"{name} {args[0]}: no usage on {where}: {usage_in[:300]!r}")
                elif want == 2 and r.stdout:
                    failures.append(f"{name} {args[0]}: wrote on stdout: {r.stdout[:300]!r}")
        if calls.exists():
            failures.append("commands run before the arguments were parsed:\n" +
                            calls.read_text(encoding="utf-8"))
        left = sorted(str(p.relative_to(work)) for p in work.rglob("*"))
        if left:
            failures.append(f"files made before the arguments were parsed: {left}")
    for f in failures:
        print(f"FAIL {f}")
    print(f"{len(found)} scripts, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
