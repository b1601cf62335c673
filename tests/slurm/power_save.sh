#!/bin/bash
# Power saving: GPU nodes that are powered down until a job needs them (State=CLOUD, as
# cloud-bursting sites run them; start.sh --power-save). A strict TP job asked on such a
# node is placed there by nvlplace before the node has ever registered, Slurm boots it
# (ResumeProgram starts its slurmd), and the job runs inside one island as its comment
# says, checked against `scontrol show job -d` once the node is up. After a slurmctld
# restart the same holds for a node still powered down: slurmctld loads a cloud node's
# GRES from gres.conf when it starts, so the node has GPU indexes before it registers (the
# plugin offers no GPUs of a node without them, such as a node that is up and has not
# registered again since the restart).
source "$(dirname "$0")/lib.sh"
require_cluster_tools
# The fake boot starts each resumed slurmd in a time namespace (contrib/cluster/slurm_conf.py).
unshare --time --fork true 2>/dev/null ||
  skip "needs time namespaces (unshare --time, Linux 5.6+) for a powered-down node's boot"
use_cluster nvlplace backfill --power-save
reset_jobs

mapfile -t cloud <"$NVL_RUN/etc/cloud-nodes"
((${#cloud[@]} >= 2)) || fail "the cluster has ${#cloud[@]} cloud nodes, not 2 or more"
node_state() { sinfo -h -n "$1" -o %t; }
powered_down() { [[ $(node_state "$1") == idle~ ]]; }
# Cloud nodes start powered down; a run before this one on the same cluster woke two.
for n in "${cloud[@]:0:2}"; do
  powered_down "$n" || scontrol update nodename="$n" state=power_down ||
    fail "cannot power down $n"
  nvl_wait_for 60 "cloud node $n to be powered down" powered_down "$n" ||
    fail "cloud node $n is $(node_state "$n"), not powered down (idle~)"
done

# wakes NODE: a TP=4 job asked there runs inside one island once Slurm booted the node.
wakes() {
  local job
  job=$(submit -w "$1" --gpus=4 --nvl-tp=4)
  # Booting takes 2 s here (resume.sh), then slurmctld starts the job at its next check of
  # configuring jobs (every 30 s at most).
  wait_state "$job" RUNNING 120
  placed_in_one_island "$job" 4
  note "job $job woke $1 and runs on $mine, as its comment says"
}
wakes "${cloud[0]}"

mark=$(log_mark)
nvl_stop_slurmctld
nvl_start_slurmctld || fail "slurmctld did not come back"
nvl_wait_for 60 "nodes to be up after the restart" nvl_all_nodes_up || fail "nodes not up"
log_has "$mark" "nvlplace: loaded" || fail "configuration not loaded after the restart"
powered_down "${cloud[1]}" ||
  fail "cloud node ${cloud[1]} is $(node_state "${cloud[1]}") after the restart, not powered down"
wakes "${cloud[1]}"
reset_jobs
