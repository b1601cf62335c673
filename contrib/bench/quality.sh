#!/bin/bash
# Never worse than stock (issue 15): the same seeded burst of mixed GPU jobs on the local
# cluster, once under stock select/cons_tres (with the exported topology.conf and gres.conf)
# and once under select/cons_tres_nvlplace, on each topology given; for plain jobs (TP 1)
# and TP jobs, the share that ran inside one NVLink domain (of those that fit one) and
# under one leaf switch. A measurement, not a test; needs root; prints one table.
# Usage: contrib/bench/quality.sh [--jobs N] [TOPOLOGY.yaml...]
# (default 1,000 jobs on configs/gb200-nvl72-su.yaml and configs/lab-h100.yaml)
# The plugin's run sets compare_cons_tres in nvlplace.yaml, so that each placement is also
# compared, on the same state, with where cons_tres alone would have put the job: a second
# table counts the jobs that got fewer or more NVLink domains and a lower or higher tier.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
jobs=1000
topologies=()
while (($#)); do
  case $1 in
    --jobs) jobs=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    -*) echo "quality.sh: unknown option $1" >&2; sed -n '2,9p' "$0" >&2; exit 2 ;;
    *) topologies+=("$(realpath "$1")"); shift ;;
  esac
done
((${#topologies[@]})) || topologies=("$root/configs/gb200-nvl72-su.yaml" "$root/configs/lab-h100.yaml")
export NVLPLACE_CLUSTER_DIR=${NVLPLACE_CLUSTER_DIR:-/tmp/nvlplace-quality}
out=$(mktemp -d)
trap '"$root/contrib/cluster/clean.sh" >/dev/null 2>&1; rm -rf "$out"' EXIT
cd /tmp
for topo in "${topologies[@]}"; do
  for select in cons_tres nvlplace; do
    "$root/contrib/cluster/start.sh" --topology "$topo" --select "$select" >/dev/null
    if [[ $select == nvlplace ]]; then
      # Job by job on the same state: each placement line also names cons_tres's own choice.
      log=$NVLPLACE_CLUSTER_DIR/log/slurmctld.log
      loads=$(grep -c 'nvlplace: loaded' "$log" || true)
      echo "compare_cons_tres: true" >>"$NVLPLACE_CLUSTER_DIR/etc/nvlplace.yaml"
      (source "$NVLPLACE_CLUSTER_DIR/env.sh" && scontrol reconfigure)
      reloaded() { (($(grep -c 'nvlplace: loaded' "$log" || true) > loads)); }
      for ((i = 0; i < 100; i++)); do
        reloaded && break
        sleep 0.2  # polls for the reload, at most 20 s
      done
      reloaded || { echo "quality.sh: nvlplace.yaml not reloaded (see $log)" >&2; exit 1; }
    fi
    # Only the quality figures are used here; the burst's own checks are reported.
    python3 "$root/contrib/cluster/burst.py" --jobs "$jobs" --seed 7 --quality \
      --report "$out/$(basename "$topo" .yaml)-$select.json" >"$out/burst.log" 2>&1 ||
      echo "quality.sh: $(basename "$topo") $select: $(python3 -c 'import json,sys; r = json.load(open(sys.argv[1])); print(r.get("problems"), r.get("submit_errors", [])[:3])' "$out/$(basename "$topo" .yaml)-$select.json" 2>&1)" >&2
  done
done
"$root/contrib/cluster/stop.sh"
python3 - "$out" "${topologies[@]}" <<'PY'
import json, os, sys
out, topos = sys.argv[1], sys.argv[2:]
print("| cluster | jobs | one NVLink domain: stock | nvlplace | one leaf: stock | nvlplace |")
print("|---|---|---|---|---|---|")
pct = lambda v: "-" if v is None else f"{100 * v:.0f}%"
for t in topos:
    name = os.path.basename(t)[:-5]
    r = {s: json.load(open(f"{out}/{name}-{s}.json"))["quality"] for s in ("cons_tres", "nvlplace")}
    for cls in ("plain", "tp"):
        a, b = r["cons_tres"].get(cls, {}), r["nvlplace"].get(cls, {})
        print(f"| {name} | {cls} ({a.get('jobs', 0)} / {b.get('jobs', 0)}) | "
              f"{pct(a.get('one_domain_share'))} | {pct(b.get('one_domain_share'))} | "
              f"{pct(a.get('one_leaf_share'))} | {pct(b.get('one_leaf_share'))} |")
print()
print("| cluster | jobs compared | fewer NVLink domains than cons_tres alone | more | lower tier | higher tier | less local, trade named | less local, not named | cons_tres alone would not start it |")
print("|---|---|---|---|---|---|---|---|---|")
for t in topos:
    name = os.path.basename(t)[:-5]
    q = json.load(open(f"{out}/{name}-nvlplace.json"))["quality"]
    for cls in ("plain", "tp"):
        v = q.get(cls, {}).get("vs_cons_tres_alone")
        if not v:
            continue
        print(f"| {name} {cls} | {v['compared']} | {v['fewer_domains']} | {v['more_domains']} | "
              f"{v['lower_tier']} | {v['higher_tier']} | {v['less_local_said']} | "
              f"{v['less_local_unsaid']} | {v['alone_would_wait']} |")
        for w in v["worse_examples"][:5]:
            print(f"|   {w} |||||||||")
PY
