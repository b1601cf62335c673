#!/bin/bash
# The SPANK options: listed in --help, refused at submit time when bad (srun, sbatch, salloc,
# #SBATCH lines), and carried to slurmctld when good; a job without options gets the
# default policy.
source "$(dirname "$0")/lib.sh"
use_cluster nvlplace
reset_jobs

for cmd in srun sbatch salloc; do
  help=$($cmd --help 2>&1)
  for opt in nvl-tp nvl-pp nvl-dp nvl nvl-max-tier nvl-domain; do
    grep -q -- "--$opt=" <<<"$help" || fail "$cmd --help does not list --$opt"
  done
done

count_jobs() { scontrol show jobs 2>/dev/null | grep -c '^JobId='; }
jobs_before=$(count_jobs)
check_refused() {  # check_refused EXPECTED_MESSAGE COMMAND...; leaves the output in $out
  local want=$1
  shift
  if out=$("$@" 2>&1 </dev/null); then fail "accepted: $*"; fi
  [[ $out == *"$want"* ]] || fail "$* said: $out"
}
for cmd in srun sbatch salloc; do
  for bad in "--nvl-tp=0|nvlplace: --nvl-tp=0: must be a whole number from 1 to 65536" \
             "--nvl-pp=two|nvlplace: --nvl-pp=two: must be a whole number" \
             "--nvl-dp=-1|nvlplace: --nvl-dp=-1: must be a whole number" \
             "--nvl=sometimes|nvlplace: --nvl=sometimes: must be one of strict, prefer, off" \
             "--nvl-max-tier=rack|nvlplace: --nvl-max-tier=rack: must be one of leaf, spine, core" \
             "--nvl-domain=two|nvlplace: --nvl-domain=two: must be one of one, any"; do
    if [[ $cmd == sbatch ]]; then
      check_refused "${bad#*|}" sbatch -o /dev/null "${bad%%|*}" --wrap=true
    else
      check_refused "${bad#*|}" "$cmd" -N1 "${bad%%|*}" true
    fi
  done
done
# Sizes that pass one by one but not together (TP x PP overflowed an int in slurmctld).
for cmd in srun sbatch salloc; do
  if [[ $cmd == sbatch ]]; then
    check_refused "nvlplace: --nvl-tp=65536 --nvl-pp=65536 --nvl-dp=1: TP x PP x DP = 4294967296 GPUs, more than a job may have (16777216)" \
      sbatch -o /dev/null --gpus=8 --nvl-tp=65536 --nvl-pp=65536 --wrap=true
  else
    check_refused "TP x PP x DP = 4294967296 GPUs" "$cmd" -N1 --gpus=8 --nvl-tp=65536 --nvl-pp=65536 true
  fi
done
script=$(mktemp)
printf '#!/bin/bash\n#SBATCH --nvl-tp=x4\ntrue\n' >"$script"
check_refused "nvlplace: --nvl-tp=x4: must be a whole number" sbatch "$script"
[[ $(count_jobs) -eq $jobs_before ]] || fail "a refused submission created a job"
# Options the job's GPUs cannot honour: refused when submitted, with the reason for the user
# (job_submit/nvlplace), never run as if they had not been given; and without the
# job_submit plugin, by slurmctld's own submit-time test.
for cmd in srun sbatch salloc; do
  if [[ $cmd == sbatch ]]; then
    check_refused "does not divide 1 GPU" sbatch -o /dev/null --gpus=1 --nvl-tp=8 --wrap=true
  else
    check_refused "does not divide 1 GPU" "$cmd" --gpus=1 --nvl-tp=8 true
  fi
  [[ $out == *"nvlplace: "* && $out == *"Requested node configuration is not available"* ]] ||
    fail "$cmd said: $out"
done
check_refused "nvlplace: 8 GPUs do not split evenly over 3 nodes" \
  sbatch -o /dev/null -N3 --gpus=8 --nvl-tp=4 --wrap=true
sed -i '/^JobSubmitPlugins=/d' "$NVL_RUN/etc/slurm.conf"
nvl_reconfigure || fail "reconfigure"
mark=$(log_mark)
check_refused "Requested node configuration is not available" sbatch -o /dev/null --gpus=1 --nvl-tp=8 --wrap=true
[[ $out != *"nvlplace:"* ]] || fail "job_submit/nvlplace still answered: $out"
log_line_has "$mark" "*" event=refused mode=test_only "why~does not divide 1 GPU" ||
  fail "no 'refused at submit' line for --gpus=1 --nvl-tp=8 without job_submit/nvlplace"
echo "JobSubmitPlugins=nvlplace" >>"$NVL_RUN/etc/slurm.conf"
nvl_reconfigure || fail "reconfigure"

# Good values as #SBATCH lines reach the select plugin, in canonical form (a value of 32
# bytes, leading zeros and all, was cut to 31 on its way and then refused as 0).
printf '#!/bin/bash\n#SBATCH --gpus=8 -o /dev/null\n#SBATCH --nvl-tp=2 --nvl-pp=%s2\n#SBATCH --nvl=prefer --nvl-max-tier=spine\nsleep 3600\n' "$(printf '0%.0s' {1..31})" >"$script"
job=$(sbatch --parsable "$script") || fail "good #SBATCH options refused"
rm -f "$script"
wait_state "$job" RUNNING
comment_has "$job" event=placed asked_gpus=8 asked_nodes=any tp=2 pp=2 dp=2 nvl=prefer \
  max_tier=spine max_tier_required=yes model=any exclusive=no ||
  fail "options did not reach slurmctld: $(job_comment "$job")"

# No options: the default policy (TP=1, default nvl mode).
plain=$(submit --gpus=2)
wait_state "$plain" RUNNING
comment_has "$plain" event=placed asked_gpus=2 tp=1 pp=1 dp=2 nvl=strict max_tier=none ||
  fail "job without options: $(job_comment "$plain")"
out=$(srun -N1 --gpus-per-node=2 --nvl-tp=2 bash -c 'echo $CUDA_VISIBLE_DEVICES') ||
  fail "srun with options failed"
[[ $out =~ ^[0-7],[0-7]$ ]] || fail "srun job saw CUDA_VISIBLE_DEVICES=$out"
reset_jobs
note "ok"
