#!/usr/bin/env bash
# Installs what building and testing ncclscope needs, from Debian's packages,
# when it is missing (nothing is installed when everything is there):
#   .ci/deps.sh        build + tests: cmake, gcc, make, python3, nm, pkg-config, json-c, npm (report.html's
#                      chart library, uPlot, is vendored from npm at configure time: tools/html/package.json)
#   .ci/deps.sh --ci   also what .ci/sanitizers.sh uses: clang + libFuzzer, llvm-symbolizer, valgrind; and
#                      chromium (headless) for e2e.report_html (skipped, saying so, where it is missing)
# Uses sudo when not run as root. The plugin itself links only libc, pthread,
# libdl and libm; json-c is for ncclscope-sim --replay.
set -euo pipefail
declare -A package=([cmake]=cmake [gcc]=gcc [make]=make [python3]=python3 [nm]=binutils [pkg-config]=pkg-config
                    [clang]=clang [llvm-symbolizer]=llvm [valgrind]=valgrind [npm]=npm [chromium]=chromium)
tools=(cmake gcc make python3 nm pkg-config npm)
[ "${1:-}" = --ci ] && tools+=(clang llvm-symbolizer valgrind chromium)
missing=()
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("${package[$tool]}")
done
pkg-config --exists json-c 2>/dev/null || missing+=(libjson-c-dev)
apt_updated=0
install() {
  echo "deps: installing $*"
  local sudo=()
  [ "$(id -u)" = 0 ] || sudo=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  [ $apt_updated = 1 ] || { "${sudo[@]}" apt-get update -qq; apt_updated=1; }
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
if [ ${#missing[@]} -gt 0 ]; then
  install "${missing[@]}" libc6-dev
fi
# libFuzzer's runtime is not a dependency of clang: libclang-rt-<major>-dev.
if [ "${1:-}" = --ci ] && [ ! -f "$(clang -print-file-name="libclang_rt.fuzzer-$(uname -m).a")" ]; then
  install "libclang-rt-$(clang -dumpversion | cut -d. -f1)-dev"
fi
