#!/usr/bin/env python3
"""A burst of short, mixed GPU jobs on the local cluster (contrib/cluster/start.sh), with
faults on the way if asked, checking what the plugin promises against what Slurm did:

- no GPU index is held by two running jobs at any sampled moment (`scontrol -d show job`);
- every job is accounted for at the end: completed (or cancelled/failed), or pending with
  a reason; slurmctld is up;
- every job the plugin placed runs on exactly the nodes and GPU indexes of its log line
  (each job records its own allocation from `scontrol -d show job` while it runs), unless
  the line names the difference (a relaxation);
- no strict TP group spans two NVLink domains (`nvlplace check tp-groups`).

Faults (--faults): slurmctld killed with SIGKILL and restarted (after the submitted jobs
were saved), a broken nvlplace.yaml and then a deleted topology file applied with
`scontrol reconfigure` (each repaired afterwards), and a slurmd restarted.

Failover (--failover, a cluster started with `start.sh --backup`): the primary slurmctld
killed with SIGKILL a third of the way in, the backup taking over, and the primary started
again two thirds of the way in, taking back control.

Prints a summary and writes it as JSON (--report). Exit 0 when every check holds, 1 when
one fails, 2 on bad arguments or a cluster that is not running.
"""

import argparse
import collections
import concurrent.futures
import datetime
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

import placement_log  # the placement line's one reader, beside this file

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(cmd, check=True, **kw):
    return subprocess.run(cmd, check=check, capture_output=True, text=True, **kw)


class Cluster:
    """The running local cluster: paths from contrib/cluster/common.sh's conventions."""

    def __init__(self, run_dir, cli):
        self.run = run_dir
        self.conf = os.path.join(run_dir, "etc", "slurm.conf")
        self.log = os.path.join(run_dir, "log", "slurmctld.log")
        self.yaml = os.path.join(run_dir, "etc", "nvlplace.yaml")
        self.cli = cli
        # The release's daemons (NVLPLACE_SLURM_PREFIX, as common.sh; else Debian's).
        prefix = os.environ.get("NVLPLACE_SLURM_PREFIX")
        self.sbin = os.path.join(prefix, "sbin") if prefix else "/usr/sbin"
        os.environ["SLURM_CONF"] = self.conf
        # From 23.11 on `scontrol reconfigure` starts a new slurmctld process.
        version = run([os.path.join(self.sbin, "slurmctld"), "-V"]).stdout.split()[1]
        release = tuple(int(x) for x in version.split(".")[:2])
        self.reconfigure_restarts = release >= (23, 11)
        # After 22.05 a backup in control answers the primary's REQUEST_CONTROL only after
        # 29 s and before it has saved its state (measured on 24.11.7 and 26.05.3, stock
        # cons_tres too; see take_back). 23.02 and 23.11 were never run here: treated alike.
        self.hand_back_saves_late = release > (22, 5)

    def up(self):
        r = run(["scontrol", "ping"], check=False)
        return "is UP" in r.stdout

    def primary_up(self):
        r = run(["scontrol", "ping"], check=False)
        return "(primary)" in r.stdout and re.search(r"\(primary\) at \S+ is UP", r.stdout)

    def serving(self):
        """A controller in control answers (a backup in standby refuses squeue)."""
        return run(["squeue", "-h", "-o", "%A"], check=False).returncode == 0

    def wait(self, what, pred, timeout):
        deadline = time.monotonic() + timeout
        while not pred():
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out after {timeout} s waiting for {what}")
            time.sleep(0.1)

    def reconfigure(self):
        """`scontrol reconfigure`, returning once the slurmctld that answers owns its pid file
        (contrib/cluster/common.sh's nvl_reconfigure says why: from 23.11 on the new process
        writes its pid only after the old one has exited)."""
        old = self.pid("slurmctld.pid")
        run(["scontrol", "reconfigure"])
        if self.reconfigure_restarts:
            self.wait("the reconfigured slurmctld to write its pid file",
                      lambda: self.pid("slurmctld.pid") not in (None, old), 30)

    def controller_pid(self):
        """The pid of the slurmctld in control, from its pid file. A file that names no live
        process fails with what the file and the process table say: a controller that died on
        its own, not by the burst's hand, is a finding, not a fault of the burst."""
        pid = self.pid("slurmctld.pid")
        if pid is not None:
            return pid
        path = os.path.join(self.run, "run", "slurmctld.pid")
        try:
            with open(path) as f:
                text = repr(f.read())
        except OSError as e:
            text = f"unreadable ({e.strerror})"
        ping = run(["scontrol", "ping"], check=False).stdout.strip().replace("\n", "; ")
        raise RuntimeError(f"{path} names no live slurmctld: it holds {text}; slurmctld "
                           f"processes of this cluster: {self.slurmctld_processes() or 'none'}; "
                           f"scontrol ping: {ping or 'no answer'}")

    def slurmctld_processes(self):
        """pid:state of every process running this cluster's slurmctld binary with its
        slurm.conf (slurmscriptd renames itself, so it is not counted)."""
        found = []
        binary = os.path.join(self.sbin, "slurmctld")
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open(f"/proc/{d}/cmdline", "rb") as f:
                    argv = f.read().split(b"\0")
            except OSError:
                continue
            state = _proc_state(int(d))
            if state and argv[0].decode(errors="replace") == binary and self.conf.encode() in argv:
                found.append(f"{d}:{state}")
        return ", ".join(found)

    def pid(self, name, pid_dir="run"):
        """The pid on the first line of a pid file in pid_dir (run-backup: the backup
        controller's) if that process is alive. Only the first line: a reconfigured
        slurmctld (23.11+) writes its pid over the old one without truncating the file, so
        once pids wrap around (pid_max 32768 here) a shorter pid leaves the end of the
        longer one behind (after pid 32764, pid 706 left the file with the lines 706 and 4
        on 24.11.7: the cause of two CI failures of the faults test)."""
        try:
            with open(os.path.join(self.run, pid_dir, name)) as f:
                pid = int(f.readline())
            return pid if _alive(pid) else None
        except (OSError, ValueError):
            return None

    def topology(self):
        """The topology file nvlplace.yaml names."""
        with open(self.yaml) as f:
            for line in f:
                m = re.match(r"\s*topology:\s*(\S+)", line)
                if m:
                    return m.group(1)
        raise RuntimeError(f"{self.yaml} names no topology")


