#!/usr/bin/env python3
# The large inputs of the boundary issue (issue 9), generated here because they are too big
# to commit (the small ones are fixtures: tests/fixtures/bad/, tests/fixtures/traces/ and the
# goldens). Each runs through the real CLI and must end within 10 s and 1 GiB of memory, by no
# signal, with the exit status expected: 2 (bad input, refused with a message naming the file
# and line) or 0 (valid but large, completed). Before the fix each one crashed, hung, took
# minutes or several GB. Run by ctest (boundary.findings) in the release tree and, with
# NVLPLACE_SANITIZE=1, in the ASan+UBSan tree.
#   findings.py NVLPLACE [CASE...]
import os
import subprocess
import sys
import tempfile
import threading

TIME_LIMIT_S = 10
RSS_LIMIT_KB = 1 << 20  # 1 GiB


def write(path, text):
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(text)
    return path


def leaf_yaml(nodes_line, switches, extra=""):
    return ("name: big\ntiers: [leaf, spine]\nlink_gbps: 400\ngpu_models:\n"
            "  - name: H100\n    nvlink_gbps: 900\n" + extra +
            f"nodes:\n  - names: {nodes_line}\n    gpus: 8\n    model: H100\nswitches:\n" +
            switches)


def cases(d):
    """(name, argv after the CLI, expected exit, text the output must hold)."""
    out = []

    # A 4 KB-class YAML whose node group expands to ten million names.
    out.append(("yaml-ten-million-names", ["validate", write(
        f"{d}/names.yaml", leaf_yaml("n[0000000-9999999]",
                                     "  - name: l0\n    tier: leaf\n    nodes: n[0000000-9999999]\n"))],
        2, "names.yaml:"))
    # 190 bytes: a million nodes of 1,024 GPUs each.
    out.append(("yaml-billion-gpus", ["validate", write(
        f"{d}/gpus.yaml", "name: x\ntiers: [leaf]\nlink_gbps: 400\ngpu_models: [{name: H100}]\n"
        "nodes: [{names: 'x[0-1048575]', gpus: 1024, model: H100}]\n"
        "switches: [{name: l, tier: leaf, nodes: 'x[0-1048575]'}]\n")], 2, "gpus.yaml:"))
    # topology.conf: a chain of 40,000 switch levels (recursed once per level before).
    chain = ["SwitchName=s0 Nodes=node0"] + [f"SwitchName=s{i} Switches=s{i - 1}"
                                             for i in range(1, 40000)]
    out.append(("topology-conf-chain", ["import", "slurm", "--gpus-per-node", "8", "--topology",
                                        write(f"{d}/chain.conf", "\n".join(chain) + "\n")],
                2, "chain.conf:"))
    # The same chain in YAML: 40,000 spine switches each above the last.
    sw = "  - name: s0\n    tier: leaf\n    nodes: node0\n" + "".join(
        f"  - name: s{i}\n    tier: spine\n    switches: s{i - 1}\n" for i in range(1, 40000))
    out.append(("yaml-chain", ["validate", write(f"{d}/chain.yaml", leaf_yaml("node0", sw))],
                2, "chain.yaml:"))
    # Hostlists of 80,000 and 160,000 single terms (7.5 s, and never, before): valid.
    for n in (80000, 160000):
        hl = ",".join(f"n{i}" for i in range(n))
        out.append((f"hostlist-{n}-terms", ["validate", write(
            f"{d}/terms{n}.yaml",
            leaf_yaml(hl, f"  - name: l0\n    tier: leaf\n    nodes: {hl}\n"))], 0, "ok"))
    # One name made of 100 brackets: 10^100 names, refused before any is built.
    out.append(("hostlist-100-brackets", ["validate", write(
        f"{d}/brackets.yaml", leaf_yaml("n" + "[0-9]" * 100, "  - name: l0\n    tier: leaf\n"
                                        "    nodes: n0\n"))], 2, "brackets.yaml:"))
    out.append(("hostlist-nested-ones", ["validate", write(
        f"{d}/ones.yaml", leaf_yaml("n" + "[1]" * 100000, "  - name: l0\n    tier: leaf\n"
                                    "    nodes: n0\n"))], 2, "ones.yaml:"))
    # gres.conf: Count=30000000 on one line (7 GB before).
    write(f"{d}/one.conf", "SwitchName=l0 Nodes=node0\n")
    out.append(("gres-count", ["import", "slurm", "--topology", f"{d}/one.conf", "--gres", write(
        f"{d}/count.gres", "NodeName=node0 Name=gpu Count=30000000\n")], 2, "count.gres:1"))
    # 20,000 leaf switches of one node each under 100 spines (4.8 GB of leaf tables before):
    # valid, built.
    sw = "".join(f"  - name: l{i}\n    tier: leaf\n    nodes: n{i}\n" for i in range(20000))
    sw += "".join(f"  - name: s{j}\n    tier: spine\n    switches: l[{j * 200}-{j * 200 + 199}]\n"
                  for j in range(100))
    out.append(("leaves-20000", ["validate", write(f"{d}/leaves.yaml",
                                                   leaf_yaml("n[0-19999]", sw))], 0, "ok"))
    # 50,000 NVLink domains of one node (16 s before: a quadratic name check): valid.
    doms = "nvlink_domains:\n" + "".join(f"  - name: d{i}\n    nodes: n{i}\n" for i in range(50000))
    out.append(("domains-50000", ["validate", write(f"{d}/domains.yaml", leaf_yaml(
        "n[0-49999]", "  - name: l0\n    tier: leaf\n    nodes: n[0-49999]\n", doms))], 0, "ok"))
    # A 10 MB YAML flow list.
    out.append(("yaml-flow-list-10mb", ["validate", write(
        f"{d}/flow.yaml", "name: [" + "1," * 5_000_000 + "1]\n")], 2, "flow.yaml:"))
    # 100 KB of aliases: one node group of 1,024 names repeated 12,500 times (13 M names).
    laughs = leaf_yaml("n[0-1023]", "  - name: l0\n    tier: leaf\n    nodes: n[0-1023]\n")
    laughs = laughs.replace("  - names: n[0-1023]", "  - &g\n    names: n[0-1023]")
    laughs = laughs.replace("switches:\n", "  - *g\n" * 12500 + "switches:\n")
    out.append(("yaml-aliases", ["validate", write(f"{d}/laughs.yaml", laughs)], 2,
                "laughs.yaml:"))
    # Special files: read until bad_alloc, and blocked for ever in open().
    out.append(("dev-zero", ["validate", "/dev/zero"], 2, "/dev/zero"))
    os.mkfifo(f"{d}/fifo.yaml")
    out.append(("fifo", ["validate", f"{d}/fifo.yaml"], 2, "FIFO"))
    out.append(("busy-fifo", ["place", "--topology", CONFIG, "--gpus", "8", "--busy",
                              f"{d}/fifo.yaml"], 2, "FIFO"))
    # A busy list with 300,000 bracket terms on one line (minutes before: quadratic).
    out.append(("busy-300000-terms", ["place", "--topology", CONFIG, "--gpus", "8", "--busy",
                                      write(f"{d}/terms.busy", "node[" + ",".join(
                                          ["7"] * 300000) + "]:0\n")], 0, "placed"))
    # One busy line: 1,000 nodes x an index list of 50,000 items (parsed again per node before).
    out.append(("busy-long-index-list", ["place", "--topology", CONFIG, "--gpus", "8", "--busy",
                                         write(f"{d}/idx.busy", "node[0-7]:" + ",".join(
                                             ["0"] * 50000) + "\n")], 0, "placed"))
    # Native trace: TP x PP overflowing int (SIGFPE before).
    out.append(("replay-tp-pp-overflow", ["replay", "--topology", CONFIG, "--policies", "topo",
                                          "--trace", write(f"{d}/t.csv", "id,submit,duration,"
                                                           "gpus,tp,pp,nvl\n"
                                                           "1,0,10,8,65536,65536,strict\n")],
                0, "t.csv:2"))
    return out


