#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# ncclscope CLI tests, one case per ctest test (see CMakeLists.txt).
# usage: run_test.sh CASE WORKDIR   (env: NCCLSCOPE GEN_TRACE PYTHON SRC [SIM PLUGIN])
set -u
case_name=$1
work=$2
rm -rf "$work"
mkdir -p "$work/dump"
cd "$work" || exit 1

fail() {
  echo "FAIL: $*"
  exit 1
}

# expect_rc WANT CMD...: runs CMD (stderr to err.txt) and checks its exit status.
expect_rc() {
  want=$1
  shift
  "$@" >out.txt 2>err.txt
  got=$?
  [ "$got" -eq "$want" ] || { cat err.txt; fail "'$*' exited $got, want $want"; }
}

case "$case_name" in
jsonl_schema)
  "$GEN_TRACE" dump 2 || fail "gen_trace"
  expect_rc 0 "$NCCLSCOPE" export dump --format jsonl -o run.jsonl
  "$PYTHON" "$SRC/check_jsonl.py" run.jsonl --all-types --processes 2 --max-dropped 0 || fail "schema"
  # Exactly one event never stopped per process, flagged incomplete.
  n=$(grep -c '"incomplete":true' run.jsonl)
  [ "$n" -eq 2 ] || fail "$n incomplete events, want 2"
  # execStop of the Coll is its last KernelCh stop even though the children were read first.
  grep '"ncclProfileColl"' run.jsonl | grep -q '"execStop":1000002.701' || fail "Coll execStop"
  # Invalid UTF-8 and control characters from NCCL strings are escaped, never copied.
  grep -qF 'Odd\"\\\u0001\n\ufffd\ufffd(€' run.jsonl || fail "string escaping"
  ;;
jsonl_golden)
  "$GEN_TRACE" dump 2 || fail "gen_trace"
  expect_rc 0 "$NCCLSCOPE" export dump -o run.jsonl
  if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then cp run.jsonl "$SRC/golden/standard_run.jsonl"; fi
  diff -u "$SRC/golden/standard_run.jsonl" run.jsonl >diff.txt || { head -40 diff.txt; fail "differs from golden (UPDATE_GOLDEN=1 to accept)"; }
  ;;
chrome_structure)
  "$GEN_TRACE" dump 2 || fail "gen_trace"
  expect_rc 0 "$NCCLSCOPE" export dump --format chrome -o run.json
  "$PYTHON" "$SRC/check_chrome.py" run.json --ranks 2 --min-flows 10 || fail "chrome structure"
  # 64-bit communicator ids are strings in args (JSON numbers are exact only up to 2^53).
  n=$(grep -c '"commId":"0xc0ffee0001"' run.json)
  [ "$n" -eq 4 ] || fail "$n lifecycle args with commId as a string, want 4"
  ! grep -q '"commId":[0-9]' run.json || fail "a numeric commId in the Chrome args"
  ;;
perfetto)
  # --format perfetto decoded by protoc against Perfetto's schema (a subset
  # with the published field numbers) and checked against the JSONL and
  # Chrome exports: every event type, moved and async slices, flows.
  [ -n "${PROTOC:-}" ] && command -v "$PROTOC" >/dev/null 2>&1 ||
    { echo "SKIP: protoc not found (Debian protobuf-compiler; .ci/deps.sh installs it)"; exit 77; }
  for c in standard misnest; do
    rm -rf dump && mkdir dump
    if [ $c = standard ]; then "$GEN_TRACE" dump 2 || fail "gen_trace"; else "$GEN_TRACE" --case misnest dump || fail "gen_trace"; fi
    expect_rc 0 "$NCCLSCOPE" export dump -o $c.jsonl
    expect_rc 0 "$NCCLSCOPE" export dump --format chrome -o $c.json
    expect_rc 0 "$NCCLSCOPE" export dump --format perfetto -o $c.pftrace
    expect_rc 0 "$NCCLSCOPE" export dump --format perfetto --no-compress -o $c-plain.pftrace
    for t in $c.pftrace $c-plain.pftrace; do
      "$PYTHON" "$SRC/check_perfetto.py" $t --proto "$SRC/perfetto_subset.proto" --protoc "$PROTOC" \
        --jsonl $c.jsonl --chrome $c.json || fail "perfetto $t"
    done
  done
  # The filters apply as to every format.
  expect_rc 0 "$NCCLSCOPE" export dump --format perfetto --types ProxyStep -o steps.pftrace
  expect_rc 0 "$NCCLSCOPE" export dump --types ProxyStep -o steps.jsonl
  expect_rc 0 "$NCCLSCOPE" export dump --format chrome --types ProxyStep -o steps.json
  "$PYTHON" "$SRC/check_perfetto.py" steps.pftrace --proto "$SRC/perfetto_subset.proto" --protoc "$PROTOC" \
    --jsonl steps.jsonl --chrome steps.json --min-flows 0 || fail "perfetto --types"
  ;;
progress)
  # A progress line on stderr when it is a terminal (python's pty), not otherwise.
  NCCLSCOPE_DUMP_DIR="$work/dump" NCCLSCOPE_EVENT_MASK=0x7FFF "$SIM" --plugin "$PLUGIN" --nccl ideal --iters 10 >sim.txt 2>&1 ||
    { tail -20 sim.txt; fail "simulator"; }
  "$PYTHON" "$SRC/check_progress.py" "$NCCLSCOPE" dump run.jsonl || fail "progress"
  ;;
