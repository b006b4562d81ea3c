# Exit handlers that add up (source this file from bash): a script that
# starts both servers must stop both, whatever order it started them in.
#   qg_at_exit COMMAND   runs COMMAND at exit, after those added later
QG_AT_EXIT=${QG_AT_EXIT-}

qg_run_at_exit() {
    local cmd
    while IFS= read -r cmd; do
        [ -n "$cmd" ] && eval "$cmd"
    done <<<"$QG_AT_EXIT"
}

qg_at_exit() {
    case $'\n'"$QG_AT_EXIT"$'\n' in
    *$'\n'"$1"$'\n'*) return 0 ;; # already registered
    esac
    QG_AT_EXIT="$1"$'\n'"$QG_AT_EXIT"
    trap qg_run_at_exit EXIT
}