CONFIG = ""


def run(cli, argv):
    """(exit status or -signal, processor seconds, peak RSS in KB, output)."""
    out = tempfile.TemporaryFile()
    p = subprocess.Popen([cli] + argv, stdout=out, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL)
    killer = threading.Timer(TIME_LIMIT_S * 6, p.kill)  # a hang (no CPU used) ends too
    killer.start()
    _, status, usage = os.wait4(p.pid, 0)
    killer.cancel()
    p.returncode = 0  # reaped here
    seconds = usage.ru_utime + usage.ru_stime
    out.seek(0)
    text = out.read().decode("utf-8", "replace")
    code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    return code, seconds, usage.ru_maxrss, text


def main():
    global CONFIG
    cli = os.path.abspath(sys.argv[1])
    only = set(sys.argv[2:])
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    CONFIG = os.path.join(root, "configs", "lab-h100.yaml")
    failed = 0
    with tempfile.TemporaryDirectory(prefix="nvlplace-findings-") as d:
        for name, argv, want, text in cases(d):
            if only and name not in only:
                continue
            code, seconds, rss, output = run(cli, argv)
            first = output.strip().splitlines()[0][:160] if output.strip() else ""
            problems = []
            if code < 0:
                problems.append(f"killed by signal {-code}")
            elif code != want:
                problems.append(f"exit {code}, expected {want}")
            if seconds > TIME_LIMIT_S:
                problems.append(f"{seconds:.1f} s of CPU > {TIME_LIMIT_S} s")
            if rss > RSS_LIMIT_KB:
                problems.append(f"peak RSS {rss >> 10} MB > {RSS_LIMIT_KB >> 10} MB")
            if text not in output:
                problems.append(f"output lacks '{text}'")
            verdict = "FAIL " + "; ".join(problems) if problems else "ok"
            print(f"{name}: exit {code}, {seconds:.2f} s CPU, {rss >> 10} MB: {verdict}\n  {first}")
            failed += bool(problems)
    print(f"findings: {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
