# TAP output for the shell tests (source this file from bash).
#
#   ok "description" command args…     passes when the command succeeds
#   has "$text" "needle" "description"  passes when text contains needle (bytes, fixed)
#   lacks "$text" "needle" "description"
#   matches "$text" 'regex' "description"  some line matches the extended regex
#   tap_todo "description" "reason" command args…  a known failure (TAP TODO):
#                                       it counts when fixed, never as a failure
#   tap_done                            prints the plan and exits (1 if anything failed)
#
# A failed check prints what it looked at (the tail, or the offending lines).

TAP_COUNT=0
TAP_FAILED=0

tap_result() {
    local passed=$1 description=$2
    TAP_COUNT=$((TAP_COUNT + 1))
    if [ "$passed" -eq 0 ]; then
        printf 'ok %d - %s\n' "$TAP_COUNT" "$description"
    else
        printf 'not ok %d - %s\n' "$TAP_COUNT" "$description"
        TAP_FAILED=$((TAP_FAILED + 1))
    fi
    return "$passed"
}

tap_diag() {
    printf '%s\n' "$@" | sed 's/^/# /'
}

ok() {
    local description=$1
    shift
    "$@"
    tap_result $? "$description"
}

has() {
    printf '%s' "$1" | grep -aqF -- "$2"
    tap_result $? "$3" || tap_diag "expected to find: $2" "in (last 30 lines):" "$(printf '%s' "$1" | tail -n 30)"
}

lacks() {
    ! printf '%s' "$1" | grep -aqF -- "$2"
    tap_result $? "$3" || tap_diag "expected not to find: $2" "found in:" "$(printf '%s' "$1" | grep -aF -- "$2")"
}

matches() {
    printf '%s' "$1" | grep -aqE -- "$2"
    tap_result $? "$3" || tap_diag "expected a line matching: $2" "in (last 30 lines):" "$(printf '%s' "$1" | tail -n 30)"
}

tap_todo() {
    local description=$1 reason=$2
    shift 2
    TAP_COUNT=$((TAP_COUNT + 1))
    if "$@"; then
        printf 'ok %d - %s # TODO %s\n' "$TAP_COUNT" "$description" "$reason"
    else
        printf 'not ok %d - %s # TODO %s\n' "$TAP_COUNT" "$description" "$reason"
    fi
}

# Skips the whole file (prints the plan "1..0").
tap_skip_all() {
    printf '1..0 # SKIP %s\n' "$1"
    exit 0
}

tap_bail() {
    printf 'Bail out! %s\n' "$1"
    exit 1
}

tap_done() {
    printf '1..%d\n' "$TAP_COUNT"
    [ "$TAP_FAILED" -eq 0 ]
    exit
}
