#!/bin/bash
# Fixture: the local cluster on lab-islands (16 nodes, two 4-GPU NVLink islands each) with
# select/cons_tres_nvlplace, started fresh for the test run.
source "$(dirname "$0")/lib.sh"
require_cluster_tools
"$NVL_ROOT/contrib/cluster/clean.sh" >/dev/null || fail "cannot clean $NVL_RUN"
use_cluster nvlplace
note "cluster up in $NVL_RUN ($(nvl_nodes | wc -l) nodes)"
