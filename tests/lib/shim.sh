# Running test programs under the shim (source this file from bash).
#
#   qg_require_build clients/pg_legacy …   bails out unless make built these
#   with_shim MODE LOGFILE command args…    runs the command with the shim
#                                           preloaded, settings from env only
# $QG_BUILD is the build tree (tests/run's $BUILD), $QG_SHIM the library.

QG_BUILD=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/${BUILD:-build}
QG_SHIM=$QG_BUILD/libquoteguard.so

qg_require_build() {
    local f
    for f in libquoteguard.so "$@"; do
        [ -e "$QG_BUILD/$f" ] || { printf 'Bail out! %s missing: run make && make clients\n' "$QG_BUILD/$f"; exit 1; }
    done
}

with_shim() {
    local mode=$1 log=$2
    shift 2
    # QUOTEGUARD_CONFIG=/dev/null: a config file on the machine must not
    # change what the test sees.
    env -u QUOTEGUARD_ALLOW -u QUOTEGUARD_ONLY_PROGRAMS -u QUOTEGUARD_SKIP_PROGRAMS \
        QUOTEGUARD_CONFIG=/dev/null QUOTEGUARD_MODE="$mode" QUOTEGUARD_LOG="$log" \
        QUOTEGUARD_VERBOSE="${QUOTEGUARD_VERBOSE:-1}" LD_PRELOAD="$QG_SHIM" "$@"
}
