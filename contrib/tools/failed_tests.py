#!/usr/bin/env python3
"""Prints the last lines of every failed test's output from a ctest run, after the summary.

contrib/test.sh runs it when ctest fails, so that the end of a CI log (often all a CI page
keeps) names each failure's cause, not only its name. ctest's own --output-on-failure output
stays where it was, in the middle of the stream.

  contrib/tools/failed_tests.py BUILD_DIR [--lines N]
"""
import argparse
import pathlib
import sys


def failed_names(temporary):
    """Test names from LastTestsFailed.log ("684:slurm-24.11.cluster_start")."""
    path = temporary / "LastTestsFailed.log"
    if not path.is_file():
        return []
    return [line.split(":", 1)[1].strip() for line in path.read_text(errors="replace").splitlines()
            if ":" in line]


def outputs(temporary):
    """Each test's output in LastTest.log, by name."""
    path = temporary / "LastTest.log"
    found = {}
    if not path.is_file():
        return found
    name, lines, inside = None, [], False
    for line in path.read_text(errors="replace").splitlines():
        if not inside and "/" in line and " Test: " in line:
            name = line.split(" Test: ", 1)[1].strip()
        elif line == "Output:":
            inside, lines = True, []
        elif inside and line == "<end of output>":
            inside = False
            if name is not None:
                found[name] = lines[1:] if lines and set(lines[0]) == {"-"} else lines
        elif inside:
            lines.append(line)
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build_dir", type=pathlib.Path)
    parser.add_argument("--lines", type=int, default=40)
    args = parser.parse_args()
    temporary = args.build_dir / "Testing" / "Temporary"
    names = failed_names(temporary)
    if not names:
        return 0
    by_name = outputs(temporary)
    print(f"\n=== the end of each failed test's output ({len(names)} failed or not run) ===")
    not_run = [name for name in names if name not in by_name]
    for name in names:
        lines = by_name.get(name)
        if lines is None:
            continue
        print(f"--- {name} (last {min(len(lines), args.lines)} of {len(lines)} lines):")
        for line in lines[-args.lines:]:
            print(f"  {line}")
    if not_run:
        print(f"--- not run (a fixture they need failed, or ctest stopped): {' '.join(not_run)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
