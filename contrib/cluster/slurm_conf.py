#!/usr/bin/env python3
"""Writes the local cluster's Slurm configuration around the files `nvlplace export slurm`
made: slurm.conf (a node line per node of the topology, with its GPUs as `nvlplace show`
lists them and no Gres= for CPU-only nodes, own ports), gres.conf with the GPU files moved to fake devices (symlinks to
/dev/null, created here), topology.conf as is, and plugstack.conf for the SPANK options."""

import argparse
import json
import os
import re
import shutil
import stat
import subprocess
import sys

# "File=/dev/nvidia[0-7]" in gres.conf: the device files, a hostlist.
FILE_RE = re.compile(r"\bFile=(\S+)")
# A node name ending in a number ("n0042"): the prefix and the digits.
NUMBERED_RE = re.compile(r"^([A-Za-z0-9_.-]*?)(\d+)$")


# --gpu-sharing: how many of the sharing GRES each GPU offers.
SHARES_PER_GPU = {"shard": 4, "mps": 100}


def nvlplace(cli, *args, stdin=None):
    """The output of `nvlplace ARGS` (the CLI knows the topology and hostlists)."""
    r = subprocess.run([cli, *args], input=stdin, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"slurm_conf.py: nvlplace {' '.join(args)} failed: {r.stderr.strip()}")
    return r.stdout


def fake_gres(text, fake_dev_dir, cli):
    """gres.conf with its GPU files moved from /dev to fake_dev_dir, and those files."""
    out, files = [], []
    for line in text.splitlines():
        conf, hash_, comment = line.partition("#")
        files += FILE_RE.findall(conf)
        out.append(FILE_RE.sub(lambda m: "File=" + fake_dev_dir + m.group(1)[len("/dev"):], conf)
                   + hash_ + comment)
    for f in files:
        if not f.startswith("/dev/"):
            sys.exit(f"slurm_conf.py: GPU file {f} is not under /dev")
    expanded = nvlplace(cli, "check", "hostlist", "--expand", "--batch", "-",
                        stdin="".join(f + "\n" for f in files))
    return ("\n".join(out) + "\n",
            sorted({fake_dev_dir + f[len("/dev"):] for f in expanded.split()}))


def power_save(a, etc):
    """slurm.conf's power saving lines, and the two programs they name (written to etc): a
    node "powers down" when its slurmd stops and "boots" when it starts again and registers.
    The cloud nodes start powered down; SuspendTime is an hour, so that others power down
    only when a test says so."""
    run = os.path.join(a.run_dir, "run")
    log = os.path.join(a.run_dir, "log", "power.log")
    expand = f'"{a.cli}" check hostlist --expand "$1"'
    programs = {
        "suspend.sh": f"""#!/bin/bash
# SuspendProgram (contrib/cluster/slurm_conf.py): stops the slurmd of each node of $1.
exec </dev/null >>"{log}" 2>&1
echo "$(date +%FT%T) suspend $1"
for node in $({expand}); do
  pid=$(cat "{run}/slurmd-$node.pid" 2>/dev/null) && kill "$pid"
done
exit 0
""",
        "resume.sh": f"""#!/bin/bash
# ResumeProgram (contrib/cluster/slurm_conf.py): starts the slurmd of each node of $1.
# - slurmctld takes a node as booted only when its boot time (now - uptime, in whole
#   seconds) is not before the second it asked for the resume: the node "boots" 2 s
#   later, and its slurmd runs in a time namespace whose uptime starts there (whole
#   seconds: the boot time slurmctld computes is up to 2 s early; with 1 s, 24.11 waited
#   for a boot that had come).
# - slurmctld runs this with stdin, stdout and stderr closed (22.05): slurmd would open
#   its log or its port as one of those and lose it when it daemonizes (they go to the
#   cluster's log/power.log).
# - It runs this with the signal mask of its power saving thread, SIGTERM blocked: slurmd
#   would inherit it and never stop (22.05), so the mask is cleared first.
# - slurmd starts in a session of its own: from 23.11 slurmctld runs this through
#   slurmscriptd, which kills the script's process group once it exits, and took a slurmd
#   that had not yet left it while daemonizing (one run in three on 24.11 with another
#   test beside it: no slurmd log, the job configuring until the timeout).
exec </dev/null >>"{log}" 2>&1
echo "$(date +%FT%T) resume $1"
sleep 2
up=$(cut -d. -f1 /proc/uptime)
for node in $({expand}); do
  setsid python3 -c 'import os, signal, sys
signal.pthread_sigmask(signal.SIG_SETMASK, [])
os.execvp(sys.argv[1], sys.argv[1:])' unshare --time --fork --boottime "-$up" \
    "{a.power_save}" -f "{etc}/slurm.conf" -N "$node"
done
exit 0
""",
    }
    for name, text in programs.items():
        path = os.path.join(etc, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o755)
    # PrivateData=cloud: 22.05's sinfo and scontrol hide powered-down cloud nodes otherwise.
    return (f"SuspendProgram={etc}/suspend.sh\nResumeProgram={etc}/resume.sh\n"
            "SuspendTime=3600\nSuspendTimeout=5\nResumeTimeout=120\nPrivateData=cloud\n")


