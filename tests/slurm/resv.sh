#!/bin/bash
# GPUs a reservation holds (Slurm 23.11+: TRESPerNode=gres/gpu=N; cons_tres gets them in
# job_test's resv_exc_t) are not free for jobs outside it, and are the only GPUs of its nodes
# for jobs inside it. A reservation holds 2 GPUs on each of node00-node02 and every other
# node is busy:
# - a strict TP=4 job outside it runs at once inside the free island of one of those nodes,
#   on no reserved GPU, and its comment names the GPUs `scontrol show job -d` shows
#   (nvlplace used to count reserved GPUs free, offered node sets whose island the
#   reservation held half of, cons_tres refused each, and the job waited); so does one
#   asking for the GPUs' type, which cons_tres alone does not keep off reserved GPUs;
# - a strict TP=2 job inside it runs on the reserved GPUs of one node, as its comment says.
# The cluster runs a slurmdbd (start.sh --accounting): slurmctld accepts
# AccountingStorageTRES=gres/gpu, which such reservations need, only with one.
source "$(dirname "$0")/lib.sh"
require_cluster_tools
nvl_release_at_least "$(nvl_slurm_release)" 23 11 ||
  skip "reservations of GPUs need Slurm 23.11 or later; this is $(nvl_slurm_release)"
use_cluster nvlplace backfill --accounting
resv=nvl_gpus
# Before any wait for idle nodes (sinfo shows a reservation's idle nodes as `resv`), and after
# the jobs (Slurm deletes no reservation that jobs run in).
nvl_cancel_all
nvl_wait_for 60 "all jobs to end" no_jobs_left || fail "jobs did not end"
scontrol delete reservation="$resv" >/dev/null 2>&1 || true
reset_jobs
trap 'scontrol delete reservation="$resv" >/dev/null 2>&1 || true' EXIT
out=$(scontrol create reservation ReservationName="$resv" StartTime=now Duration=60 \
  Users=root Nodes=node[00-02] TRESPerNode=gres/gpu=2 2>&1) ||
  fail "scontrol create reservation refused: $out"
note "reservation: $(scontrol show reservation "$resv" | tr -s ' \n' ' ')"

# Every other node busy: only node00-node02 have free GPUs, 2 of each reserved.
fillers=()
for n in $(seq -w 3 15); do fillers+=("$(submit -w "node$n" --gpus-per-node=8)"); done
for j in "${fillers[@]}"; do wait_state "$j" RUNNING; done

mark=$(log_mark)
tp=$(submit --gpus=4 --nvl-tp=4)
wait_state "$tp" RUNNING 30
placed_in_one_island "$tp" 4
note "TP=4 job $tp outside the reservation runs on $mine"
# The same asked for a GPU type: cons_tres keeps an untyped reservation's GPUs from untyped
# requests only (it gave this job 0-3 of node00 when nvlplace offered them).
typed=$(submit --gpus=H100-PCIe:4 --nvl-tp=4)
wait_state "$typed" RUNNING 30
placed_in_one_island "$typed" 4
note "TP=4 job $typed asking for H100-PCIe GPUs runs on $mine"

# Inside the reservation: on each of its nodes a TP=2 group, which can only be the node's
# reserved pair, none of the GPUs of the job outside it.
inside=()
for n in 00 01 02; do inside+=("$(submit --reservation="$resv" -w "node$n" --gpus=2 --nvl-tp=2)"); done
reserved=()
for j in "${inside[@]}"; do
  wait_state "$j" RUNNING 30
  placed_in_one_island "$j" 2
  reserved+=("$mine")
done
note "TP=2 jobs ${inside[*]} inside the reservation run on ${reserved[*]}"
overlap=$(comm -12 <(cat <(nvl_job_gpu_list "$tp") <(nvl_job_gpu_list "$typed") | sort) <(for j in "${inside[@]}"; do nvl_job_gpu_list "$j"; done | sort))
[[ -z $overlap ]] || fail "jobs outside the reservation hold its GPUs: $overlap"
! log_since "$mark" | grep "cons_tres refused" >/dev/null ||
  fail "cons_tres refused a node set nvlplace offered: $(log_since "$mark" | grep -m1 'cons_tres refused')"
# Slurm deletes no reservation that jobs run in.
nvl_cancel_all
nvl_wait_for 60 "all jobs to end" no_jobs_left || fail "jobs did not end"
scontrol delete reservation="$resv" || fail "cannot delete the reservation $resv"
reset_jobs