kineto_merge)
  # --merge-kineto into Kineto traces written from the simulator's truth
  # (check_kineto.py): a process with two ranks (plain JSON), the other
  # process (gzip), and processes of one rank each. Every original event
  # kept, every Coll where an independent clock reading puts it, every
  # collective kernel linked to its Coll.
  sim_run() { # DUMP TRUTH ARGS...
    d=$1
    t=$2
    shift 2
    NCCLSCOPE_DUMP_DIR="$work/$d" NCCLSCOPE_EVENT_MASK=0x7FFF "$SIM" --plugin "$PLUGIN" --nccl ideal --truth "$t" "$@" \
      >sim.txt 2>&1 || { tail -20 sim.txt; fail "simulator"; }
  }
  pids_of() { "$PYTHON" -c 'import json,sys; print(" ".join(str(p) for p in sorted({json.loads(l)["pid"] for l in open(sys.argv[1]) if "\"kind\":\"coll\"" in l})))' "$1"; }
  merge_check() { # DUMP TRUTH PID TRACE
    expect_rc 0 "$NCCLSCOPE" export "$1" --format chrome -o plain.json
    "$PYTHON" "$SRC/check_kineto.py" make --truth "$2" --pid "$3" --out "$4" ${5:-} || fail "make $4"
    expect_rc 0 "$NCCLSCOPE" export "$1" --format chrome --merge-kineto "$4" -o merged.json
    cat err.txt
    "$PYTHON" "$SRC/check_kineto.py" check --truth "$2" --pid "$3" --kineto "$4" --merged merged.json \
      --plain plain.json || fail "merge into $4"
  }
  sim_run dump truth.jsonl --procs 2
  set -- $(pids_of truth.jsonl)
  [ $# -eq 2 ] || fail "want 2 simulated processes, got: $*"
  merge_check dump truth.jsonl "$1" two-ranks.json
  merge_check dump truth.jsonl "$2" other.json.gz --gz
  rm -rf dump1 && mkdir dump1
  sim_run dump1 truth1.jsonl --procs 2 --ranks-per-proc 1
  set -- $(pids_of truth1.jsonl)
  merge_check dump1 truth1.jsonl "$1" one-rank.json
  ;;
kineto_refuse)
  # Traces that cannot be aligned are refused with the reason, and nothing is
  # written; --merge-unaligned merges them marked "unaligned"; a truncated
  # gzip and a file that is not a trace are errors.
  NCCLSCOPE_DUMP_DIR="$work/dump" "$SIM" --plugin "$PLUGIN" --nccl ideal --procs 1 --truth truth.jsonl >sim.txt 2>&1 ||
    { tail -20 sim.txt; fail "simulator"; }
  pid=$("$PYTHON" -c 'import json,sys; print(min(json.loads(l)["pid"] for l in open(sys.argv[1]) if "\"kind\":\"coll\"" in l))' truth.jsonl)
  mk() { "$PYTHON" "$SRC/check_kineto.py" make --truth truth.jsonl "$@" || fail "make $*"; }
  refused() { # TRACE RC MESSAGE
    rm -f out.json
    expect_rc "$2" "$NCCLSCOPE" export dump --format chrome --merge-kineto "$1" -o out.json
    grep -q "$3" err.txt || { cat err.txt; fail "$1: no '$3' on stderr"; }
    [ ! -e out.json ] || fail "$1: an output was written"
  }
  mk --pid "$pid" --out good.json.gz --gz
  expect_rc 0 "$NCCLSCOPE" export dump --format chrome --merge-kineto good.json.gz -o out.json
  size=$(wc -c <good.json.gz)
  head -c $((size / 2)) good.json.gz >cut.json.gz
  refused cut.json.gz 1 "truncated"
  mk --pid "$pid" --out run.json --shift-s 86400
  refused run.json 2 "another run"
  mk --pid "$pid" --out host.json --host elsewhere.example.com
  refused host.json 2 'another host or run: no recorded process on host "elsewhere.example.com"'
  mk --pid "$pid" --write-pid 1 --out pid.json
  refused pid.json 2 "another host or run"
  mk --pid "$pid" --out nobase.json --no-base
  refused nobase.json 2 "no time base"
  : >empty.json
  refused empty.json 1 "not a Kineto trace"
  printf '{"traceEvents":[{"ph":"X","ts":1' >cut.json
  refused cut.json 1 "malformed JSON"
  expect_rc 2 "$NCCLSCOPE" export dump --format jsonl --merge-kineto good.json.gz -o out.jsonl
  grep -q "writes --format chrome .* or --format perfetto" err.txt || { cat err.txt; fail "jsonl merge: no reason"; }
  # a Perfetto merge is refused for the same reasons, and writes nothing
  rm -f out.pftrace
  expect_rc 2 "$NCCLSCOPE" export dump --format perfetto --merge-kineto run.json -o out.pftrace
  grep -q "another run" err.txt || { cat err.txt; fail "perfetto merge of another run: no reason"; }
  [ ! -e out.pftrace ] || fail "a refused perfetto merge wrote its output"
  expect_rc 2 "$NCCLSCOPE" export dump --format chrome --merge-unaligned -o out.json
  expect_rc 0 "$NCCLSCOPE" export dump --format chrome --merge-kineto run.json --merge-unaligned -o unaligned.json
  grep -q "merging unaligned (another run" err.txt || { cat err.txt; fail "no unaligned warning"; }
  "$PYTHON" "$SRC/check_kineto.py" check --truth truth.jsonl --pid "$pid" --kineto run.json --merged unaligned.json \
    --unaligned || fail "unaligned merge"
  ;;
mismatch)
  # Mismatched collectives named against the simulator's truth (check_mismatch.py).
  "$PYTHON" "$SRC/check_mismatch.py" "$NCCLSCOPE" "$SIM" "$PLUGIN" "$work" || fail "mismatch"
  ;;
phases)
  # GPU time by kernel phase and the ranks it names, against the simulator's truth (check_phases.py).
  "$PYTHON" "$SRC/check_phases.py" "$NCCLSCOPE" "$SIM" "$PLUGIN" "$work" || fail "phases"
  ;;
tags)
  # Operations by userTag in the report, the plugin's summaries and the metrics, against the truth (check_tags.py).
  "$PYTHON" "$SRC/check_tags.py" "$NCCLSCOPE" "$SIM" "$PLUGIN" "$work" || fail "tags"
  ;;
kineto_inputs)
  # Kineto traces an adversary would write (check_kineto_inputs.py): members
  # and arguments of 1 MiB, a gzip bomb and other traces past the memory
  # limit (peak memory measured), strings and values that are not JSON.
  NCCLSCOPE_DUMP_DIR="$work/dump" "$SIM" --plugin "$PLUGIN" --nccl ideal --procs 1 --truth truth.jsonl >sim.txt 2>&1 ||
    { tail -20 sim.txt; fail "simulator"; }
  pid=$("$PYTHON" -c 'import json,sys; print(min(json.loads(l)["pid"] for l in open(sys.argv[1]) if "\"kind\":\"coll\"" in l))' truth.jsonl)
  "$PYTHON" "$SRC/check_kineto_inputs.py" "$NCCLSCOPE" dump truth.jsonl "$pid" "$SRC/check_kineto.py" || fail "kineto inputs"
  ;;