def accounting(a, etc):
    """Writes slurmdbd.conf (beside slurm.conf, where slurmdbd looks for it; 0600, as slurmdbd
    wants, for it holds the database password) and returns slurm.conf's accounting lines."""
    dbd_port, db_port = (int(x) for x in a.accounting.split(":"))
    r = a.run_dir
    text = f"""# Generated by contrib/cluster/slurm_conf.py: the local cluster's slurmdbd.
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort={dbd_port}
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket={r}/munge/munge.socket
PluginDir={a.plugin_dir}
PidFile={r}/run/slurmdbd.pid
LogFile={r}/log/slurmdbd.log
DebugLevel=info
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort={db_port}
StorageUser=slurm
StoragePass=nvlplace
StorageLoc=slurm_acct_db
"""
    path = os.path.join(etc, "slurmdbd.conf")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(path, 0o600)
    # JobAcctGatherType stays none: the accounting here is for slurmctld's TRES and
    # reservations, not for step usage.
    return ("AccountingStorageType=accounting_storage/slurmdbd\n"
            "AccountingStorageHost=127.0.0.1\n"
            f"AccountingStoragePort={dbd_port}\n"
            # The munge socket of connections to slurmdbd (AuthInfo is not read for them).
            f"AccountingStoragePass={r}/munge/munge.socket\n"
            "AccountingStorageTRES=gres/gpu\n")


