#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what building and testing ncclscope needs, from Debian's packages,
# when it is missing (nothing is installed when everything is there):
#   .ci/deps.sh        build + tests: cmake, gcc, make, python3, nm, pkg-config, json-c, zlib, groff (man pages),
#                      protoc (decodes `export --format perfetto` in tools.perfetto*), npm (report.html's
#                      chart library, uPlot, is vendored from npm at configure time: tools/report/html/package.json)
#   .ci/deps.sh --ci   also what .ci/sanitizers.sh uses: clang + libFuzzer, llvm-symbolizer, valgrind;
#                      what the metric tests drive (tests/sinks): promtool and prometheus
#                      (prometheus), prometheus-node-exporter, libcurl4 and zlib (loaded by the
#                      plugin at run time), node + npm and the OTLP decoder (tests/sinks/package.json);
#                      Grafana's dashboard types and a JSON Schema validator (tests/ops/package.json);
#                      and chromium (headless) for e2e.report_html (skipped, saying so, where it is missing);
#                      dpkg-shlibdeps (dpkg-dev), file and rpmbuild (rpm) for the packages of install.package
# Uses sudo when not run as root. The plugin itself links only libc, pthread,
# libdl and libm; json-c is for ncclscope-sim --replay, zlib for the CLI's
# compressed Perfetto output.
set -euo pipefail
declare -A package=([cmake]=cmake [gcc]=gcc [make]=make [python3]=python3 [nm]=binutils [pkg-config]=pkg-config
                    [protoc]=protobuf-compiler [clang]=clang [llvm-symbolizer]=llvm [valgrind]=valgrind
                    [promtool]=prometheus [prometheus]=prometheus [prometheus-node-exporter]=prometheus-node-exporter
                    [node]=nodejs [npm]=npm [chromium]=chromium [groff]=groff-base [dpkg-shlibdeps]=dpkg-dev
                    [file]=file [rpmbuild]=rpm)
tools=(cmake gcc make python3 nm pkg-config protoc npm groff)
[ "${1:-}" = --ci ] && tools+=(clang llvm-symbolizer valgrind promtool prometheus prometheus-node-exporter node chromium dpkg-shlibdeps file rpmbuild)
# .ci/check_format.sh: git clang-format over the changed lines.
package[clang-format]=clang-format package[git-clang-format]=clang-format
[ "${1:-}" = --ci ] && tools+=(clang-format git-clang-format)
missing=()
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("${package[$tool]}")
done
pkg-config --exists json-c 2>/dev/null || missing+=(libjson-c-dev)
pkg-config --exists zlib 2>/dev/null || missing+=(zlib1g-dev)
# libotf2 for `export --format otf2`; otf2-print and the Python bindings (Debian's python3 only) read it back in tools.otf2
pkg-config --exists otf2 2>/dev/null || missing+=(libotf2-trace-dev)
command -v otf2-print >/dev/null 2>&1 || missing+=(otf2-tools)
/usr/bin/python3 -c 'import otf2' 2>/dev/null || missing+=(python3-otf2)
if [ "${1:-}" = --ci ]; then
  ldconfig -p | grep -q 'libcurl\.so\.4 ' || missing+=(libcurl4)
  ldconfig -p | grep -q 'libz\.so\.1 ' || missing+=(zlib1g)
fi
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
# The OTLP receiver's decoder, generated from opentelemetry-proto (npm, pinned by
# tests/sinks/package-lock.json) into tests/sinks/node_modules (git-ignored).
if [ "${1:-}" = --ci ] && [ ! -f tests/sinks/node_modules/@opentelemetry/otlp-transformer/build/src/generated/root.js ]; then
  echo "deps: npm ci in tests/sinks"
  (cd "$(dirname "$0")/../tests/sinks" && npm ci --no-audit --no-fund --loglevel=error)
fi
# The dashboard check's Grafana types (@grafana/schema), their JSON Schema generator and validator (npm,
# pinned by tests/ops/package-lock.json) into tests/ops/node_modules (git-ignored).
if [ "${1:-}" = --ci ] && [ ! -d tests/ops/node_modules/@grafana/schema ]; then
  echo "deps: npm ci in tests/ops"
  (cd "$(dirname "$0")/../tests/ops" && npm ci --no-audit --no-fund --loglevel=error)
fi
# DuckDB's official Node API, for the docs' queries (tests/query: the exact version in package.json, the tree in
# package-lock.json). `npm install`, not `npm ci`: npm 11 writes only this platform's optional binary package into
# the lock file, and `npm ci` then refuses it as out of sync; install still follows the lock file.
if [ "${1:-}" = --ci ] && [ ! -d tests/query/node_modules/@duckdb/node-api ]; then
  echo "deps: npm install in tests/query"
  (cd "$(dirname "$0")/../tests/query" && npm install --no-audit --no-fund --loglevel=error)
fi