# ---- the job mix ----------------------------------------------------------------------

def job_mix(largest_domain):
    """(weight, name, sbatch arguments, tp, strict) for each kind of job."""
    kinds = [
        (3, "gpus=1", ["--gpus=1"], 1, False),
        (3, "gpus=2", ["--gpus=2"], 1, False),
        (2, "gpus=4", ["--gpus=4"], 1, False),
        (2, "gpus=8", ["--gpus=8"], 1, False),
        (2, "gpus=2 tp=2", ["--gpus=2", "--nvl-tp=2"], 2, True),
        (3, "gpus=4 tp=4", ["--gpus=4", "--nvl-tp=4"], 4, True),
        (2, "gpus=8 tp=4", ["--gpus=8", "--nvl-tp=4"], 4, True),
        (2, "gpus=8 tp=4 prefer", ["--gpus=8", "--nvl-tp=4", "--nvl=prefer"], 4, False),
        (2, "N2 gpus-per-node=4 tp=4", ["-N2", "--gpus-per-node=4", "--nvl-tp=4"], 4, True),
    ]
    if largest_domain >= 8:
        kinds += [
            (1, "gpus=8 tp=8", ["--gpus=8", "--nvl-tp=8"], 8, True),
            (1, "gpus=16 tp=8", ["--gpus=16", "--nvl-tp=8"], 8, True),
        ]
    return [k for k in kinds if k[3] <= largest_domain]


def largest_domain(cli, topology):
    shown = json.loads(run([cli, "show", topology, "--format", "json"]).stdout)
    return max(d["gpus"] for d in shown["nvlink_domains_by_size"])


# ---- what slurmctld says ------------------------------------------------------------------

ALLOC_RE = re.compile(r"Nodes=(\S+) CPU_IDs=\S+ Mem=\S+ GRES=\S*?\((IDX|CNT):([^)]*)\)")


def batch(cli, args, lines):
    """The answer to each line, from one `nvlplace check ARGS --batch -` (hostlists, index
    lists and GPU words are the CLI's to read: one parser, the engine's)."""
    if not lines:
        return []
    r = run([cli, "check", *args, "--batch", "-"], check=False,
            input="".join(line + "\n" for line in lines))
    if r.returncode != 0:
        raise RuntimeError(f"nvlplace check {' '.join(args)} failed: {r.stderr.strip()}")
    return r.stdout.split("\n")[:len(lines)]


def expand(cli, args, lines):
    """Each line's items expanded by `nvlplace check ARGS`: a list of words per line."""
    return [out.split() for out in batch(cli, args, lines)]


def recorded(cli, allocs_dir):
    """parse_jobs of what each job wrote of itself into allocs_dir/<its job id> when it
    started. Only the job's own record counts: `show job` of the id an array's first task
    runs under lists every task of the array, most not started yet, and such a record
    without GPUs must not replace the one that task wrote."""
    lines = []
    for name in sorted(os.listdir(allocs_dir)):
        own = re.compile(rf"\bJobId={re.escape(name)}\b")
        with open(os.path.join(allocs_dir, name)) as f:
            lines += [line for line in f.read().splitlines() if own.search(line)]
    return parse_jobs(cli, "\n".join(lines))


def gpu_layout(words):
    """{node: [index]} of "node:index" words, as `nvlplace check gpus` prints them."""
    layout = {}
    for w in words:
        node, _, idx = w.rpartition(":")
        layout.setdefault(node, []).append(int(idx))
    return {n: sorted(idx) for n, idx in layout.items()}


def parse_jobs(cli, text):
    """{job_id: {'state', 'reason', 'gpus': {node: [idx]}, 'indexless': [node]}} from
    `scontrol -d -o show job`. GPUs allocated without indexes ("gpu(CNT:2)": slurmctld had
    no indexes for the node) count as a node with no index."""
    jobs, allocs = {}, []
    for line in text.splitlines():
        m = re.search(r"\bJobId=(\d+)", line)
        if not m:
            continue
        array = re.search(r"ArrayJobId=(\d+) ArrayTaskId=(\S+)", line)
        start = re.search(r"\bStartTime=(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)", line)
        job = {"state": re.search(r"JobState=(\S+)", line).group(1),
               "start": start.group(1) if start else None,
               "array": (int(array.group(1)), array.group(2)) if array else None,
               "reason": (re.search(r"Reason=(\S+)", line) or [None, ""])[1],
               "gpus": {}, "indexless": []}
        allocs += [(job, kind, nodes, idx) for nodes, kind, idx in ALLOC_RE.findall(line)]
        jobs[int(m.group(1))] = job
    # "gpu(IDX:)": a node of the job on which it holds no GPU (an empty index list is no
    # GPU word for `check gpus`: its nodes are expanded as a hostlist instead).
    def numbered(kind, idx):
        return kind == "IDX" and idx.strip() != ""
    gpus = iter(expand(cli, ["gpus"], [f"{n}:{i}" for _, k, n, i in allocs if numbered(k, i)]))
    hosts = iter(expand(cli, ["hostlist", "--expand"],
                        [n for _, k, n, i in allocs if not numbered(k, i)]))
    for job, kind, _, idx in allocs:
        if numbered(kind, idx):
            for n, got in gpu_layout(next(gpus)).items():
                job["gpus"][n] = sorted(job["gpus"].get(n, []) + got)
            continue
        for n in next(hosts):
            if kind == "CNT":
                job["indexless"].append(n)
            job["gpus"].setdefault(n, [])
    return jobs


