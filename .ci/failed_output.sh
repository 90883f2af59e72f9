#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CI: the last lines of what each failed test of a build printed, read from
# ctest's own log, so that the tail of a CI log (what one reads first) says
# why, not only which.
#
#   .ci/failed_output.sh BUILD_DIR [LINES]      (LINES: default 25 per test)
#
# Prints nothing when the build has no failed test on record.
set -uo pipefail
b=$1 lines=${2:-25}
failed=$b/Testing/Temporary/LastTestsFailed.log
log=$b/Testing/Temporary/LastTest.log
[ -f "$failed" ] && [ -f "$log" ] || exit 0
sed 's/^[0-9]*://' "$failed" | while IFS= read -r name; do
  [ -n "$name" ] || continue
  echo "--- $b: $name, its last $lines lines"
  # A test's section: 'N/M Test: NAME', its output between 'Output:' and
  # '<end of output>', then its time and how it ended.
  awk -v name="$name" '
    $0 ~ /^[0-9]+\/[0-9]+ Test: / { sub(/^[0-9]+\/[0-9]+ Test: /, ""); mine = ($0 == name); out = 0; next }
    mine && /^Output:$/ { out = 1; getline; next }
    mine && /^<end of output>$/ { out = 0; next }
    mine && out { print; next }
    mine && /^Test time|^Test (Passed|Failed)|Timeout|Exception|"[^"]*" time elapsed/ { print }
  ' "$log" | tail -n "$lines"
done