kineto_perfetto)
  # --format perfetto --merge-kineto (check_kineto_perfetto.py): a Kineto trace
  # written from the simulator's truth with the shapes of real traces added
  # (check_kineto.py make --extras), gzipped, merged both ways. The Chrome
  # merge is checked against the truth (check_kineto.py); the Perfetto one,
  # compressed and not, holds every event of the trace and of the Chrome
  # merge's own tracks, at the same times, with the same link arrows.
  [ -n "${PROTOC:-}" ] && command -v "$PROTOC" >/dev/null 2>&1 ||
    { echo "SKIP: protoc not found (Debian protobuf-compiler; .ci/deps.sh installs it)"; exit 77; }
  NCCLSCOPE_DUMP_DIR="$work/dump" NCCLSCOPE_EVENT_MASK=0x7FFF "$SIM" --plugin "$PLUGIN" --nccl ideal --procs 2 \
    --truth truth.jsonl >sim.txt 2>&1 || { tail -20 sim.txt; fail "simulator"; }
  pid=$("$PYTHON" -c 'import json,sys; print(min(json.loads(l)["pid"] for l in open(sys.argv[1]) if "\"kind\":\"coll\"" in l))' truth.jsonl)
  "$PYTHON" "$SRC/check_kineto.py" make --truth truth.jsonl --pid "$pid" --out k.json.gz --gz --extras || fail "make"
  expect_rc 0 "$NCCLSCOPE" export dump --format chrome -o plain.json
  expect_rc 0 "$NCCLSCOPE" export dump --format chrome --merge-kineto k.json.gz -o merged.json
  "$PYTHON" "$SRC/check_kineto.py" check --truth truth.jsonl --pid "$pid" --kineto k.json.gz --merged merged.json \
    --plain plain.json || fail "chrome merge"
  colls=$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["coll_kernels"])' k.json.gz.clock.json)
  for f in merged.pftrace:perfetto "merged-plain.pftrace:perfetto --no-compress"; do
    out=${f%%:*}
    expect_rc 0 "$NCCLSCOPE" export dump --format ${f#*:} --merge-kineto k.json.gz -o "$out"
    grep -q "3 event(s) of k.json.gz not drawn (phases CBE" err.txt || { cat err.txt; fail "$out: events not drawn, unnamed"; }
    "$PYTHON" "$SRC/check_kineto_perfetto.py" "$out" --kineto k.json.gz --chrome merged.json \
      --proto "$SRC/perfetto_subset.proto" --protoc "$PROTOC" --min-linked "$colls" --not-drawn 3 || fail "$out"
  done
  ;;
perfetto_sim)
  # The simulator with the real plugin, all event types: perfetto against
  # JSONL and Chrome, and its size against Chrome's.
  [ -n "${PROTOC:-}" ] && command -v "$PROTOC" >/dev/null 2>&1 ||
    { echo "SKIP: protoc not found (Debian protobuf-compiler; .ci/deps.sh installs it)"; exit 77; }
  NCCLSCOPE_DUMP_DIR="$work/dump" NCCLSCOPE_EVENT_MASK=0x7FFF "$SIM" --plugin "$PLUGIN" --nccl ideal --procs 2 >sim.txt 2>&1 ||
    { tail -20 sim.txt; fail "simulator"; }
  expect_rc 0 "$NCCLSCOPE" export dump -o run.jsonl
  expect_rc 0 "$NCCLSCOPE" export dump --format chrome -o run.json
  expect_rc 0 "$NCCLSCOPE" export dump --format perfetto -o run.pftrace
  "$PYTHON" "$SRC/check_perfetto.py" run.pftrace --proto "$SRC/perfetto_subset.proto" --protoc "$PROTOC" \
    --jsonl run.jsonl --chrome run.json --min-flows 100 || fail "perfetto"
  c=$(wc -c <run.json)
  p=$(wc -c <run.pftrace)
  echo "chrome $c bytes, perfetto $p bytes: $((c / p))x smaller"
  [ $((p * 8)) -le "$c" ] || fail "perfetto is not 8 times smaller than chrome ($p vs $c bytes)"
  # NCCL 2.31 (profiler v7): KernelPhase slices and the calls' userTag, alike in every export
  NCCLSCOPE_DUMP_DIR="$work/dump231" NCCLSCOPE_EVENT_MASK=all "$SIM" --plugin "$PLUGIN" --nccl 2.31 --user-tags 5 \
    --iters 4 >sim231.txt 2>&1 || { tail -20 sim231.txt; fail "simulator (--nccl 2.31)"; }
  expect_rc 0 "$NCCLSCOPE" export dump231 -o run231.jsonl
  expect_rc 0 "$NCCLSCOPE" export dump231 --format chrome -o run231.json
  expect_rc 0 "$NCCLSCOPE" export dump231 --format perfetto -o run231.pftrace
  grep -q '"type":"ncclProfileKernelPhase"' run231.jsonl || fail "no KernelPhase in the 2.31 run's JSONL"
  "$PYTHON" "$SRC/check_perfetto.py" run231.pftrace --proto "$SRC/perfetto_subset.proto" --protoc "$PROTOC" \
    --jsonl run231.jsonl --chrome run231.json --same-details userTag,phaseId,phaseName,gpuStart,gpuStop \
    || fail "perfetto (--nccl 2.31)"
  ;;