def node_runs(nodes):
    """The nodes as runs that one NodeName line can hold: consecutive nodes (Slurm's node
    index order is the topology's order) of the same shape whose names count up by one, as
    (hostlist, count, node). `n[0001-1024]` reads back as the same names in the same order."""
    runs = []
    for n in nodes:
        m = NUMBERED_RE.match(n["name"])
        if runs and m:
            prefix, first, count, head = runs[-1]
            same = ((head["gpus"], head["model"], head.get("cloud"))
                    == (n["gpus"], n["model"], n.get("cloud")))
            if (same and first is not None and m.group(1) == prefix
                    and m.group(2) == str(int(first) + count).zfill(len(first))):
                runs[-1][2] += 1
                continue
        runs.append([m.group(1), m.group(2), 1, n] if m else [None, None, 1, n])
    out = []
    for prefix, first, count, head in runs:
        if count == 1:
            out.append((head["name"], 1, head))
        else:
            last = str(int(first) + count - 1).zfill(len(first))
            out.append((f"{prefix}[{first}-{last}]", count, head))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--export-dir", required=True, help="topology.conf and gres.conf")
    p.add_argument("--topology", required=True, help="the cluster YAML they were exported from")
    p.add_argument("--cli", required=True, help="the nvlplace CLI")
    p.add_argument("--run-dir", required=True)
    p.add_argument("--plugin-dir", required=True, help="PluginDir (colon-separated)")
    p.add_argument("--spank", required=True, help="path of spank_nvlplace.so")
    p.add_argument("--select", default="select/cons_tres_nvlplace")
    p.add_argument("--scheduler", default="backfill", choices=["backfill", "builtin"],
                   help="sched/backfill (bf_interval=1) or sched/builtin (main scheduler only)")
    p.add_argument("--slurm-topology", default="tree", choices=["tree", "block"],
                   help="topology/tree on the switches, or topology/block with a block per "
                        "NVLink domain (from topology-block.conf, or topology.yaml on 25.05+)")
    p.add_argument("--preempt", action="store_true",
                   help="PreemptType=preempt/partition_prio, PreemptMode=REQUEUE: the gpu "
                        "partition (PriorityTier=10) preempts the jobs of a scavenger "
                        "(PriorityTier=1) and a standby partition (2) on the same nodes")
    p.add_argument("--imex", type=int, default=0,
                   help="SwitchType=switch/nvidia_imex with this many IMEX channels (25.11+)")
    p.add_argument("--gpu-sharing", choices=["shard", "mps"], default=None,
                   help="gres/shard (4 per GPU) or gres/mps (100 per GPU) on every GPU node, "
                        "spread evenly over its GPUs (no gres.conf line)")
    p.add_argument("--power-save", metavar="SLURMD",
                   help="power saving, with this slurmd: SuspendProgram stops a node's slurmd, "
                        "ResumeProgram starts it again; the second half of the nodes are "
                        "State=CLOUD (powered down at start), the others power down only "
                        "when told (scontrol update state=power_down)")
    p.add_argument("--accounting", metavar="DBD_PORT:DB_PORT", default=None,
                   help="accounting through a slurmdbd on DBD_PORT, its MariaDB on DB_PORT "
                        "(127.0.0.1), and AccountingStorageTRES=gres/gpu: reservations of "
                        "GPUs (23.11+)")
    p.add_argument("--host", required=True)
    p.add_argument("--ctld-addr", default=None,
                   help="the primary slurmctld's address (default: the host's name)")
    p.add_argument("--backup-host", default=None,
                   help="a backup slurmctld's host name (a second SlurmctldHost line)")
    p.add_argument("--backup-addr", default=None, help="the backup slurmctld's address")
    p.add_argument("--node-addr", default="127.0.0.1",
                   help="NodeAddr of every slurmd (an address both controllers reach)")
    p.add_argument("--ctld-port", type=int, required=True)
    p.add_argument("--node-port", type=int, required=True, help="first slurmd port")
    p.add_argument("--cpus", type=int, default=32)
    a = p.parse_args()

    etc = os.path.join(a.run_dir, "etc")
    dev = os.path.join(a.run_dir, "dev")
    os.makedirs(etc, exist_ok=True)
    os.makedirs(dev, exist_ok=True)
    # The nodes, in the topology's order (Slurm's node index order), with their GPUs.
    nodes = json.loads(nvlplace(a.cli, "show", a.topology, "--format", "json"))["nodes"]
    # --power-save: the second half of the nodes are cloud nodes, powered down until a job
    # needs them (their slurmd is not started).
    for n in nodes[len(nodes) // 2:] if a.power_save else []:
        n["cloud"] = True
    with open(os.path.join(a.export_dir, "gres.conf")) as f:
        gres, devices = fake_gres(f.read(), dev, a.cli)
    # Fake GPUs: Slurm wants character devices (regular files are refused) and hands
    # them to jobs through CUDA_VISIBLE_DEVICES by index.
    if not stat.S_ISCHR(os.stat("/dev/null").st_mode):
        sys.exit("slurm_conf.py: /dev/null is not a character device on this machine (something "
                 "replaced it with a file); restore it as root: rm /dev/null && mknod -m 666 "
                 "/dev/null c 1 3")
    for link in devices:
        os.makedirs(os.path.dirname(link), exist_ok=True)
        if not os.path.islink(link):
            os.symlink("/dev/null", link)
    with open(os.path.join(etc, "gres.conf"), "w") as f:
        f.write(gres)
    # topology/block: up to 24.11 topology.conf holds the blocks; from 25.05 on Slurm reads
    # topology.yaml (its default topology is the blocks) whenever it is beside slurm.conf and
    # ignores TopologyPlugin=, so a tree cluster must not find one left from a block run.
    topo_yaml = os.path.join(etc, "topology.yaml")
    if os.path.exists(topo_yaml):
        os.remove(topo_yaml)
    topo_conf = "topology.conf"
    if a.slurm_topology == "block":
        exported_yaml = os.path.join(a.export_dir, "topology.yaml")
        if os.path.exists(exported_yaml):
            shutil.copyfile(exported_yaml, topo_yaml)
        elif os.path.exists(os.path.join(a.export_dir, "topology-block.conf")):
            topo_conf = "topology-block.conf"
        else:
            sys.exit(f"slurm_conf.py: --slurm-topology block, but {a.export_dir} has neither "
                     "topology-block.conf nor topology.yaml: the cluster has no NVLink domain "
                     "over several nodes to make blocks of")
    with open(os.path.join(a.export_dir, topo_conf)) as f:
        topo = f.read()
    with open(os.path.join(etc, "topology.conf"), "w") as f:
        f.write(topo)
    # Each node's rank map files in the cluster's own directory: its nodes share this host's
    # /tmp with every other local cluster, whose job ids are the same.
    with open(os.path.join(etc, "plugstack.conf"), "w") as f:
        f.write(f"required {a.spank} rankmap_dir={a.run_dir}/tmp\n")

    names = [n["name"] for n in nodes]
    # proctrack/linuxproc finds a job's processes by reading /proc/PID/stat of every process
    # of the host whenever it signals the job (kill_proc_tree), and here every slurmd shares
    # one host: in a burst on 1,024 nodes the job steps spent 80% of the machine's CPU
    # reading /proc and slurmctld got 2%. Beyond 64 nodes jobs are tracked by process group
    # (proctrack/pgid), whose cost does not grow with the processes of the host.
    proctrack = "proctrack/linuxproc" if len(nodes) <= 64 else "proctrack/pgid"
    # Beyond 64 nodes a burst of jobs keeps this machine's CPUs busy with job steps, and
    # slurmctld answers late: with the defaults (10 s each) a batch job whose step had not
    # started 20 s after its allocation was requeued as "missing from batch node" (29 of
    # 2,000 jobs, each then held two minutes), and RPCs that timed out were sent again
    # (sdiag counted 2,569 completions of 2,000 jobs).
    timeouts = "" if len(nodes) <= 64 else "MessageTimeout=60\nBatchStartTimeout=300\n"
    sockets = 2
    cores = max(a.cpus // sockets, 1)
    r = a.run_dir
    ctld_addr = f"({a.ctld_addr})" if a.ctld_addr else ""
    # A backup controller takes over 5 s after the primary stops answering (default 120 s).
    backup = ""
    if a.backup_host:
        backup = f"SlurmctldHost={a.backup_host}({a.backup_addr})\nSlurmctldTimeout=5\n"
    conf = f"""# Generated by contrib/cluster/slurm_conf.py: a local nvlplace test cluster.
ClusterName=nvlplace
SlurmctldHost={a.host}{ctld_addr}
{backup}SlurmctldPort={a.ctld_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={r}/munge/munge.socket
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool/%n
SlurmctldPidFile={r}/run/slurmctld.pid
SlurmdPidFile={r}/run/slurmd-%n.pid
SlurmctldLogFile={r}/log/slurmctld.log
SlurmdLogFile={r}/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
PluginDir={a.plugin_dir}
PlugStackConfig={etc}/plugstack.conf
SelectType={a.select}
SelectTypeParameters=CR_Core
{"JobSubmitPlugins=nvlplace" if a.select.endswith("nvlplace") else ""}
TopologyPlugin=topology/{a.slurm_topology}
SchedulerType=sched/{a.scheduler}
SchedulerParameters=bf_interval=1
ProctrackType={proctrack}
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
{"" if a.accounting else "AccountingStorageType=accounting_storage/none"}
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
MailProg=/bin/true
GresTypes=gpu{"," + a.gpu_sharing if a.gpu_sharing else ""}
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=2
MinJobAge=3600
MaxJobCount=20000
InactiveLimit=0
TmpFS={r}/tmp
{timeouts}"""
    # One line per run of alike nodes, with a port each (Port=[first-last]): every Slurm
    # command and daemon parses slurm.conf, and a line per node made each parse cost 60 ms
    # of CPU at 1,024 nodes (15 ms as one line), in sbatch as in each starting slurmd.
    port = a.node_port
    for hosts, count, n in node_runs(nodes):
        # CPU-only nodes (gpus: 0, model null) have no Gres=, and no line in gres.conf.
        gres_field = f" Gres=gpu:{n['model']}:{n['gpus']}" if n["gpus"] > 0 else ""
        if gres_field and a.gpu_sharing:
            gres_field += f",{a.gpu_sharing}:{n['gpus'] * SHARES_PER_GPU[a.gpu_sharing]}"
        ports = f"[{port}-{port + count - 1}]" if count > 1 else f"{port}"
        conf += (f"NodeName={hosts} NodeHostname={a.host} NodeAddr={a.node_addr} Port={ports} "
                 f"CPUs={sockets * cores} Boards=1 SocketsPerBoard={sockets} "
                 f"CoresPerSocket={cores} ThreadsPerCore=1 RealMemory=64000{gres_field}"
                 f"{' State=CLOUD' if n.get('cloud') else ''}\n")
        port += count
    partition = nvlplace(a.cli, "check", "hostlist", "--compress", *names).strip()
    if a.accounting:
        conf += accounting(a, etc)
    if a.imex:
        conf += f"SwitchType=switch/nvidia_imex\nSwitchParameters=imex_channel_count={a.imex}\n"
    if a.preempt:
        conf += "PreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\n"
        conf += (f"PartitionName=gpu Nodes={partition} Default=YES MaxTime=INFINITE State=UP "
                 "PriorityTier=10\n")
        conf += (f"PartitionName=scavenger Nodes={partition} MaxTime=INFINITE State=UP "
                 "PriorityTier=1 PreemptMode=REQUEUE\n")
        conf += (f"PartitionName=standby Nodes={partition} MaxTime=INFINITE State=UP "
                 "PriorityTier=2 PreemptMode=REQUEUE\n")
    else:
        conf += f"PartitionName=gpu Nodes={partition} Default=YES MaxTime=INFINITE State=UP\n"
    if a.power_save:
        conf += power_save(a, etc)
    with open(os.path.join(etc, "slurm.conf"), "w") as f:
        f.write(conf)
    with open(os.path.join(etc, "nodes"), "w") as f:
        f.write("\n".join(names) + "\n")
    with open(os.path.join(etc, "cloud-nodes"), "w") as f:
        f.write("".join(n["name"] + "\n" for n in nodes if n.get("cloud")))


if __name__ == "__main__":
    main()
