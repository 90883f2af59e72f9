# SPDX-License-Identifier: Apache-2.0
# ncclscope bench: the option loop the bench scripts share; sourced by them.
#
#   bench_options HELP_LAST "--opt=VAR ..." "--flag=VAR ..." "$@"
#
# Each --opt=VAR of the first list takes the next argument into VAR, each
# --flag=VAR of the second sets VAR=1; -h/--help prints lines 2..HELP_LAST of
# the calling script (its header comment) and exits 0; anything else exits 2.
bench_options() {
  local help_last=$1 valued=$2 flags=$3 pair var
  shift 3
  while [ $# -gt 0 ]; do
    var=
    case "$1" in
      -h|--help) sed -n "2,${help_last}p" "$0"; exit 0 ;;
    esac
    for pair in $valued; do
      if [ "${pair%%=*}" = "$1" ]; then
        var=${pair#*=}
        printf -v "$var" '%s' "$2"
        shift
        break
      fi
    done
    for pair in $flags; do
      if [ -z "$var" ] && [ "${pair%%=*}" = "$1" ]; then
        var=${pair#*=}
        printf -v "$var" '%s' 1
      fi
    done
    if [ -z "$var" ]; then
      echo "bench/${0##*/}: unknown option $1" >&2
      exit 2
    fi
    shift
  done
}
