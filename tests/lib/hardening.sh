# Helpers of the hardening tests tests/t/9*.t (source after shim.sh).
#
#   qg_helper_build OUT SRC [cc args…]   compiles a test helper into $QG_HELPERS
#                                        (once per source change)
#   qg_preload_env MODE LOG PRELOAD cmd… like with_shim, LD_PRELOAD given whole
#   qg_log_findings LOG                  prints the number of finding lines
#   pg_more_connections N                restarts the pg.sh server with max_connections = N

QG_HELPERS=$QG_BUILD/hardening
mkdir -p "$QG_HELPERS"

qg_helper_build() {
    local out=$1 src=$2
    shift 2
    local stale= dep
    for dep in "$src" "$@"; do # the source, and libraries it links
        [ -f "$dep" ] && [ "$dep" -nt "$QG_HELPERS/$out" ] && stale=1
    done
    if [ ! -e "$QG_HELPERS/$out" ] || [ -n "$stale" ]; then
        ${CC:-cc} -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -g -Iinclude -Isrc/core -Isrc/wire -Isrc/policy -Isrc/front \
            -o "$QG_HELPERS/$out" "$src" "$@" || return 1
    fi
    printf '%s\n' "$QG_HELPERS/$out"
}

qg_preload_env() {
    local mode=$1 log=$2 preload=$3
    shift 3
    env -u QUOTEGUARD_ALLOW -u QUOTEGUARD_ONLY_PROGRAMS -u QUOTEGUARD_SKIP_PROGRAMS \
        QUOTEGUARD_CONFIG=/dev/null QUOTEGUARD_MODE="$mode" QUOTEGUARD_LOG="$log" \
        QUOTEGUARD_VERBOSE="${QUOTEGUARD_VERBOSE:-1}" LD_PRELOAD="$preload" "$@"
}

# Finding lines carry "reason"; start-up lines and events do not.
qg_log_findings() {
    if [ -f "$1" ]; then grep -ac '"reason":' "$1"; else echo 0; fi
}

pg_more_connections() {
    echo "max_connections = $1" >>"$QG_PG_DIR/data/postgresql.conf"
    pg_as_server_user "$QG_PG_BIN/pg_ctl" -D "$QG_PG_DIR/data" -l "$QG_PG_LOG" -w -t 30 restart \
        >/dev/null 2>&1
}
