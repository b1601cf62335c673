#!/bin/bash
# Typed GPU requests on a cluster of three GPU models with PCIe islands and CPU-only nodes
# (configs/lab-mixed.yaml, issue 11): a typed strict job runs on its own model on an idle or
# partly busy cluster (before, nvlplace offered nodes of another model, cons_tres refused
# them, and the strict job waited for ever), typed per-node requests keep each TP group in
# one NVLink-bridge island, an untyped job stays on one model, and the CPU-only nodes run
# jobs and are not reported as missing from the topology.
source "$(dirname "$0")/lib.sh"
NVL_TOPOLOGY=$NVL_ROOT/configs/lab-mixed.yaml

model_of() {
  case $1 in
    node0[0-5]) echo H100 ;;
    node0[6-9]) echo A100 ;;
    node1[0-3]) echo H100-PCIe ;;
    *) echo "none($1)" ;;
  esac
}
# The models of a job's nodes, one per line, each once.
models_of() {
  local line node
  for line in $(nvl_job_gpus "$1"); do
    for node in $("$NVL_CLI" check hostlist --expand "${line%%:*}"); do model_of "$node"; done
  done | sort -u
}

use_cluster nvlplace
reset_jobs
mark=$(log_mark)
good_nvlplace_yaml  # a load of this cluster's topology, with its CPU-only nodes, logged
nvl_wait_for 20 "the configuration to load" log_has "$mark" "nvlplace: loaded" ||
  fail "the configuration did not load"
log_has "$mark" "not in its topology" && fail "nodes reported missing: $(log_since "$mark" | grep 'not in its topology')"

# An A100 node with 4 GPUs busy (a typed holder): the best fit for any 4-GPU TP=4 group, so
# a model-blind engine offers it to an H100 job, which cons_tres refuses.
holder=$(submit -w node06 --gpus=A100:4)
wait_state "$holder" RUNNING
write_nvlplace_yaml "$(good_config_text | sed 's/^candidates: .*/candidates: 1/')"
mark=$(log_mark)
h100=$(submit --gpus=H100:4 --nvl-tp=4)
wait_state "$h100" RUNNING
[[ $(models_of "$h100") == H100 ]] || fail "the H100 job runs on $(nvl_job_gpus "$h100")"
gpus_in_one_island "$(nvl_job_gpus "$h100")" || fail "TP=4 split: $(nvl_job_gpus "$h100")"
log_line_has "$mark" "$h100" event=placed asked_gpus=4 asked_nodes=any tp=4 pp=1 dp=1 nvl=strict \
  max_tier=none model=H100 exclusive=no ||
  fail "no placement line naming the model for job $h100"
good_nvlplace_yaml

# A whole A100 node, strict TP=8.
a100=$(submit --gpus=A100:8 --nvl-tp=8)
wait_state "$a100" RUNNING
[[ $(models_of "$a100") == A100 ]] || fail "the A100 job runs on $(nvl_job_gpus "$a100")"
[[ $(nvl_job_gpus "$a100") == node0[7-9]:0-7 ]] || fail "the A100 job got $(nvl_job_gpus "$a100")"

# Two PCIe nodes, 2 GPUs each, TP=2: each pair inside one NVLink-bridge island.
pcie=$(submit -N2 --gpus-per-node=H100-PCIe:2 --nvl-tp=2)
wait_state "$pcie" RUNNING
[[ $(models_of "$pcie") == H100-PCIe ]] || fail "the PCIe job runs on $(nvl_job_gpus "$pcie")"
gpus_in_one_island "$(nvl_job_gpus "$pcie")" || fail "a TP=2 pair split: $(nvl_job_gpus "$pcie")"

# Untyped, 16 GPUs in TP=8 groups: every GPU of one model.
plain=$(submit --gpus=16 --nvl-tp=8)
wait_state "$plain" RUNNING
[[ $(models_of "$plain" | wc -l) -eq 1 ]] ||
  fail "the untyped job mixes models: $(nvl_job_gpus "$plain" | paste -sd' ')"

# The CPU-only nodes run CPU jobs.
cpu=$(sbatch --parsable -o /dev/null -w cpu0 --wrap true) || fail "sbatch -w cpu0 refused"
wait_state "${cpu%%;*}" COMPLETED
note "H100 $(nvl_job_gpus "$h100"), A100 $(nvl_job_gpus "$a100"), PCIe $(nvl_job_gpus "$pcie" | paste -sd' '), untyped $(nvl_job_gpus "$plain" | paste -sd' ')"
reset_jobs
note "ok"