chrome_nesting)
  # Slices that overlap without nesting (gen_trace --case misnest): every
  # track nests, every event is drawn once, the expected ones moved.
  "$GEN_TRACE" --case misnest dump || fail "gen_trace"
  expect_rc 0 "$NCCLSCOPE" export dump --format chrome -o run.json
  expect_rc 0 "$NCCLSCOPE" export dump -o run.jsonl
  "$PYTHON" "$SRC/check_jsonl.py" run.jsonl || fail "schema"
  # X and B on the app thread, 39 of app3's 40 (32 on overlapping tracks, 7 async).
  "$PYTHON" "$SRC/check_chrome.py" run.json --jsonl run.jsonl --moved 41 --async 7 || fail "chrome nesting"
  for a in 0x000100000000000186a1 0x000100000000000186a5; do
    grep -q "\"cat\":\"moved\".*\"eventAddr\":\"$a\"" run.json || fail "event $a not moved"
  done
  ! grep -q '"cat":"moved".*"eventAddr":"0x000100000000000927c1"' run.json || fail "the outer event that never stops moved"
  grep -q '"name":"ch 1 ProxyStep #40"' run.json || fail "40 steps in flight: no 40th lane"
  grep -q '"name":"ch 0 ProxyStep #2"' run.json || fail "a step whose lane was not free yet shares it"
  grep -q '"name":"app3 (tid 500) overlapping #32"' run.json || fail "overlapping tracks"
  ;;
