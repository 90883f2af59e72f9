#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# plugin.exports: the plugin's dynamic symbol table defines exactly
# ncclProfiler_v1 .. ncclProfiler_v7 (-fvisibility=hidden everywhere else).
# Sanitizer instrumentation adds symbols of its own that are not ours to
# hide: ASan's ODR indicators, one per instrumented global, named
# "__odr_asan.<global>" by gcc and "__odr_asan_gen_<global>" by clang. Those,
# and only those, are left out, and only for a global that is itself exported.
#   check_exports.sh PLUGIN.so
set -eu
so=$1
want='ncclProfiler_v1 ncclProfiler_v2 ncclProfiler_v3 ncclProfiler_v4 ncclProfiler_v5 ncclProfiler_v6 ncclProfiler_v7'
all=$(nm -D --defined-only "$so" | awk 'NF >= 3 { print $3 }' | sort)
ours=$(printf '%s\n' "$all" | grep -v -E '^__odr_asan(\.|_gen_)ncclProfiler_v[1-7]$' | tr '\n' ' ' | sed 's/ $//')
if [ "$ours" != "$want" ]; then
  echo "plugin.exports: $so exports"
  echo "  got:  $ours"
  echo "  want: $want"
  exit 1
fi
echo ok
