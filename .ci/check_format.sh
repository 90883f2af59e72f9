#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The C lines a branch adds or changes follow .clang-format. The tree as a
# whole does not (it predates the file, and reformatting it would change
# about 7 % of its lines), so only the lines that differ from the merge base
# with main are checked: `git clang-format --diff` over the files added or
# modified since then (a file moved with small edits is left as it is); on
# main, the lines of its last commit.
#
# usage: .ci/check_format.sh [BASE_REF]   (default: main, else origin/main)
# Exit status: 0 clean, 1 lines to reformat (the diff is printed), 77 when
# there is nothing to compare with (no git checkout, no base ref).
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in clang-format git-clang-format; do
  command -v "$tool" >/dev/null 2>&1 || { echo "format: $tool is not installed (.ci/deps.sh)"; exit 1; }
done
git rev-parse --git-dir >/dev/null 2>&1 || { echo "format: not a git checkout, nothing to compare"; exit 77; }
base=""
for ref in "${1:-main}" origin/main; do
  base=$(git merge-base HEAD "$ref" 2>/dev/null) && break
done
[ -n "$base" ] || { echo "format: no merge base with ${1:-main} or origin/main, nothing to compare"; exit 77; }
# On main itself (CI's clean clone) the merge base is HEAD: check what the
# last commit brought, against its first parent (for a merge, the branch's
# whole change).
if [ "$base" = "$(git rev-parse HEAD)" ] && [ -z "$(git status --porcelain -- '*.c' '*.h')" ]; then
  base=$(git rev-parse HEAD~1 2>/dev/null) || { echo "format: a single commit, nothing to compare"; exit 77; }
fi
mapfile -t files < <(git diff --name-only --diff-filter=AM -M "$base" -- '*.c' '*.h')
if [ ${#files[@]} = 0 ]; then
  echo "format: no C file added or modified since $(git rev-parse --short "$base")"
  exit 0
fi
out=$(git clang-format --diff --extensions c,h "$base" -- "${files[@]}" 2>&1) || true
if grep -q '^diff ' <<<"$out"; then
  echo "$out"
  echo "format: the lines above differ from .clang-format; fix them with: git clang-format $(git rev-parse --short "$base")"
  exit 1
fi
echo "format: ${#files[@]} C files added or modified since $(git rev-parse --short "$base"), their changed lines formatted"