# %pJ prints "JobId=127", or for an array task "JobId=123_4(N)", N being the array's record
# while the task is still part of it and the task's own job id once it started.
JOB = r"JobId=(\d+)(?:_(\d+)\((\d+)\))?"
# The placement lines of a job that starts, and of those the ones that name a difference
# between the decision and what Slurm allocates (the rest must match the allocation).
STARTS = ("placed", "differs", "placed-by-cons_tres")
NAMED_DIFFERENCE = ("differs", "placed-by-cons_tres")
STARTED_RE = re.compile(r"(?:sched: Allocate|sched/backfill: _start_job: Started|"
                        r"_slurm_rpc_allocate_resources) " + JOB)


LOG_TIME_RE = re.compile(r"^\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?)\]")
CTLD_STARTED_RE = re.compile(r"slurmctld version \S+ started")
HELD_DRIFT = "differ from Slurm's GRES"  # nvl_ctld.c's line when its held view drifted
# A slurmd that died during the burst is named with the end of its log. One cause is known
# and Slurm's: before 24.11, stepd_connect() closes its socket when the step daemon goes away
# between connect and reply but returns the closed descriptor; slurmd logs this line, then
# closes the number again, and another thread's socket of that number (glibc's netlink socket
# in getaddrinfo) aborts the process ("Unexpected error 9 on netlink descriptor"; seen once,
# 22.05, 2026-12-06, a job's completion racing its TERMINATE_JOB). The jobs on that node
# still end (their step daemons report to slurmctld), so the checks above hold; any other
# death is a problem.
SLURMD_DOUBLE_CLOSE = "stepd_signal_container: invalid protocol_version 0"
# How long after its placement line slurmctld may log a job's start or stamp its StartTime:
# both happen in one job_test under slurmctld's node write lock, well within a second even on
# a loaded machine.
START_AFTER_PLACED_S = 5


def log_time(text):
    """A log line's or a StartTime's timestamp as a datetime, or None."""
    for fmt in ("%Y-%m-%dT%H:%M:%S.%f", "%Y-%m-%dT%H:%M:%S"):
        try:
            return datetime.datetime.strptime(text, fmt)
        except (TypeError, ValueError):
            pass
    return None


def soon_after(placed_at, started_at):
    """started_at (datetime) within START_AFTER_PLACED_S after placed_at (whole seconds: a
    StartTime has no fraction)."""
    if not placed_at or not started_at:
        return False
    gap = (started_at - placed_at.replace(microsecond=0)).total_seconds()
    return 0 <= gap <= START_AFTER_PLACED_S


def layouts(cli, texts):
    """{text: {node: [idx]}} for the GPU fields of placement lines ("node01:0-3 node02:0-1";
    "node03:no-gpu-index" for a node without GPU indexes)."""
    texts = sorted(set(texts))
    numbered = [" ".join(w for w in t.split() if not w.endswith(":no-gpu-index")) for t in texts]
    out = {}
    for text, words in zip(texts, expand(cli, ["gpus"], numbered)):
        out[text] = {w.partition(":")[0]: [] for w in text.split() if w.endswith(":no-gpu-index")}
        out[text].update(gpu_layout(words))
    return out


Decision = collections.namedtuple("Decision", "when key until layout record")
Decision.__doc__ = """A placement line of the plugin: its time, the job as the line names it
((job or array id, task)), the time of the next slurmctld start after it (None if none), the
layout {node: [idx]} (the decision's GPUs; what Slurm allocates when the line names a
difference) and the line (placement_log.Record)."""


Span = collections.namedtuple("Span", "domains nodes tier locality")
Span.__doc__ = """How far a job's GPUs spread, as `nvlplace check span` says: NVLink domains,
nodes, the highest tier crossed ("node", a tier, "disconnected"), and the engine's locality
rank (lower is more local; compared, never decoded)."""


def decisions(log_path, cli):
    """({job id: Decision}, {(job or array id, task): Decision}): each start of a job
    (slurmctld's "Allocate" or "Started" line) paired with the plugin's placement line for
    that job just before it. A job whose last start has no such line (placed while nvlplace
    had no configuration, or started again after a slurmctld restart lost an earlier start)
    has no entry. A placement pairs only with a start logged within START_AFTER_PLACED_S and
    before any slurmctld restart: a slurmctld SIGKILLed between the two never logs that
    start, and the job may start later without nvlplace (while nvlplace.yaml is broken). The
    second map holds the placement lines no start line followed: 26.05's sched/backfill logs
    no start line (only under DebugFlags=HetJob). Neither map is the last word: a job id a
    SIGKILLed slurmctld handed out but never saved is handed out again to another job after
    the restart, which 26.05's backfill may start without a line. decision_for checks each
    pairing against the job's own record."""
    out, pending, restarts = {}, {}, []
    with open(log_path, errors="replace") as f:
        for line in f:
            t = LOG_TIME_RE.search(line)
            when = log_time(t.group(1)) if t else None
            r = placement_log.parse(line)
            if r:
                m = re.fullmatch(JOB, f"JobId={r.job}") if r.job else None
                event = r.fields["event"]
                if m and event in STARTS:
                    key = (m.group(1), m.group(2))
                    gpus = r.fields["gpus" if event == "placed" else "slurm_gpus"]
                    pending[key] = (when, key, len(restarts), gpus, r)
                continue
            if CTLD_STARTED_RE.search(line):
                pending.clear()
                restarts.append(when)
                continue
            m = STARTED_RE.search(line)
            if m:
                placed = pending.pop((m.group(1), m.group(2)), None)
                job = int(m.group(3) or m.group(1))
                if placed and soon_after(placed[0], when):
                    out[job] = placed
                else:
                    # Started again without a decision (slurmctld was killed before it saved
                    # the first start, and placed it again while nvlplace had no usable
                    # configuration): the earlier decision no longer describes the job.
                    out.pop(job, None)
    # The layouts, read at once.
    read = layouts(cli, [p[3] for p in out.values()] + [p[3] for p in pending.values()])

    def decision(when, key, incarnation, text, record):
        until = restarts[incarnation] if incarnation < len(restarts) else None
        return Decision(when, key, until, read[text], record)
    return ({job: decision(*p) for job, p in out.items()},
            {key: decision(*p) for key, p in pending.items()})


