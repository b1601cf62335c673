#!/usr/bin/env python3
"""Writes the local cluster's Slurm configuration from the files `nvlplace export slurm`
made: slurm.conf (one node line per GPU shape, own ports), gres.conf with the GPU files
moved to fake devices (symlinks to /dev/null, created here), topology.conf as is, and
plugstack.conf for the SPANK options."""

import argparse
import os
import re
import stat
import sys


def expand_hostlist(expr):
    """node[00-03,07],gpu1 -> [node00, node01, node02, node03, node07, gpu1]."""
    out = []
    for part in re.findall(r"[^,\[]+(?:\[[^\]]*\][^,\[]*)*", expr):
        names = [""]
        for literal, ranges in re.findall(r"([^\[]*)(?:\[([^\]]*)\])?", part):
            items = []
            if ranges:
                for r in ranges.split(","):
                    if "-" in r:
                        lo, hi = r.split("-", 1)
                        width = len(lo)
                        items += [str(i).zfill(width) for i in range(int(lo), int(hi) + 1)]
                    else:
                        items.append(r)
            else:
                items = [""]
            names = [n + literal + i for n in names for i in items]
        out += [n for n in names if n]
    return out


def compress(names):
    """Inverse of expand_hostlist for names of one prefix and same-width numbers."""
    groups = {}
    order = []
    for n in names:
        m = re.match(r"^(.*?)(\d+)$", n)
        key = (m.group(1), len(m.group(2))) if m else (n, -1)
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(int(m.group(2)) if m else None)
    parts = []
    for prefix, width in order:
        nums = groups[(prefix, width)]
        if width < 0:
            parts.append(prefix)
            continue
        nums = sorted(set(nums))
        ranges = []
        start = prev = nums[0]
        for x in nums[1:] + [None]:
            if x is not None and x == prev + 1:
                prev = x
                continue
            a, b = str(start).zfill(width), str(prev).zfill(width)
            ranges.append(a if start == prev else f"{a}-{b}")
            if x is not None:
                start = prev = x
        parts.append(f"{prefix}[{','.join(ranges)}]" if len(nums) > 1 else prefix + ranges[0])
    return ",".join(parts)


def parse_gres(text, fake_dev_dir):
    """Returns (per-node GPU count and type, gres.conf text with fake device files, the
    fake device paths)."""
    nodes = {}
    out = []
    devices = set()
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            out.append(raw)
            continue
        fields = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
        if fields.get("Name") != "gpu" or "NodeName" not in fields:
            out.append(raw)
            continue
        files = expand_hostlist(fields.get("File", ""))
        devices.update(re.sub(r"^/dev/", fake_dev_dir + "/", f) for f in files)
        count = len(files) if files else int(fields.get("Count", "0"))
        for n in expand_hostlist(fields["NodeName"]):
            c, t = nodes.get(n, (0, None))
            nodes[n] = (c + count, fields.get("Type", t))

        def fake(m):
            return "File=" + re.sub(r"^/dev/", fake_dev_dir + "/", m.group(1))

        out.append(re.sub(r"File=(\S+)", fake, raw))
    return nodes, "\n".join(out) + "\n", sorted(devices)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--export-dir", required=True, help="topology.conf and gres.conf")
    p.add_argument("--run-dir", required=True)
    p.add_argument("--plugin-dir", required=True, help="PluginDir (colon-separated)")
    p.add_argument("--spank", required=True, help="path of spank_nvlplace.so")
    p.add_argument("--select", default="select/cons_tres_nvlplace")
    p.add_argument("--scheduler", default="backfill", choices=["backfill", "builtin"],
                   help="sched/backfill (bf_interval=1) or sched/builtin (main scheduler only)")
    p.add_argument("--host", required=True)
    p.add_argument("--ctld-port", type=int, required=True)
    p.add_argument("--node-port", type=int, required=True, help="first slurmd port")
    p.add_argument("--cpus", type=int, default=32)
    a = p.parse_args()

    etc = os.path.join(a.run_dir, "etc")
    dev = os.path.join(a.run_dir, "dev")
    os.makedirs(etc, exist_ok=True)
    os.makedirs(dev, exist_ok=True)
    with open(os.path.join(a.export_dir, "gres.conf")) as f:
        nodes, gres, devices = parse_gres(f.read(), dev)
    if not nodes:
        sys.exit(f"slurm_conf.py: no 'Name=gpu' node lines in {a.export_dir}/gres.conf")
    # Fake GPUs: Slurm wants character devices (regular files are refused) and hands
    # them to jobs through CUDA_VISIBLE_DEVICES by index.
    if not stat.S_ISCHR(os.stat("/dev/null").st_mode):
        sys.exit("slurm_conf.py: /dev/null is not a character device on this machine (something "
                 "replaced it with a file); restore it as root: rm /dev/null && mknod -m 666 "
                 "/dev/null c 1 3")
    for link in devices:
        if not link.startswith(dev + "/"):
            sys.exit(f"slurm_conf.py: GPU file {link} is not under /dev")
        os.makedirs(os.path.dirname(link), exist_ok=True)
        if not os.path.islink(link):
            os.symlink("/dev/null", link)
    with open(os.path.join(etc, "gres.conf"), "w") as f:
        f.write(gres)
    with open(os.path.join(a.export_dir, "topology.conf")) as f:
        topo = f.read()
    with open(os.path.join(etc, "topology.conf"), "w") as f:
        f.write(topo)
    with open(os.path.join(etc, "plugstack.conf"), "w") as f:
        f.write(f"required {a.spank}\n")

    names = list(nodes)
    sockets = 2
    cores = max(a.cpus // sockets, 1)
    r = a.run_dir
    conf = f"""# Generated by contrib/cluster/slurm_conf.py: a local nvlplace test cluster.
ClusterName=nvlplace
SlurmctldHost={a.host}
SlurmctldPort={a.ctld_port}
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
TopologyPlugin=topology/tree
SchedulerType=sched/{a.scheduler}
SchedulerParameters=bf_interval=1
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
MailProg=/bin/true
GresTypes=gpu
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=2
MinJobAge=3600
MaxJobCount=20000
InactiveLimit=0
TmpFS={r}/tmp
"""
    # One line per shape (GPU count, type), nodes in file order.
    shapes = {}
    for n in names:
        shapes.setdefault(nodes[n], []).append(n)
    port = a.node_port
    for (count, typ), members in shapes.items():
        gres = f"gpu:{typ}:{count}" if typ else f"gpu:{count}"
        for n in members:
            conf += (f"NodeName={n} NodeHostname={a.host} NodeAddr=127.0.0.1 Port={port} "
                     f"CPUs={sockets * cores} Boards=1 SocketsPerBoard={sockets} "
                     f"CoresPerSocket={cores} ThreadsPerCore=1 RealMemory=64000 Gres={gres}\n")
            port += 1
    conf += f"PartitionName=gpu Nodes={compress(names)} Default=YES MaxTime=INFINITE State=UP\n"
    with open(os.path.join(etc, "slurm.conf"), "w") as f:
        f.write(conf)
    with open(os.path.join(etc, "nodes"), "w") as f:
        f.write("\n".join(names) + "\n")


if __name__ == "__main__":
    main()
