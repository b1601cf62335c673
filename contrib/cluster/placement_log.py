#!/usr/bin/env python3
"""The one reader of nvlplace's placement line: what the select plugin says of a job at each
step, in slurmctld's log ("nvlplace: JobId=12 v=1 event=placed asked_gpus=4 ...", Slurm's
%pJ naming the job) and in the job's SystemComment ("nvlplace: v=1 event=placed ...").
The format is plugin/README.md's "The placement line"; its one writer is
plugin/placement_line.cc, whose examples (tests/fixtures/plugin/placement_lines.txt) this
reader is tested on (tests/slurm/placement_log_test.py).

As a module: parse(line) -> Record or None, read(lines) -> Records, parse_fields(text) ->
{key: value}, gpu_words(value) -> ["node03:4-7", ...].

As a command, for the shell scripts:

  placement_log.py (--log FILE | --comment TEXT) [--job ID] [--field KEY]... [--count]
                   [CONDITION...]

reads the placement lines of a log (FILE, or - for stdin) or one SystemComment, keeps those
of job ID (what %pJ prints after JobId=, or any job id in it: 12, or 5 and 84 of 5_7(84);
"*": any line that names a job) that meet every CONDITION: KEY=VALUE (the field is VALUE) or KEY~TEXT (the field holds TEXT;
KEY~ alone: the field is there). It prints the last such line's fields, one KEY=VALUE a line
(values unquoted), or only the values of the --field keys, one a line; with --count, the
number of such lines. Exit 0 when a line matched (always with --count), 1 when none did or a
--field is not in it, 2 on a bad argument or a line this reader cannot read (a version it
does not know, a broken quote).
"""

import argparse
import collections
import re
import sys

VERSION = 1  # the highest v= this reader knows (placement_line.h, kPlacementLineVersion)

# "nvlplace: " then, in the log, "JobId=<%pJ> ", then the fields, "v=" first.
_START = re.compile(r"nvlplace: (?:JobId=(\S+) )?(?=v=)")
_KEY = re.compile(r"([a-z][a-z0-9_]*)=")
_LOG_TIME = re.compile(r"^\[([^\]]+)\]")
_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r"}

Record = collections.namedtuple("Record", "job fields time text")
Record.__doc__ = """A placement line: the job as %pJ names it after JobId= (None in a
SystemComment), its fields {key: value} (values unquoted), the log line's time stamp (None
if none) and the line itself."""


class LineError(ValueError):
    """A placement line this reader cannot read."""


def _quoted(text, i):
    """The value of the quoted string at text[i] == '"', and the index after it."""
    out = []
    i += 1
    while i < len(text):
        c = text[i]
        if c == '"':
            return "".join(out), i + 1
        if c == "\\":
            e = text[i + 1:i + 2]
            if e in _ESCAPES:
                out.append(_ESCAPES[e])
                i += 2
                continue
            if e == "x" and re.fullmatch(r"[0-9a-f]{2}", text[i + 2:i + 4]):
                out.append(chr(int(text[i + 2:i + 4], 16)))
                i += 4
                continue
            raise LineError(f"bad escape \\{e} at column {i + 1}")
        out.append(c)
        i += 1
    raise LineError("a quoted value never ends")


def parse_fields(text):
    """{key: value} of "v=1 event=placed gpus=\"node2:0-7 node3:0-7\" ...": bare values run
    to the next space, quoted ones to their closing quote. The first key must be v, of a
    version this reader knows."""
    fields = {}
    i, n = 0, len(text)
    while i < n:
        if text[i] == " ":
            i += 1
            continue
        m = _KEY.match(text, i)
        if not m:
            raise LineError(f"no key=value at column {i + 1}: {text[i:i + 30]!r}")
        key, i = m.group(1), m.end()
        if i < n and text[i] == '"':
            value, i = _quoted(text, i)
            if i < n and text[i] != " ":
                raise LineError(f"no space after the quoted value of {key}")
        else:
            end = text.find(" ", i)
            end = n if end < 0 else end
            value, i = text[i:end], end
        if key in fields:
            raise LineError(f"{key} twice")
        if not fields and key != "v":
            raise LineError(f"the first field is {key}, not v")
        fields[key] = value
    if not fields.get("v", "").isdigit() or int(fields["v"]) < 1:
        raise LineError(f"v={fields.get('v')!r} is no version")
    if int(fields["v"]) > VERSION:
        raise LineError(f"placement line version {fields['v']} is newer than this reader's "
                        f"({VERSION}): update contrib/cluster/placement_log.py")
    return fields


def parse(line):
    """The Record of a log line or a SystemComment, or None when it holds no placement line
    (any other line of slurmctld's, or of nvlplace's). LineError for a placement line this
    reader cannot read."""
    line = line.rstrip("\n")
    m = _START.search(line)
    if not m:
        return None
    t = _LOG_TIME.match(line)
    return Record(m.group(1), parse_fields(line[m.end():]), t.group(1) if t else None, line)


def read(lines):
    """The Records of an iterable of lines (a log file), in order."""
    for line in lines:
        r = parse(line)
        if r:
            yield r


def gpu_words(value):
    """["node2:0-7", "node3:0-7"] of a GPU field (gpus, slurm_gpus, cons_tres_alone); [] for
    "none". A node without GPU indexes is "node06:no-gpu-index"."""
    return [] if value in ("", "none") else value.split(" ")


def job_ids(job):
    """What --job matches of a %pJ text: the text itself and each job id in it: 12 of "12";
    5 (the array's) and 84 (the task's own) of "5_7(84)"; 4 of the het job "4+0(4)"."""
    if not job:
        return set()
    first = re.match(r"\d+", job)
    return {job, *([first.group(0)] if first else []), *re.findall(r"\((\d+)\)", job)}


def condition(text):
    """(key, op, value) of KEY=VALUE or KEY~TEXT."""
    m = re.fullmatch(r"([a-z][a-z0-9_]*)([=~])(.*)", text, re.S)
    if not m:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE or KEY~TEXT")
    return m.groups()


def matches(record, job, conditions):
    if job == "*":
        if record.job is None:
            return False
    elif job is not None and job not in job_ids(record.job):
        return False
    for key, op, value in conditions:
        have = record.fields.get(key)
        if have is None or (op == "=" and have != value) or (op == "~" and value not in have):
            return False
    return True


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--log", help="slurmctld's log (- for stdin)")
    source.add_argument("--comment", help="a job's SystemComment")
    p.add_argument("--job", help="only lines of this job (*: of any job)")
    p.add_argument("--field", action="append", default=[], help="print this field's value")
    p.add_argument("--count", action="store_true", help="print how many lines match")
    p.add_argument("conditions", nargs="*", type=condition, metavar="CONDITION")
    a = p.parse_args(argv)
    try:
        if a.comment is not None:
            records = [r for r in [parse(a.comment)] if r]
        elif a.log == "-":
            records = list(read(sys.stdin))
        else:
            with open(a.log, errors="replace") as f:
                records = list(read(f))
    except (LineError, OSError) as e:
        print(f"placement_log: {e}", file=sys.stderr)
        return 2
    hits = [r for r in records if matches(r, a.job, a.conditions)]
    if a.count:
        print(len(hits))
        return 0
    if not hits:
        return 1
    fields = hits[-1].fields
    if not a.field:
        for key, value in fields.items():
            print(f"{key}={value}")
        return 0
    missing = [k for k in a.field if k not in fields]
    for key in a.field:
        print(fields.get(key, ""))
    if missing:
        print(f"placement_log: no {', '.join(missing)} in {hits[-1].text}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