def decision_for(jid, job, placed, unpaired):
    """The placement (layout, placement_log.Record) that decided the allocation job jid recorded of itself
    when it started, or None: the line must name this job (its array and task; a job id a
    SIGKILLed slurmctld never saved goes to another job after the restart), the job's
    StartTime must follow it within START_AFTER_PLACED_S, and no slurmctld may have started
    in between (StartTime has whole seconds: a start in the restart's second does not pair)."""
    name = (str(job["array"][0]), job["array"][1]) if job["array"] else (str(jid), None)
    started = log_time(job["start"])
    for d in (placed.get(jid), unpaired.get(name)):
        if (d and d.key == name and soon_after(d.when, started)
                and (d.until is None or started + datetime.timedelta(seconds=1) <= d.until)):
            return d.layout, d.record
    return None


# ---- the burst ------------------------------------------------------------------------------

class Burst:
    def __init__(self, args, cluster):
        self.a = args
        self.c = cluster
        self.rng = random.Random(args.seed)
        topo = cluster.topology()
        self.mix = job_mix(largest_domain(cluster.cli, topo))
        shown = json.loads(run([cluster.cli, "show", topo, "--format", "json"]).stdout)
        self.leaf_tier = shown["tiers"][0]
        self.tier_rank = {t: i for i, t in enumerate(["node", *shown["tiers"], "disconnected"])}
        self.arrays = {}  # array job id -> kind
        self.refused = collections.Counter()
        self.submit_errors = []
        self.lock = threading.Lock()
        self.last_submit = 0.0
        self.done_submitting = threading.Event()
        self.samples = 0
        self.sampler_error = None
        self.double = []  # (time, gpu, jobs)
        self.max_running = 0
        self.faults = []
        self.allocs_dir = os.path.join(cluster.run, "tmp", "burst-allocs")
        shutil.rmtree(self.allocs_dir, ignore_errors=True)
        os.makedirs(self.allocs_dir)

    def pick(self):
        total = sum(k[0] for k in self.mix)
        x = self.rng.uniform(0, total)
        for k in self.mix:
            x -= k[0]
            if x <= 0:
                return k
        return self.mix[-1]

    def submit(self, n):
        """One job array of --array-size tasks of one kind (sbatch costs more than a task)."""
        kind = self.pick()
        d = self.a.durations
        # Each task writes its own allocation while it runs (Slurm's view, complete for every
        # job that started), then sleeps one of the durations in turn (POSIX sh: --wrap).
        pick = " ".join(f"{i}) s={x};;" for i, x in enumerate(d))
        script = (f"scontrol -d -o show job $SLURM_JOB_ID > {self.allocs_dir}/$SLURM_JOB_ID; "
                  f"case $((SLURM_ARRAY_TASK_ID % {len(d)})) in {pick} esac; sleep $s")
        # A time limit, so that a job whose completion a SIGKILLed slurmctld never saved
        # ends (TIMEOUT) instead of running in slurmctld's view for ever.
        cmd = ["sbatch", "--parsable", "-o", "/dev/null", "-J", f"burst{n}", "--time=1",
               f"--array=0-{self.a.array_size - 1}", *kind[2], "--wrap", script]
        r = run(cmd, check=False)
        with self.lock:
            self.last_submit = time.time()
            if r.returncode == 0:
                self.arrays[int(r.stdout.strip().split(";")[0])] = kind
            elif "Requested node configuration is not available" in r.stderr:
                self.refused[kind[1]] += self.a.array_size
            else:
                self.submit_errors.append(f"{' '.join(cmd)}: {r.stderr.strip()}")

    def sampler(self):
        try:
            while not self.done_submitting.is_set() or self.active():
                r = run(["scontrol", "-d", "-o", "show", "job"], check=False)
                if r.returncode == 0:
                    self.check_sample(parse_jobs(self.c.cli, r.stdout))
                time.sleep(self.a.sample_interval)
        except Exception as e:  # a sampler that stops checks nothing more: a problem
            self.sampler_error = f"{type(e).__name__}: {e}"
            raise

    def active(self):
        r = run(["squeue", "-h", "-t", "R,CG,CF", "-o", "%A"], check=False)
        return r.returncode != 0 or bool(r.stdout.strip())

    def check_sample(self, jobs):
        self.samples += 1
        holders = collections.defaultdict(list)
        running = 0
        for jid, j in jobs.items():
            if j["state"] != "RUNNING":
                continue
            running += 1
            for node, idx in j["gpus"].items():
                for g in idx:
                    holders[(node, g)].append(jid)
        self.max_running = max(self.max_running, running)
        for gpu, js in holders.items():
            if len(js) > 1:
                self.double.append((time.time(), f"{gpu[0]}:{gpu[1]}", js))

    # ---- faults ----

    def fault(self, what, fn):
        t = time.monotonic()
        fn()
        self.faults.append({"fault": what, "seconds": round(time.monotonic() - t, 1)})
        print(f"burst: fault: {what} ({self.faults[-1]['seconds']} s)", flush=True)

    def kill_primary(self):
        """SIGKILL to the primary slurmctld once every submitted job is in the saved state."""
        # No submission is in flight (go() waits for them before a fault).
        with self.lock:
            last = self.last_submit
        state = os.path.join(self.c.run, "state", "job_state")
        self.c.wait("the job state to be saved",
                    lambda: os.path.exists(state) and os.path.getmtime(state) > last, 60)
        pid = self.c.controller_pid()
        os.kill(pid, signal.SIGKILL)
        self.c.wait("slurmctld to die", lambda: not _alive(pid), 30)

    def kill_slurmctld(self):
        self.kill_primary()
        run([os.path.join(self.c.sbin, "slurmctld"), "-f", self.c.conf])
        self.c.wait("slurmctld to answer", self.c.up, 120)

    def fail_over(self):
        self.kill_primary()
        self.takeover_at = os.path.getsize(self.c.log)
        self.c.wait("the backup to take over", self.c.serving, 120)

    def backup_placed(self):
        with open(self.c.log, errors="replace") as f:
            f.seek(self.takeover_at)
            return " event=placed " in f.read()

    def take_back(self):
        # The backup has placed jobs of its own before the primary returns.
        self.c.wait("the backup to place a job", self.backup_placed, 120)
        if self.c.hand_back_saves_late:
            # Slurm 24.11 and 26.05 (stock cons_tres too): the backup's shutdown quiesces its
            # connections, which waits for the REQUEST_CONTROL handler that itself waits for
            # that shutdown, for 29 s; then the handler replies "backup not completely done
            # relinquishing control. Old state possible" and the primary reads job_state
            # while the backup writes it (once no file at all: every job lost). The admin
            # guide's take-back for these releases: stop the backup (SIGTERM: it saves its
            # state and exits), start the primary, start the backup again. Not common.sh's
            # nvl_stop_backup: it falls back to SIGKILL after 20 s, losing the very state
            # this must save; a backup that does not exit is a finding here.
            pid = self.c.pid("slurmctld.pid", "run-backup")
            if pid is None:
                raise RuntimeError("the backup slurmctld in control has no live pid in "
                                   f"{self.c.run}/run-backup/slurmctld.pid")
            os.kill(pid, signal.SIGTERM)
            self.c.wait("the backup to save its state and exit", lambda: not _alive(pid), 60)
        run([os.path.join(self.c.sbin, "slurmctld"), "-f", self.c.conf])
        self.c.wait("the primary to take back control",
                    lambda: self.c.primary_up() and self.c.serving(), 120)
        if self.c.hand_back_saves_late:
            run(["bash", "-c", 'source "$1/contrib/cluster/common.sh" && nvl_start_backup',
                 "bash", ROOT])

    def break_yaml(self):
        with open(self.c.yaml) as f:
            self.good_yaml = f.read()
        with open(self.c.yaml, "w") as f:
            f.write(self.good_yaml + "log_level: chatty\n")
        self.c.reconfigure()

    def restore_yaml(self):
        with open(self.c.yaml, "w") as f:
            f.write(self.good_yaml)
        self.c.reconfigure()

    def delete_topology(self):
        # nvlplace.yaml names a copy in the run directory (set up in main), never the source.
        os.rename(self.topo_copy, self.topo_copy + ".away")
        self.c.reconfigure()

    def restore_topology(self):
        os.rename(self.topo_copy + ".away", self.topo_copy)
        self.c.reconfigure()

    def slurmd_deaths(self):
        """[(node, explained, last log lines)] for each slurmd that is not running."""
        out = []
        for node in self.nodes:
            if self.c.pid(f"slurmd-{node}.pid"):
                continue
            try:
                with open(os.path.join(self.c.run, "log", f"slurmd-{node}.log"),
                          errors="replace") as f:
                    tail = f.readlines()[-8:]
            except OSError:
                tail = []
            out.append((node, any(SLURMD_DOUBLE_CLOSE in l for l in tail),
                        [l.rstrip() for l in tail]))
        return out

    def restart_slurmd(self):
        node = self.rng.choice(self.nodes)
        pid = self.c.pid(f"slurmd-{node}.pid")
        os.kill(pid, signal.SIGTERM)
        self.c.wait(f"slurmd {node} to exit", lambda: not _alive(pid), 30)
        run([os.path.join(self.c.sbin, "slurmd"), "-f", self.c.conf, "-N", node])
        self.c.wait(f"slurmd {node} to be back", lambda: self.c.pid(f"slurmd-{node}.pid"), 30)

    # ---- the run ----

    def go(self):
        with open(os.path.join(self.c.run, "etc", "nodes")) as f:
            self.nodes = f.read().split()
        if self.a.faults:
            self.topo_copy = os.path.join(self.c.run, "etc", "burst-topology.yaml")
            if os.path.abspath(self.c.topology()) != self.topo_copy:
                shutil.copy(self.c.topology(), self.topo_copy)
            with open(self.c.yaml) as f:
                text = f.read()
            with open(self.c.yaml, "w") as f:
                f.write(re.sub(r"(?m)^\s*topology:.*$", f"topology: {self.topo_copy}", text))
            self.c.reconfigure()
        self.log_start = os.path.getsize(self.c.log)
        plan = {}
        submissions = max(1, self.a.jobs // self.a.array_size)
        if self.a.faults:
            n = submissions
            plan = {n // 5: ("slurmctld killed (SIGKILL) and restarted", self.kill_slurmctld),
                    2 * n // 5: ("broken nvlplace.yaml + reconfigure", self.break_yaml),
                    n // 2: ("nvlplace.yaml repaired + reconfigure", self.restore_yaml),
                    3 * n // 5: ("topology file deleted + reconfigure", self.delete_topology),
                    7 * n // 10: ("topology file restored + reconfigure", self.restore_topology),
                    4 * n // 5: ("a slurmd restarted", self.restart_slurmd)}
        elif self.a.failover:
            n = submissions
            plan = {n // 3: ("primary slurmctld killed (SIGKILL), the backup took over",
                             self.fail_over),
                    2 * n // 3: ("primary slurmctld started again, took back control",
                                 self.take_back)}
        t0 = time.monotonic()
        sampler = threading.Thread(target=self.sampler, daemon=True)
        sampler.start()
        with concurrent.futures.ThreadPoolExecutor(self.a.submitters) as pool:
            pending = []
            for i in range(submissions):
                if i in plan:
                    for f in pending:
                        f.result()
                    pending = []
                    self.fault(*plan[i])
                pending.append(pool.submit(self.submit, i))
            for f in pending:
                f.result()
        submitted_s = time.monotonic() - t0
        self.done_submitting.set()
        deadline = time.monotonic() + self.a.timeout
        while self.unfinished() and time.monotonic() < deadline:
            time.sleep(0.5)
        sampler.join(timeout=self.a.timeout)
        self.wall = time.monotonic() - t0
        self.submitted_s = submitted_s

    def unfinished(self):
        r = run(["squeue", "-h", "-t", "R,CG,CF,PD", "-o", "%A %r"], check=False)
        if r.returncode != 0:
            return True
        # Pending jobs that will never run on their own (held: by nvlplace, or by Slurm after
        # a launch failed) do not count.
        return any(not re.search(r"held|Held|BadConstraints", l) for l in r.stdout.splitlines())

    # ---- checks ----

    def report(self):
        cli = self.c.cli
        final = parse_jobs(cli, run(["scontrol", "-d", "-o", "show", "job"]).stdout)
        logged, unpaired = decisions(self.c.log, cli)
        placed = {}  # job id -> (layout, Record) of the placement that decided its allocation
        states = collections.Counter()
        kind_of = {}  # job id -> kind, for every task of the burst's arrays
        seen_tasks = collections.Counter()
        ours = {jid: j for jid, j in final.items() if j["array"] and j["array"][0] in self.arrays}
        # A pending array's record holds its tasks not yet started ("5-9%4"; "%4" the limit).
        lists = [j["array"][1].split("%")[0] for j in ours.values() if j["array"][1][0].isdigit()]
        tasks_left = iter(expand(cli, ["indexes"], lists))
        for jid, j in ours.items():
            array, tasks = j["array"]
            kind_of[jid] = self.arrays[array]
            n = len(next(tasks_left)) if tasks[0].isdigit() else 1
            seen_tasks[array] += n
            key = f"PENDING ({j['reason']})" if j["state"] == "PENDING" else j["state"]
            states[key] += n
        unaccounted = [f"{a}: {self.a.array_size - seen_tasks[a]} tasks"
                       for a in self.arrays if seen_tasks[a] != self.a.array_size]
        # What each job recorded of its own allocation while it ran.
        got, indexless = {}, {}
        for jid, j in recorded(cli, self.allocs_dir).items():
            if j["gpus"]:
                got[jid] = j["gpus"]
                if p := decision_for(jid, j, logged, unpaired):
                    placed[jid] = p
            if j["indexless"]:
                indexless[jid] = j["indexless"]
        equal = differ_named = 0
        silent = []
        by_cons_tres = 0
        strict_checked = 0
        strict_split = []
        topology = self.c.topology()
        for jid, kind in sorted(kind_of.items()):
            if jid not in got:
                continue
            if jid in placed:
                layout, record = placed[jid]
                event = record.fields["event"]
                if event in NAMED_DIFFERENCE:
                    differ_named += 1  # the line names what Slurm allocated and why
                elif layout == got[jid]:
                    equal += 1
                else:
                    silent.append((jid, got[jid], record.text))
                if event == "placed-by-cons_tres":
                    by_cons_tres += 1
            # Every started strict job counts, whoever placed it: a promise holds for all.
            if kind[4] and kind[3] > 1:
                strict_checked += 1
                words = [f"{n}:{','.join(map(str, idx))}" for n, idx in got[jid].items()]
                r = run([self.c.cli, "check", "tp-groups", "--topology", topology, "--tp",
                         str(kind[3]), *words], check=False)
                if r.returncode == 1:
                    strict_split.append((jid, r.stdout.strip()))
                elif r.returncode != 0:
                    strict_split.append((jid, f"check failed: {r.stderr.strip()}"))
        started = len(got)
        not_by_plugin = sum(1 for jid in got if jid not in placed)
        # Every job of the burst asks for GPUs; seen on 22.05 (CI, 2026-11-25): jobs started
        # by plain cons_tres right after the `scontrol reconfigure` that loaded a broken
        # nvlplace.yaml ran with "gpu:0(IDX:)". Counted, with whether nvlplace placed any
        # of them (a failure if it did), until the cause is known.
        without_gpus = [jid for jid, g in got.items() if not any(g.values()) and jid not in indexless]
        quality = self.quality(got, kind_of, topology, placed) if self.a.quality else None
        log_tail = ""
        with open(self.c.log, errors="replace") as f:
            f.seek(self.log_start)
            log_tail = f.read()
        summary = {
            "jobs_submitted": len(self.arrays) * self.a.array_size,
            "arrays_submitted": len(self.arrays),
            "refused_at_submit": dict(self.refused),
            "submit_errors": self.submit_errors[:10],
            "final_states": dict(states),
            "unaccounted": unaccounted[:20],
            "unaccounted_count": len(unaccounted),
            "slurmctld_up": self.c.up(),
            "jobs_started": started,
            "ended_without_recording": sum(1 for jid in kind_of if jid not in got
                                           and final[jid]["state"] != "PENDING"),
            "placed_by_nvlplace": started - not_by_plugin,
            "allocation_equals_decision": equal,
            "differences_named": differ_named,
            "relaxed_to_cons_tres": by_cons_tres,
            "silent_differences": [f"JobId={j}: got {g}; {l}" for j, g, l in silent[:10]],
            "silent_difference_count": len(silent),
            "started_without_nvlplace": not_by_plugin,
            # GPUs without indexes: slurmctld allocated them on a node whose slurmd had not
            # registered since a restart. nvlplace never places there; plain cons_tres may
            # (while nvlplace.yaml is broken).
            "gpus_without_index": len(indexless),
            "gpus_without_index_by_nvlplace": [f"JobId={j}: {','.join(n)}"
                                               for j, n in indexless.items() if j in placed][:10],
            "gpu_jobs_started_without_gpus": len(without_gpus),
            "gpu_jobs_without_gpus_by_nvlplace": [
                f"JobId={jid}" for jid in without_gpus if jid in placed][:10],
            "strict_jobs_checked": strict_checked,
            "strict_tp_groups_split": [f"JobId={j}: {t}" for j, t in strict_split[:10]],
            "strict_split_count": len(strict_split),
            "samples": self.samples,
            "max_running": self.max_running,
            "double_allocations": [f"{g} held by {js}" for _, g, js in self.double[:10]],
            "double_allocation_count": len(self.double),
            "held_lines": sum(r.fields["event"] == "held"
                              for r in placement_log.read(log_tail.splitlines())),
            "config_errors_logged": log_tail.count("error: nvlplace: "),
            # The plugin checks the GPUs it keeps as held by running jobs (for backfill's
            # WILL_RUN) against Slurm's own GRES bitmaps at every use: any difference is a
            # bug in what it is told when a job's resources are allocated and at its fini.
            "held_view_drifts": [l for l in log_tail.splitlines() if HELD_DRIFT in l][:5],
            "faults": self.faults,
            "quality": quality,
            "wall_seconds": round(self.wall, 1),
            "submit_seconds": round(self.submitted_s, 1),
        }
        # slurmctld forgets a finished job MinJobAge seconds after it ends; a longer burst
        # cannot account for its first jobs (nor check their allocations) from scontrol.
        r = run(["scontrol", "show", "config"], check=False)
        m = re.search(r"^MinJobAge\s*=\s*(\d+)", r.stdout, re.M)
        min_job_age = int(m.group(1)) if m else 0
        summary["min_job_age"] = min_job_age
        deaths = self.slurmd_deaths()
        summary["slurmd_deaths"] = [
            {"node": n, "cause": "Slurm's stepd_connect double close (before 24.11)"
             if known else "unknown", "log": tail} for n, known, tail in deaths]
        unknown = [n for n, known, _ in deaths if not known]
        problems = [what for what, bad in [
            (f"slurmd died on {','.join(unknown)} (the end of each log is in slurmd_deaths)",
             unknown),
            (f"the burst took {self.wall:.0f} s, longer than MinJobAge={min_job_age} s: "
             "finished jobs were purged before they could be checked",
             min_job_age and self.wall > min_job_age),
            ("jobs unaccounted for", unaccounted), ("slurmctld down", not summary["slurmctld_up"]),
            ("allocations differing silently from the decision", silent),
            ("strict TP groups split", strict_split), ("GPUs held twice", self.double),
            ("GPUs without indexes on a node set of nvlplace",
             summary["gpus_without_index_by_nvlplace"]),
            ("submissions failed", self.submit_errors), ("no job started", started == 0),
            (f"the sampler stopped: {self.sampler_error}", self.sampler_error),
            ("GPU jobs placed by nvlplace without GPUs",
             summary["gpu_jobs_without_gpus_by_nvlplace"]),
            ("the GPUs nvlplace keeps as held drifted from Slurm's GRES",
             summary["held_view_drifts"]),
            ("jobs FAILED", states.get("FAILED"))] if bad]
        summary["problems"] = problems
        summary["ok"] = not problems
        return summary


    def spans(self, topology, texts):
        """{text: Span} for GPUs given as "node:idx" words, from one `nvlplace check span
        --batch`."""
        texts = sorted(set(texts))
        out = {}
        for text, answer in zip(texts, batch(self.c.cli, ["span", "--topology", topology], texts)):
            m = re.match(r"nvlink_domains=(\d+) nodes=(\d+) tier=(\S+) locality=(\d+)$", answer)
            if not m:
                raise RuntimeError(f"nvlplace check span answered {answer!r} for {text}")
            out[text] = Span(int(m.group(1)), int(m.group(2)), m.group(3), int(m.group(4)))
        return out

    def quality(self, got, kind_of, topology, placed):
        """Per class of job (plain = TP 1, tp = TP > 1): how many ran, the share inside one
        NVLink domain (of those that fit one) and under one leaf switch or one node. With
        compare_cons_tres in nvlplace.yaml, each placement line also names where cons_tres
        alone would have put the job on the same state: then, job by job, how many got fewer,
        as many or more NVLink domains and a lower, the same or a higher fabric tier than
        cons_tres alone would have given them, with the first jobs that got more."""
        largest = largest_domain(self.c.cli, topology)
        acc = collections.defaultdict(lambda: collections.Counter())
        worse = collections.defaultdict(list)
        words_of = {jid: " ".join(f"{n}:{','.join(map(str, idx))}" for n, idx in gpus.items())
                    for jid, gpus in got.items() if jid in kind_of}
        fields_of = {jid: placed[jid][1].fields if jid in placed else {} for jid in words_of}
        # "": not compared; "none": cons_tres alone would not have started it; else its GPUs.
        alone_of = {jid: f.get("cons_tres_alone", "") for jid, f in fields_of.items()}
        span = self.spans(topology, [*words_of.values(),
                                     *(a for a in alone_of.values() if a and a != "none")])
        for jid, words in words_of.items():
            kind, gpus = kind_of[jid], got[jid]
            mine = span[words]
            domains, tier = mine.domains, mine.tier
            cls = "tp" if kind[3] > 1 else "plain"
            c = acc[cls]
            c["jobs"] += 1
            if sum(len(i) for i in gpus.values()) <= largest:
                c["fit_one_domain"] += 1
                c["one_domain"] += domains == 1
            c["one_leaf"] += tier in ("node", self.leaf_tier)
            fields = fields_of[jid]
            alone = alone_of[jid]
            if not alone:
                continue
            if alone == "none":
                c["alone_would_wait"] += 1
                continue
            theirs = span[alone]
            a_domains, a_tier = theirs.domains, theirs.tier
            c["compared"] += 1
            c["fewer_domains"] += domains < a_domains
            c["more_domains"] += domains > a_domains
            rank, a_rank = self.tier_rank.get(tier, 99), self.tier_rank.get(a_tier, 99)
            c["lower_tier"] += rank < a_rank
            c["higher_tier"] += rank > a_rank
            # Less local than cons_tres alone, in the engine's own order (its locality rank,
            # from `nvlplace check span`): said (the line names the trade) or not.
            said = "locality_traded" in fields
            less_local = mine.locality > theirs.locality
            if less_local:
                c["less_local_said" if said else "less_local_unsaid"] += 1
            if less_local and len(worse[cls]) < 10:
                worse[cls].append(f"JobId={jid}: got {words} ({domains} domains, "
                                  f"{tier}); cons_tres alone {alone} ({a_domains} domains, "
                                  f"{a_tier}); "
                                  + fields.get("locality_traded", "not said"))
        out = {}
        for cls, c in sorted(acc.items()):
            out[cls] = {"jobs": c["jobs"],
                        "one_domain_share": round(c["one_domain"] / c["fit_one_domain"], 3)
                        if c["fit_one_domain"] else None,
                        "one_leaf_share": round(c["one_leaf"] / c["jobs"], 3)}
            if c["compared"] or c["alone_would_wait"]:
                out[cls]["vs_cons_tres_alone"] = {
                    k: c[k] for k in ("compared", "fewer_domains", "more_domains", "lower_tier",
                                      "higher_tier", "less_local_said", "less_local_unsaid",
                                      "alone_would_wait")}
                out[cls]["vs_cons_tres_alone"]["worse_examples"] = worse[cls]
        return out