truncated)
  # Cut inside the last (END) block, and in the middle of the file.
  for cut in 10 250; do
    rm -f dump/*
    "$GEN_TRACE" dump 2 "$cut" || fail "gen_trace"
    expect_rc 0 "$NCCLSCOPE" export dump -o cut.jsonl
    grep -q 'cut at the end' err.txt || { cat err.txt; fail "no cut warning for a $cut-byte cut"; }
    grep -q 'ncclscope-node1-4002.nstrace' err.txt || fail "warning does not name the file"
    "$PYTHON" "$SRC/check_jsonl.py" cut.jsonl --processes 2 --allow-dangling || fail "cut export invalid"
    expect_rc 0 "$NCCLSCOPE" export dump --format chrome -o cut.json
    "$PYTHON" "$SRC/check_chrome.py" cut.json || fail "cut chrome invalid"
  done
  # Nothing readable: exit 1.
  rm -f dump/*
  printf 'garbage, not a trace at all...............' >dump/x.nstrace
  expect_rc 1 "$NCCLSCOPE" export dump -o none.jsonl
  grep -q 'not an ncclscope trace' err.txt || fail "no 'not an ncclscope trace' message"
  [ ! -e none.jsonl ] || fail "output left behind after a failed export"
  ;;
cli_errors)
  expect_rc 2 "$NCCLSCOPE"
  expect_rc 0 "$NCCLSCOPE" --help
  grep -q export out.txt || fail "--help does not list export"
  expect_rc 0 "$NCCLSCOPE" export --help
  grep -q -- '--format' out.txt || fail "export --help"
  expect_rc 0 "$NCCLSCOPE" demo --help
  expect_rc 2 "$NCCLSCOPE" frobnicate
  expect_rc 2 "$NCCLSCOPE" export
  expect_rc 2 "$NCCLSCOPE" export dump --format xml
  grep -q "unknown format" err.txt || fail "bad format message"
  expect_rc 2 "$NCCLSCOPE" export dump -o
  expect_rc 1 "$NCCLSCOPE" export does-not-exist -o x.jsonl
  grep -q "does-not-exist" err.txt || fail "missing dir message"
  # The command's own variables: a bad value is said, and the default used.
  "$GEN_TRACE" dump 1 || fail "gen_trace"
  NCCLSCOPE_CHROME_WARN_MB=lots NCCLSCOPE_PROGRESS_MS=' ' expect_rc 0 "$NCCLSCOPE" export dump --format chrome -o w.json
  grep -q 'warning: NCCLSCOPE_CHROME_WARN_MB="lots" is not a number in \[0, 1048576\].*using the default 256' err.txt ||
    { cat err.txt; fail "NCCLSCOPE_CHROME_WARN_MB: no warning"; }
  grep -q 'warning: NCCLSCOPE_PROGRESS_MS=" " is not a number in \[0, 3600000\].*using the default 1000' err.txt ||
    { cat err.txt; fail "NCCLSCOPE_PROGRESS_MS: no warning"; }
  NCCLSCOPE_WINDOW_OPS=7x expect_rc 0 "$NCCLSCOPE" report dump -q
  grep -q 'warning: NCCLSCOPE_WINDOW_OPS="7x" is not a number' err.txt || { cat err.txt; fail "NCCLSCOPE_WINDOW_OPS: no warning"; }
  rm -rf dump && mkdir dump
  expect_rc 1 "$NCCLSCOPE" export dump -o x.jsonl
  grep -q "no trace files" err.txt || fail "empty dir message"
  "$GEN_TRACE" dump 1 || fail "gen_trace"
  expect_rc 0 "$NCCLSCOPE" export dump
  "$PYTHON" "$SRC/check_jsonl.py" out.txt --processes 1 || fail "stdout export"
  ;;
jsonl_contract)
  # docs/jsonl-contract.md's field lists against an export of every event type (synthetic) and,
  # when the simulator is built, of a simulated run with every type recorded and PXN.
  "$GEN_TRACE" dump 2 || fail "gen_trace"
  expect_rc 0 "$NCCLSCOPE" export dump -o synth.jsonl
  set -- synth.jsonl
  if [ -n "${SIM:-}" ]; then
    NCCLSCOPE_NO_CUDA=1 NCCLSCOPE_EVENT_MASK=all NCCLSCOPE_DUMP_DIR="$work/sim" \
      "$SIM" --plugin "$PLUGIN" --fast --iters 2 --scenario pxn --procs 2 >sim.log 2>&1 || fail "simulator"
    expect_rc 0 "$NCCLSCOPE" export sim -o sim.jsonl
    set -- "$@" sim.jsonl
  fi
  "$PYTHON" "$SRC/check_contract.py" "$SRC/../../docs/jsonl-contract.md" "$@" --require-types || fail "contract"
  ;;
filters)
  "$GEN_TRACE" dump 2 || fail "gen_trace"
  "$PYTHON" "$SRC/check_filters.py" "$NCCLSCOPE" "$work/dump" "$work/out" || fail "filters"
  ;;
long_paths)
  # A 4,088-character dump directory: written by the plugin, found and read by export and report.
  "$PYTHON" "$SRC/check_long_paths.py" "$NCCLSCOPE" "$SIM" "$PLUGIN" "$work/cases" || fail "long paths"
  ;;
damaged)
  # A damaged block costs that block only; duplicates dropped; files that yield nothing: exit 3 / 1.
  "$PYTHON" "$SRC/check_damaged.py" "$NCCLSCOPE" "$GEN_TRACE" "$work/cases" || fail "damaged traces"
  ;;
safe_output)
  # Planted links and FIFOs, -o naming a FIFO, a device or a link, `-`, modes.
  "$GEN_TRACE" dump 2 || fail "gen_trace"
  "$PYTHON" "$SRC/check_safe_output.py" "$NCCLSCOPE" "$work/dump" "$work/cases" || fail "safe output"
  ;;
open_cap)
  # The cap on open events (--max-open): warning, oldest first, bounded memory.
  "$PYTHON" "$SRC/check_open_cap.py" "$NCCLSCOPE" "$GEN_TRACE" "$work" || fail "open cap"
  expect_rc 2 "$NCCLSCOPE" export dump --max-open 0
  expect_rc 2 "$NCCLSCOPE" export dump --max-open x
  ;;
process_counters)
  # The COUNTERS block: on the last finalize (JSONL, Chrome), counter tracks, report.
  "$GEN_TRACE" --case counters dump || fail "gen_trace"
  expect_rc 0 "$NCCLSCOPE" export dump -o run.jsonl
  expect_rc 0 "$NCCLSCOPE" export dump --format chrome -o run.json
  set -- --expect events=4 --expect dropped=9 --expect droppedRing=7 --expect droppedHandles=2 --expect badHandles=5 \
    --expect parentLost=1 --expect bytesWritten=123456 --expect droppedByType.ncclProfileColl=2 \
    --expect droppedByType.ncclProfileProxyStep=7 --expect eventsByType.ncclProfileProxyOp=4
  "$PYTHON" "$SRC/check_counters.py" --jsonl run.jsonl --chrome run.json "$@" || fail "process counters"
  "$PYTHON" "$SRC/check_jsonl.py" run.jsonl || fail "schema"
  "$PYTHON" "$SRC/check_chrome.py" run.json --ranks 2 || fail "chrome structure"
  # Each communicator's own finalize keeps its own counters.
  grep -c '"func":"ProfilerFinalize".*"dropped":3,' run.jsonl | grep -qx 1 || fail "first finalize lost its counters"
  expect_rc 0 "$NCCLSCOPE" report dump --json report.json --text report.txt
  grep -Eq '^  counters:5001 +4 +9 +7 +2 +5 +1 +0$' report.txt || { cat report.txt; fail "report losses table"; }
  grep -q '"processCounters":\[{"host":"counters","pid":5001,"events":4,"dropped":9,' report.json || fail "report JSON"
  # No COMM_FINI before the COUNTERS block: a process-scope finalize record carries them.
  rm -f dump/*
  "$GEN_TRACE" --case counters-nofini dump || fail "gen_trace"
  expect_rc 0 "$NCCLSCOPE" export dump -o nofini.jsonl
  expect_rc 0 "$NCCLSCOPE" export dump --format chrome -o nofini.json
  "$PYTHON" "$SRC/check_counters.py" --jsonl nofini.jsonl --chrome nofini.json --scope process "$@" || fail "no fini"
  "$PYTHON" "$SRC/check_jsonl.py" nofini.jsonl || fail "schema (no fini)"
  ;;
e2e_counters)
  # Real drops: the plugin with 4 KiB rings under the simulator's threads scenario.
  NCCLSCOPE_DUMP_DIR="$work/dump" NCCLSCOPE_NO_CUDA=1 NCCLSCOPE_RING_KB=4 NCCLSCOPE_EVENT_MASK=0x7FFF NCCLSCOPE_POLL_MS=50 \
    "$SIM" --plugin "$PLUGIN" --nccl ideal --fast --iters 3 --scenario threads >sim.txt 2>&1 || { tail -20 sim.txt; fail "simulator"; }
  expect_rc 0 "$NCCLSCOPE" export dump -o run.jsonl
  expect_rc 0 "$NCCLSCOPE" export dump --format chrome -o run.json
  if [ -n "${TRACE_STATS:-}" ]; then
    "$TRACE_STATS" dump >stats.json || fail "ns-trace-stats"
    set -- --stats stats.json
  fi
  "$PYTHON" "$SRC/check_counters.py" --jsonl run.jsonl --chrome run.json --want-drops "$@" || fail "process counters"
  "$PYTHON" "$SRC/check_chrome.py" run.json || fail "chrome structure"
  expect_rc 0 "$NCCLSCOPE" report dump -q --json report.json --text report.txt
  grep -q 'recording losses per process' report.txt || fail "report has no losses table"
  ;;
e2e)
  # The simulator's default scenario with the real plugin, exported and checked.
  NCCLSCOPE_DUMP_DIR="$work/dump" "$SIM" --plugin "$PLUGIN" --nccl ideal --procs 2 >sim.txt 2>&1 || { tail -20 sim.txt; fail "simulator"; }
  expect_rc 0 "$NCCLSCOPE" export dump -o run.jsonl
  "$PYTHON" "$SRC/check_jsonl.py" run.jsonl --no-incomplete --max-dropped 0 || fail "e2e schema"
  expect_rc 0 "$NCCLSCOPE" export dump --format chrome -o run.json
  "$PYTHON" "$SRC/check_chrome.py" run.json --jsonl run.jsonl || fail "e2e chrome"
  # Many short events: more Coll/P2p in flight per thread than the 32 lanes the exporter once had.
  mkdir -p reuse
  NCCLSCOPE_DUMP_DIR="$work/reuse" "$SIM" --plugin "$PLUGIN" --nccl ideal --scenario reuse --fast --iters 3 >sim-reuse.txt 2>&1 ||
    { tail -20 sim-reuse.txt; fail "simulator (reuse)"; }
  expect_rc 0 "$NCCLSCOPE" export reuse --format chrome -o reuse.json
  expect_rc 0 "$NCCLSCOPE" export reuse -o reuse.jsonl
  "$PYTHON" "$SRC/check_chrome.py" reuse.json --jsonl reuse.jsonl || fail "e2e chrome (reuse)"
  ;;
otf2)
  # --format otf2 read back with the OTF2 library (python3-otf2, under
  # /usr/bin/python3) and otf2-print, against the JSON Lines export of the
  # same traces: every simulator scenario, several processes and hosts, the
  # never-stopped, out-of-order and cut cases of gen_trace; then the archive
  # directory's rules.
  if [ "${HAVE_OTF2:-OFF}" != ON ]; then
    expect_rc 0 "$NCCLSCOPE" export --help
    grep -q 'built without OTF2' out.txt || fail "export --help does not say otf2 is missing"
    "$GEN_TRACE" dump 2 || fail "gen_trace"
    expect_rc 2 "$NCCLSCOPE" export dump --format otf2 -o arch
    grep -q 'built without OTF2 support: install libotf2-trace-dev and rebuild' err.txt || fail "no clear message"
    echo "SKIP: built without libotf2 (Debian libotf2-trace-dev; .ci/deps.sh installs it): the missing format was checked"
    exit 77
  fi
  OTF2_PY=/usr/bin/python3
  "$OTF2_PY" -c 'import otf2' 2>/dev/null || fail "python3-otf2 does not import under $OTF2_PY (.ci/deps.sh installs it)"
  command -v otf2-print >/dev/null || fail "otf2-print not found (Debian otf2-tools; .ci/deps.sh installs it)"
  # round_trip DIR [check options]: exports DIR both ways and compares them.
  round_trip() {
    d=$1
    shift
    expect_rc 0 "$NCCLSCOPE" export "$d" -o "$d.jsonl"
    expect_rc 0 "$NCCLSCOPE" export "$d" --format otf2 -o "$d.otf2"
    [ -f "$d.otf2/traces.otf2" ] || fail "$d: no traces.otf2 in the archive"
    otf2-print "$d.otf2/traces.otf2" >"$d.print.txt" 2>&1 || { tail -5 "$d.print.txt"; fail "otf2-print $d"; }
    n_print=$(grep -c '^ENTER ' "$d.print.txt")
    "$OTF2_PY" "$SRC/check_otf2.py" "$d.otf2/traces.otf2" "$d.jsonl" "$@" >"$d.check.txt" ||
      { cat "$d.check.txt"; fail "otf2 and jsonl differ: $d"; }
    n_check=$(sed -n 's/^otf2: \([0-9]*\) events round-tripped.*/\1/p' "$d.check.txt")
    n_gpu=$(sed -n 's/.*round-tripped.*), \([0-9]*\) GPU kernel intervals.*/\1/p' "$d.check.txt")
    [ "$n_print" -eq $((n_check + n_gpu)) ] || fail "$d: otf2-print shows $n_print regions, the bindings $n_check + $n_gpu"
    echo "$d: $(cat "$d.check.txt" | tr '\n' ' ')"
  }
  for sc in default "pxn --procs 2" graph ce "churn --iters 20" straggler "hang --hang-timeout-ms 200" reuse threads \
    nasty batch nocoll overrun leaks split; do
    name=${sc%% *}
    NCCLSCOPE_DUMP_DIR="$work/$name" NCCLSCOPE_NO_CUDA=1 NCCLSCOPE_EVENT_MASK=all "$SIM" --plugin "$PLUGIN" --fast \
      --scenario $sc >"sim-$name.txt" 2>&1 || { tail -20 "sim-$name.txt"; fail "simulator ($sc)"; }
    case $name in
    default | overrun) round_trip "$name" --min-events 1000 --min-colls 20 --min-gpu 50 ;;
    batch) round_trip "$name" --min-events 1000 --min-colls 10 --min-gpu 50 ;; # grouped: most overlap
    *) round_trip "$name" --min-events 50 ;;
    esac
  done
  # 2.31: profiler v7, KernelPhase (GPU intervals on a location of their own per channel) and userTag
  for v in 2.23 ideal 2.31; do
    NCCLSCOPE_DUMP_DIR="$work/nccl-$v" NCCLSCOPE_NO_CUDA=1 NCCLSCOPE_EVENT_MASK=all "$SIM" --plugin "$PLUGIN" --fast \
      --nccl "$v" --procs 2 --user-tags 3 >"sim-nccl-$v.txt" 2>&1 || { tail -20 "sim-nccl-$v.txt"; fail "simulator (--nccl $v)"; }
    # 2.23's profiler interface (v1) tells no communicator: regions, no collective records
    if [ "$v" = 2.23 ]; then round_trip "nccl-$v" --min-events 1000; else round_trip "nccl-$v" --min-events 1000 --min-colls 20; fi
  done
  # Two simulated hosts, node 1's CLOCK_MONOTONIC seconds off: on one clock in the archive.
  if NCCLSCOPE_DUMP_DIR="$work/hosts" NCCLSCOPE_EVENT_MASK=all "$SIM" --plugin "$PLUGIN" --nccl ideal --procs 2 \
    --nodes 2 --host-ns --host-offset-s 4 --iters 2 >sim-hosts.txt 2>&1; then
    round_trip hosts --min-events 1000 --min-colls 20 --hosts-aligned-ms 50
  else
    grep -q 'namespace\|unshare' sim-hosts.txt || { tail -20 sim-hosts.txt; fail "simulator (hosts)"; }
    echo "note: simulated hosts need user and time namespaces this machine does not give: not checked"
  fi
  mkdir -p gen && "$GEN_TRACE" gen 2 >/dev/null || fail "gen_trace"
  round_trip gen --min-events 10
  for c in misnest open counters; do
    mkdir -p "$c" && "$GEN_TRACE" --case "$c" "$c" >/dev/null || fail "gen_trace --case $c"
    round_trip "$c"
  done
  mkdir -p cut && "$GEN_TRACE" cut 2 250 >/dev/null || fail "gen_trace (cut)"
  round_trip cut --min-events 10
  # The archive directory: refused when it exists, replaced with --force (an
  # archive or an empty directory only), never left half-written.
  expect_rc 2 "$NCCLSCOPE" export gen --format otf2 -o gen.otf2
  grep -q 'exists: not replaced (--force' err.txt || fail "an existing archive: no clear refusal"
  touch gen.otf2/marker
  expect_rc 0 "$NCCLSCOPE" export gen --format otf2 -o gen.otf2 --force
  [ ! -e gen.otf2/marker ] && [ -f gen.otf2/traces.otf2 ] || fail "--force did not replace the archive"
  mkdir -p notarchive && touch notarchive/keep
  expect_rc 2 "$NCCLSCOPE" export gen --format otf2 -o notarchive --force
  grep -q 'not an OTF2 archive directory' err.txt && [ -f notarchive/keep ] || fail "a directory of other files replaced"
  expect_rc 2 "$NCCLSCOPE" export gen --format otf2
  grep -q 'writes a directory' err.txt || fail "otf2 to standard output: no clear message"
  rm -f dump/* && printf 'garbage, not a trace at all...............' >dump/x.nstrace
  expect_rc 1 "$NCCLSCOPE" export dump --format otf2 -o bad.otf2
  grep -q 'not an ncclscope trace' err.txt || fail "bad input: no clear message"
  [ ! -e bad.otf2 ] && [ -z "$(ls -d bad.otf2.tmp-* 2>/dev/null)" ] || fail "a failed export left an archive behind"
  expect_rc 0 "$NCCLSCOPE" export --help
  grep -q -- '--format otf2' out.txt || fail "export --help does not list otf2"
  ;;
otf2_unwritable)
  # An archive location that cannot be created: named with the system's
  # reason, exit status 1, nothing left behind; never "out of memory", and
  # libotf2 never gets to print its own errors about it.
  [ "${HAVE_OTF2:-OFF}" = ON ] || { echo "SKIP: built without libotf2 (tools.otf2 checks that message)"; exit 77; }
  "$GEN_TRACE" dump 2 >/dev/null || fail "gen_trace"
  touch afile
  for target in "/proc/out:No such file or directory" "afile/arch:Not a directory"; do
    path=${target%%:*}
    expect_rc 1 "$NCCLSCOPE" export dump --format otf2 -o "$path"
    grep -q "^ncclscope: cannot \(write\|create the OTF2 archive at\) $path.*: ${target#*:}$" err.txt ||
      { cat err.txt; fail "-o $path: the reason is not named"; }
    ! grep -q 'out of memory\|\[OTF2\]' err.txt || { cat err.txt; fail "-o $path: a wrong or foreign message"; }
    echo "-o $path: $(head -1 err.txt)"
  done
  if [ "$(id -u)" != 0 ]; then # root writes into a read-only directory
    mkdir ro && chmod 555 ro
    expect_rc 1 "$NCCLSCOPE" export dump --format otf2 -o ro/arch
    grep -q "cannot create the OTF2 archive at ro/arch .*: Permission denied" err.txt || { cat err.txt; fail "read-only"; }
    chmod 755 ro
  fi
  [ -z "$(ls -d afile/* ro/* 2>/dev/null)" ] || fail "a failed export left something behind"
  ;;
otf2_off)
  # A build without libotf2 (-DNCCLSCOPE_OTF2=OFF): configured, export_otf2.c
  # left out, cmd_export.c compiled (-Werror) the way that build does it.
  cmake -S "$TOP" -B off -DNCCLSCOPE_WERROR=ON -DNCCLSCOPE_OTF2=OFF -DNCCLSCOPE_UPLOT_DIR="$UPLOT_DIR" >cfg.txt 2>&1 ||
    { tail -20 cfg.txt; fail "configure with NCCLSCOPE_OTF2=OFF"; }
  grep -q '^NCCLSCOPE_HAVE_OTF2:INTERNAL=OFF' off/CMakeCache.txt || fail "NCCLSCOPE_OTF2=OFF still builds the format"
  ! grep -q 'export_otf2\.c\|NCCLSCOPE_HAVE_OTF2' off/compile_commands.json || fail "OTF2 sources or flags in the OFF build"
  "$PYTHON" - off/compile_commands.json <<'PY' || fail "cmd_export.c does not compile without OTF2"
import json, subprocess, sys
cmd = [c for c in json.load(open(sys.argv[1])) if c["file"].endswith("tools/export/cmd_export.c")][0]
sys.exit(subprocess.run(cmd["command"], shell=True, cwd=cmd["directory"]).returncode)
PY
  ;;
agreement)
  # `export` and `report` assemble the same events: every simulator scenario
  # (all event types; the simulator's default NCCL release), then gen_trace's
  # never-stopped and out-of-order cases.
  for sc in default "pxn --procs 2" graph ce "churn --iters 20" straggler "hang --hang-timeout-ms 200" reuse threads \
    nasty batch nocoll overrun leaks split; do
    name=${sc%% *}
    mkdir -p "$name"
    NCCLSCOPE_DUMP_DIR="$work/$name" NCCLSCOPE_NO_CUDA=1 NCCLSCOPE_EVENT_MASK=all "$SIM" --plugin "$PLUGIN" --fast \
      --scenario $sc >"sim-$name.txt" 2>&1 || { tail -20 "sim-$name.txt"; fail "simulator ($sc)"; }
    expect_rc 0 "$NCCLSCOPE" export "$name" -o "$name.jsonl"
    # exit status 3: a hang or a mismatch found, in `hang` only (no false alarm elsewhere)
    verdict=0
    [ "$name" = hang ] && verdict=3
    expect_rc $verdict "$NCCLSCOPE" report "$name" -q --json "$name.json" --text "$name.txt"
    "$PYTHON" "$SRC/check_agreement.py" "$name.jsonl" "$name.json" --min-events 50 || fail "export and report disagree: $sc"
    grep -q '^# verdict: ' "$name.txt" || fail "$sc: summary.txt has no verdict"
    # the verdict leads (within 15 lines), every line fits 120 columns (--wide: as long as they come)
    head -15 "$name.txt" | grep -q '^# verdict: ' || fail "$sc: no verdict in the first 15 lines of summary.txt"
    if [ "$name" = hang ]; then
      head -15 "$name.txt" | grep -q '^# verdict: HANG in communicator' || fail "hang: no HANG verdict in 15 lines"
    fi
    awk -v f="$name.txt" 'length($0) > 120 { print f ":" NR ": " length($0) " columns"; bad = 1 } END { exit bad }' \
      "$name.txt" || fail "$sc: lines over 120 columns"
  done
  # The default scenario under every NCCL release the simulator models (their
  # quirks leave events that never stop) and the ideal one.
  for v in 2.23 2.24 2.25 2.26 2.27 2.28 2.29 ideal; do
    name=nccl-$v
    mkdir -p "$name"
    NCCLSCOPE_DUMP_DIR="$work/$name" NCCLSCOPE_NO_CUDA=1 NCCLSCOPE_EVENT_MASK=all "$SIM" --plugin "$PLUGIN" --fast \
      --nccl "$v" --scenario default >"sim-$name.txt" 2>&1 || { tail -20 "sim-$name.txt"; fail "simulator (--nccl $v)"; }
    expect_rc 0 "$NCCLSCOPE" export "$name" -o "$name.jsonl"
    expect_rc 0 "$NCCLSCOPE" report "$name" -q --json "$name.json" --text "$name.txt"
    "$PYTHON" "$SRC/check_agreement.py" "$name.jsonl" "$name.json" --min-events 50 || fail "export and report disagree: --nccl $v"
  done
  mkdir -p gen
  "$GEN_TRACE" gen 2 || fail "gen_trace"
  for c in misnest open counters; do
    mkdir -p "$c"
    "$GEN_TRACE" --case "$c" "$c" >/dev/null || fail "gen_trace --case $c"
  done
  for d in gen misnest open counters; do
    expect_rc 0 "$NCCLSCOPE" export "$d" -o "$d.jsonl"
    expect_rc 0 "$NCCLSCOPE" report "$d" -q --json "$d.json" --text "$d.txt"
    "$PYTHON" "$SRC/check_agreement.py" "$d.jsonl" "$d.json" || fail "export and report disagree: gen_trace $d"
  done
  ;;
demo)
  expect_rc 0 "$NCCLSCOPE" demo --out "$work/demo"
  grep -q 'ui.perfetto.dev' out.txt || fail "demo does not say what to open"
  grep -q 'ncclscope.pftrace' out.txt || fail "demo does not name its Perfetto trace"
  [ ! -e demo/ncclscope.perfetto.json ] || fail "demo still writes ncclscope.perfetto.json"
  # ncclscope(1) names each file the demo writes as it is named
  for f in $(sed -n '/^\.B demo$/,/^\.RS$/p' "$SRC/../../man/ncclscope.1.in" | sed -n 's/^\.I[R]* \(ncclscope[^ ]*\|sim[^ ]*\|traces\/\).*/\1/p' | tr -d ','); do
    [ -e "demo/$f" ] || fail "ncclscope(1) says the demo writes $f: it does not"
  done
  "$PYTHON" "$SRC/check_jsonl.py" demo/ncclscope.jsonl --no-incomplete --max-dropped 0 || fail "demo jsonl"
  # a real Perfetto trace: the same tracks as the Chrome export of the same traces
  if [ -n "${PROTOC:-}" ] && command -v "$PROTOC" >/dev/null 2>&1; then
    expect_rc 0 "$NCCLSCOPE" export demo/traces --format chrome -o demo-chrome.json
    "$PYTHON" "$SRC/check_perfetto.py" demo/ncclscope.pftrace --proto "$SRC/perfetto_subset.proto" \
      --protoc "$PROTOC" --jsonl demo/ncclscope.jsonl --chrome demo-chrome.json || fail "demo perfetto"
  else
    echo "protoc not found: the demo's .pftrace is not decoded"
  fi
  # The slow simulated fabric: per collective and communicator, the largest
  # size takes longer (median) than the smallest, as in nccl-tests (the report's
  # JSON: its p50 of every row; the printed table shows one from 5 timed calls).
  "$PYTHON" - demo/traces/summary.json <<'PY' || fail "demo times do not grow with size"
