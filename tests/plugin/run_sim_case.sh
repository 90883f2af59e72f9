#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# ncclscope plugin test: run the simulator with the plugin, then compare the
# traces with its ground truth. usage: SIM CHECK WORKDIR NAME PLUGIN "SIMARGS" "CHECKARGS"
# The default-mask case (name default_mask) keeps the plugin's default mask;
# every other case records everything (NCCLSCOPE_EVENT_MASK=all).
set -e
sim=$1 check=$2 work=$3 name=$4 plugin=$5 simargs=$6 checkargs=$7
dir=$work/$name
rm -rf "$dir"
mkdir -p "$dir/dump"
if [ "$name" != default_mask ]; then NCCLSCOPE_EVENT_MASK=all; export NCCLSCOPE_EVENT_MASK; fi
# --nccl ideal unless the case names a release: these checks hold for the plugin
# only where NCCL behaves ideally (the real releases have cases of their own, tests/e2e)
case "$simargs" in *--nccl*) ;; *) simargs="--nccl ideal $simargs" ;; esac
NCCLSCOPE_DUMP_DIR=$dir/dump NCCLSCOPE_NO_CUDA=1 "$sim" --plugin "$plugin" --truth "$dir/truth.jsonl" $simargs
"$check" "$dir/truth.jsonl" "$dir/dump" $checkargs
rm -rf "$dir"