def _proc_state(pid):
    """The state letter of a process (R, S, D, Z...) from /proc, or None if there is none."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def _alive(pid):
    """The process exists and is not a zombie (a daemon's parent here, the VM's init, reaps
    an exited slurmctld some time after it exits)."""
    return _proc_state(pid) not in (None, "Z")


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--jobs", type=int, default=2000)
    p.add_argument("--faults", action="store_true")
    p.add_argument("--failover", action="store_true",
                   help="the primary slurmctld killed, the backup taking over, the primary back "
                        "(a cluster started with start.sh --backup)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--durations", default="1,2,3", help="job run times, seconds, in turn")
    p.add_argument("--array-size", type=int, default=10,
                   help="jobs per sbatch (one job array per kind drawn)")
    p.add_argument("--submitters", type=int, default=4, help="concurrent sbatch processes")
    p.add_argument("--sample-interval", type=float, default=0.5, help="seconds")
    p.add_argument("--timeout", type=float, default=1800,
                   help="seconds to wait for the jobs to finish after the last submission")
    p.add_argument("--quality", action="store_true",
                   help="also report, per class of job, the share inside one NVLink domain and "
                        "under one leaf (run once with stock cons_tres and once with the plugin)")
    p.add_argument("--report", help="write the summary as JSON here")
    a = p.parse_args()
    try:
        a.durations = [float(x) for x in a.durations.split(",")]
        if a.jobs < 1 or a.submitters < 1 or a.array_size < 1 or min(a.durations) <= 0:
            raise ValueError
    except ValueError:
        p.error("--jobs and --submitters must be positive, --durations positive numbers")
    if a.faults and a.failover:
        p.error("--faults and --failover are two runs")
    run_dir = os.environ.get("NVLPLACE_CLUSTER_DIR", "/tmp/nvlplace-cluster")
    build = os.environ.get("NVLPLACE_BUILD_DIR", os.path.join(ROOT, "build"))
    cluster = Cluster(os.path.abspath(run_dir), os.path.join(build, "contrib", "nvlplace"))
    if not cluster.up():
        print(f"burst: no cluster answers in {run_dir} (start it with contrib/cluster/start.sh)",
              file=sys.stderr)
        return 2
    burst = Burst(a, cluster)
    burst.go()
    summary = burst.report()
    text = json.dumps(summary, indent=2)
    print(text)
    if a.report:
        with open(a.report, "w") as f:
            f.write(text + "\n")
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