import json, sys
rows = {}
for r in json.load(open(sys.argv[1]))["collectives"]:
    if r["func"] in ("AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce") and not r["batchOps"]:
        rows.setdefault((r["func"], r["commId"]), []).append((r["bytes"], r["p50Us"]))
bad = [(k, v) for k, v in rows.items() if len(v) > 1 and max(v)[1] <= min(v)[1]]
print("demo: %d (collective, communicator) rows, %d where the largest size is not slower" % (len(rows), len(bad)))
sys.exit(1 if bad or not rows else 0)
PY
  # A second run starts from a fresh dump directory.
  expect_rc 0 "$NCCLSCOPE" demo --out "$work/demo"
  n=$(ls demo/traces/*.nstrace | wc -l)
  [ "$n" -eq 2 ] || fail "$n trace files after a second demo, want 2"
  ;;
report_mixed)
  # Traces of two runs in one directory: refused, exit 2, naming both files; each run alone: reported.
  for run in a b; do
    NCCLSCOPE_DUMP_DIR="$work/$run" "$SIM" --plugin "$PLUGIN" --nccl ideal --fast --iters 1 >sim-$run.txt 2>&1 ||
      { tail -20 sim-$run.txt; fail "simulator ($run)"; }
    expect_rc 0 "$NCCLSCOPE" report "$run" -q
  done
  mkdir -p mixed
  cp a/*.nstrace b/*.nstrace mixed/
  expect_rc 2 "$NCCLSCOPE" report mixed -q
  grep -q "traces of two runs" err.txt || { cat err.txt; fail "report does not say the runs are mixed"; }
  [ "$(grep -o 'mixed/ncclscope-[^ ]*nstrace' err.txt | sort -u | wc -l)" -eq 2 ] || fail "the two files not named"
  [ ! -e mixed/summary.txt ] || fail "a summary of mixed runs was written"
  # two SLURM jobs (their own communicators): refused too
  rm -f mixed/*
  for job in 101 102; do
    rm -rf "$work/j$job"
    SLURM_JOB_ID=$job NCCLSCOPE_DUMP_DIR="$work/j$job" "$SIM" --plugin "$PLUGIN" --nccl ideal --fast --iters 1 \
      --seed $job >sim-$job.txt 2>&1 || { tail -20 sim-$job.txt; fail "simulator (job $job)"; }
    cp j$job/*.nstrace mixed/
  done
  expect_rc 2 "$NCCLSCOPE" report mixed -q
  grep -q "two SLURM jobs" err.txt && grep -q "job 101 and job 102" err.txt || { cat err.txt; fail "jobs not named"; }
  ;;
*)
  fail "unknown case $case_name"
  ;;
esac
echo "ok: $case_name"
