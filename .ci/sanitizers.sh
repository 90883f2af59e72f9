#!/usr/bin/env bash
# CI: sanitizer matrix, short fuzz runs and a valgrind leak check.
#
#   .ci/sanitizers.sh [asan] [tsan] [fuzz] [valgrind]     (no argument: all four)
#
#   asan      ASan+UBSan build (build-san-address): ctest, then every simulator
#             scenario with the ncclscope plugin, traces read back by the CLI;
#             LeakSanitizer checks for leaks at exit (after the last finalize)
#   tsan      TSan build (build-san-thread): the same
#   fuzz      clang + libFuzzer + ASan/UBSan (build-fuzz): each fuzz target for
#             FUZZ_SECONDS (default 60) from its corpus in tests/fuzz/corpus/
#   valgrind  memcheck --leak-check=full on the simulator + plugin, short scenario
#
# Environment: SIM_ITERS (default 3) iterations per scenario, FUZZ_SECONDS.
# Installs clang/libFuzzer and valgrind with apt-get when they are missing.
# Exit status: non-zero on the first failure. Prints each part's duration.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PARTS=("$@")
[ ${#PARTS[@]} -eq 0 ] && PARTS=(asan tsan fuzz valgrind)
SIM_ITERS=${SIM_ITERS:-3}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
SCENARIOS=(default pxn graph ce churn straggler hang reuse threads nasty)
# Tests left out of the sanitizer ctest runs, each for a reason:
#  plugin.exports     checks the release build's dynamic symbols; ASan adds __odr_asan.* ones
#  e2e.gpu_clock, e2e.clock_fields, e2e.exec_end, e2e.straggler  accuracy/latency bounds that
#                     assume an uninstrumented run (a sanitizer slows the simulator's threads
#                     unevenly; they pass alone, not at -j2 under TSan)
#  plugin.churn       (TSan only) counts every thread of the process, TSan's own background
#                     thread included
SAN_CTEST_EXCLUDE='^(plugin\.exports|e2e\.gpu_clock|e2e\.clock_fields|e2e\.exec_end|e2e\.straggler)$'
TSAN_CTEST_EXCLUDE='^(plugin\.exports|e2e\.gpu_clock|e2e\.clock_fields|e2e\.exec_end|e2e\.straggler|plugin\.churn)$'
FAILED=()

need() { # need TOOL PACKAGE...
  command -v "$1" >/dev/null 2>&1 && return 0
  echo "sanitizers: installing ${*:2}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq --no-install-recommends "${@:2}" >/dev/null
}

timed() { # timed NAME CMD...: runs CMD, prints its duration; a failure is recorded, the rest goes on
  local t0=$SECONDS rc=0
  echo "=== sanitizers: $1"
  "${@:2}" || rc=$?
  echo "=== sanitizers: $1 $([ $rc = 0 ] && echo done || echo FAILED rc=$rc) in $((SECONDS - t0)) s"
  [ $rc = 0 ] || FAILED+=("$1")
  return 0
}

configure_build() { # configure_build DIR CMAKE_ARGS...
  cmake -S . -B "$1" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNCCLSCOPE_WERROR=ON "${@:2}" >/dev/null
  cmake --build "$1" -j2
}

# Every scenario with the ncclscope plugin; each trace is read back (export).
run_scenarios() { # run_scenarios BUILD_DIR
  local b=$1 dump rc=0
  dump=$(mktemp -d /tmp/ncclscope-san.XXXXXX)
  for s in "${SCENARIOS[@]}"; do
    local extra=()
    [ "$s" = pxn ] && extra=(--procs 2)
    [ "$s" = hang ] && extra=(--hang-timeout-ms 200)
    rm -rf "$dump"/*
    echo "--- scenario $s"
    if ! NCCLSCOPE_DUMP_DIR=$dump/trace NCCLSCOPE_NO_CUDA=1 timeout 300 "$b/ncclscope-sim" \
        --plugin "$b/libnccl-profiler-ncclscope.so" --scenario "$s" --fast --iters "$SIM_ITERS" \
        --truth "$dump/truth.jsonl" "${extra[@]}"; then
      echo "sanitizers: scenario $s failed"; rc=1; continue
    fi
    if ! timeout 300 "$b/ncclscope" export "$dump/trace" -o "$dump/out.jsonl"; then
      echo "sanitizers: export of scenario $s failed"; rc=1
    fi
  done
  # The plugin flooded with a tiny ring: every drop path under the sanitizer.
  NCCLSCOPE_DUMP_DIR=$dump/trace NCCLSCOPE_NO_CUDA=1 NCCLSCOPE_RING_KB=4 timeout 300 "$b/ncclscope-sim" \
    --plugin "$b/libnccl-profiler-ncclscope.so" --scenario threads --fast --iters "$SIM_ITERS" || rc=1
  rm -rf "$dump"
  return $rc
}

part_asan() {
  local b=build-san-address
  timed "asan: build" configure_build $b -DNCCLSCOPE_SANITIZE=address
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1:detect_stack_use_after_return=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  timed "asan: ctest" ctest --test-dir $b --output-on-failure -j2 -E "$SAN_CTEST_EXCLUDE"
  timed "asan: scenarios" run_scenarios $b
  unset ASAN_OPTIONS UBSAN_OPTIONS
}

part_tsan() {
  local b=build-san-thread
  timed "tsan: build" configure_build $b -DNCCLSCOPE_SANITIZE=thread
  export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1"
  timed "tsan: ctest" ctest --test-dir $b --output-on-failure -j2 -E "$TSAN_CTEST_EXCLUDE"
  timed "tsan: scenarios" run_scenarios $b
  unset TSAN_OPTIONS
}

part_fuzz() {
  need clang clang libclang-rt-14-dev
  local b=build-fuzz
  timed "fuzz: build" bash -c "CC=clang cmake -S . -B $b -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNCCLSCOPE_FUZZ=ON \
    -DNCCLSCOPE_SANITIZE=address >/dev/null && cmake --build $b -j2 --target fuzz_abi fuzz_reader"
  export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  for t in abi reader; do
    local work
    work=$(mktemp -d /tmp/ncclscope-fuzz.XXXXXX)
    cp "$ROOT/tests/fuzz/corpus/$t"/* "$work"/ 2>/dev/null || true
    timed "fuzz: $t ($FUZZ_SECONDS s)" "$b/fuzz_$t" -max_total_time="$FUZZ_SECONDS" -max_len=4096 -timeout=10 \
      -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$b/crash-$t-" "$work"
    rm -rf "$work"
  done
  unset ASAN_OPTIONS UBSAN_OPTIONS
}

part_valgrind() {
  need valgrind valgrind
  local b=build-valgrind dump
  timed "valgrind: build" bash -c "cmake -S . -B $b -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNCCLSCOPE_WERROR=ON \
    >/dev/null && cmake --build $b -j2 --target ncclscope-sim nccl-profiler-ncclscope"
  dump=$(mktemp -d /tmp/ncclscope-vg.XXXXXX)
  # Leaks in the plugin after its last finalize + dlclose are "definitely/indirectly lost";
  # the simulator's own blocks still reachable at exit are not errors.
  timed "valgrind: memcheck (default scenario, 1 iteration; churn: 3 reloads)" bash -c "
    NCCLSCOPE_DUMP_DIR=$dump/t NCCLSCOPE_NO_CUDA=1 valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
      --error-exitcode=9 --show-leak-kinds=definite,indirect $b/ncclscope-sim --plugin $b/libnccl-profiler-ncclscope.so \
      --fast --iters 1 &&
    NCCLSCOPE_DUMP_DIR=$dump/t NCCLSCOPE_NO_CUDA=1 valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
      --error-exitcode=9 --show-leak-kinds=definite,indirect $b/ncclscope-sim --plugin $b/libnccl-profiler-ncclscope.so \
      --scenario churn --ranks-per-proc 1 --fast --iters 3"
  rm -rf "$dump"
}

# TSan (gcc 12, clang 14) maps its shadow assuming at most 28 bits of mmap
# randomisation; with more, rerun this script without ASLR (setarch -R).
bits=$(cat /proc/sys/vm/mmap_rnd_bits 2>/dev/null || echo 28)
if [[ " ${PARTS[*]} " == *" tsan "* ]] && [ "$bits" -gt 28 ] && [ -z "${NS_NO_ASLR:-}" ] &&
   command -v setarch >/dev/null; then
  echo "sanitizers: vm.mmap_rnd_bits=$bits > 28: rerunning under setarch -R for TSan"
  exec env NS_NO_ASLR=1 setarch "$(uname -m)" -R "$0" "${PARTS[@]}"
fi

T0=$SECONDS
for p in "${PARTS[@]}"; do
  case "$p" in
    asan|tsan|fuzz|valgrind) "part_$p" ;;
    *) echo "sanitizers: unknown part $p (asan, tsan, fuzz, valgrind)" >&2; exit 2 ;;
  esac
done
echo "=== sanitizers: all done in $((SECONDS - T0)) s"
if [ ${#FAILED[@]} -gt 0 ]; then
  echo "=== sanitizers: FAILED: ${FAILED[*]}"
  exit 1
fi
