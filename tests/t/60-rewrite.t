#!/bin/bash
# Rewrite mode against a real server with log_statement = all.
#  1. tests/clients/pg_rewrite_compare runs a table of queries (multibyte
#     text in UTF8, SJIS, LATIN1 and EUC_JP, E'' and U&'' escapes, IN lists,
#     NULL comparisons, ORDER BY with literal arguments, CTEs, RETURNING,
#     ON CONFLICT, transactions, PQsendQuery loops, errors, notices) with
#     QUOTEGUARD_MODE=off, with rewrite (QUOTEGUARD_REWRITE=all: every
#     literal that can be replaced) and with rewrite's default (only queries
#     with a literal that is not plain ASCII text), each on a fresh
#     database: everything the application sees must be the same.  The
#     server log shows which queries ran as parameterized statements and the
#     shim's debug log why the others were left alone.
#  2. The plain-SQL files of ../shared/corpus/pg-regress run through psql in
#     off mode and in rewrite mode (all), each on a fresh server of its own
#     (OIDs show in the output and are cluster-wide): the counts of
#     rewritten / left-alone statements and of changed results are printed.
# Needs ../shared/corpus, the reference material beside the source tree.
# servers: pg
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/atexit.sh
. tests/lib/pg.sh

qg_require_build clients/pg_rewrite_compare
pg_available || tap_skip_all "no PostgreSQL server binaries (or not root)"
COMPARE=$QG_BUILD/clients/pg_rewrite_compare
CORPUS=../shared/corpus
WORK=$(mktemp -d /tmp/qg-rewrite.XXXXXX) || tap_bail "no temp dir"
qg_at_exit "rm -rf '$WORK'"


# ---------------------------------------------------------------- corpus
# The plain-SQL files (README §3.3: no psql meta-commands, variables or COPY
# data), all in one database, in one order.  Both runs go in the background
# while the comparison table runs.
PLAIN=$WORK/plain.txt
if [ -r "$CORPUS/pg-regress-index.tsv" ]; then
    awk -F'\t' -v dir="$CORPUS/pg-regress" \
        'NR > 1 && $4 !~ /psql_|copy_from_stdin/ { print dir "/" $1 }' \
        "$CORPUS/pg-regress-index.tsv" >"$PLAIN"
else
    : >"$PLAIN"
fi

# Runs every file of $PLAIN in database "corpus" with the shim in MODE;
# psql echoes each statement (-a) so the outputs of two runs line up.
run_corpus() { # MODE OUT SHIMLOG
    local mode=$1 out=$2 shimlog=$3 f
    pg_psql -d postgres -c "CREATE DATABASE corpus TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'" \
        >/dev/null || return 1
    while IFS= read -r f; do
        printf '=== %s\n' "${f##*/}"
        QUOTEGUARD_VERBOSE=2 QUOTEGUARD_REWRITE=all with_shim "$mode" "$shimlog" timeout 120 \
            "$QG_PG_BIN/psql" -X -a -q -v VERBOSITY=terse -d corpus -f "$f" 2>&1
    done <"$PLAIN" >"$out"
}

# Starts a server of its own and runs the corpus there in the background.
corpus_in_background() { # MODE
    (
        QG_AT_EXIT= # this subshell stops its own server
        pg_start >"$WORK/corpus-$1.server" 2>&1 || exit 1
        run_corpus "$1" "$WORK/corpus-$1.out" "$WORK/corpus-$1.shim" || exit 1
        grep -ac 'execute <unnamed>' "$QG_PG_LOG" >"$WORK/corpus-$1.executed" || true
    ) &
}
if [ -s "$PLAIN" ]; then
    corpus_in_background off
    CORPUS_OFF_PID=$!
    corpus_in_background rewrite
    CORPUS_ON_PID=$!
fi

# -------------------------------------------------- the comparison table
pg_start || tap_bail "cannot start PostgreSQL"
for db in rw_off rw_on rw_needed; do
    pg_psql -d postgres -c "CREATE DATABASE $db TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'" \
        >/dev/null || tap_bail "cannot create database $db"
done

with_shim off "$WORK/off.shim" env PGDATABASE=rw_off "$COMPARE" >"$WORK/off.out" 2>"$WORK/off.err"
ok "off mode: the client ran the whole table" [ $? -eq 0 ]
log_from=$(($(wc -c <"$QG_PG_LOG") + 1))
QUOTEGUARD_VERBOSE=2 QUOTEGUARD_REWRITE=all with_shim rewrite "$WORK/on.shim" \
    env PGDATABASE=rw_on "$COMPARE" >"$WORK/on.out" 2>"$WORK/on.err"
ok "rewrite mode: the client ran the whole table" [ $? -eq 0 ]
tail -c +"$log_from" "$QG_PG_LOG" >"$WORK/on.server.log"
log_from=$(($(wc -c <"$QG_PG_LOG") + 1))
QUOTEGUARD_VERBOSE=2 with_shim rewrite "$WORK/needed.shim" env PGDATABASE=rw_needed "$COMPARE" \
    >"$WORK/needed.out" 2>"$WORK/needed.err"
ok "rewrite mode, default (needed): the client ran the whole table" [ $? -eq 0 ]
tail -c +"$log_from" "$QG_PG_LOG" >"$WORK/needed.server.log"

# The table: id and expectation, in order.
mapfile -t ENTRIES < <(awk '$2 ~ /^expect=/ { sub("expect=", "", $2); print $1, $2 }' "$WORK/off.out")
ok "the table has at least 40 queries" [ "$(printf '%s\n' "${ENTRIES[@]}" | grep -c '^q')" -ge 40 ]

block() { grep -a "^$1 " "$2"; }
# What the server received.  Rewritten: "execute <unnamed>: /*id*/ … $1"
# (or, when the statement failed before it ran, "STATEMENT: /*id*/ … $1");
# left alone: the original text.
ran_with_params() { # ID [RUN]
    grep -aE "(execute <unnamed>|STATEMENT): +/\*$1\*/" "$WORK/${2:-on}.server.log" | grep -q '\$1'
}
ran_as_text() { grep -aqE "(statement|STATEMENT): +/\*$1\*/" "$WORK/${2:-on}.server.log"; }
# A data error in a parameter's own value is raised at bind time: same
# SQLSTATE and message, but no cursor position and a CONTEXT line naming the
# parameter (docs in src/core/rewriter.c).
strip() { printf '%s\n' "$1" | grep -av -e " position " -e " context "; }
# Compares each query's block in off.out with RUN.out, as tests.
same_results() { # RUN LABEL
    local run=$1 label=$2 entry id expect off on n_same=0
    for entry in "${ENTRIES[@]}"; do
        id=${entry% *}
        expect=${entry#* }
        off=$(block "$id" "$WORK/off.out")
        on=$(block "$id" "$WORK/$run.out")
        if [ "$expect" = K ]; then
            ok "$id: same result, SQLSTATE and message ($label)" [ "$(strip "$off")" = "$(strip "$on")" ]
            # (The default sends a plain literal as it is: nothing may differ.)
            if ran_with_params "$id" "$run"; then
                tap_todo "$id: same error position and context ($label)" \
                    "bind-time input errors carry no position" [ "$off" = "$on" ]
            else
                ok "$id: same error position and context, sent as it is ($label)" [ "$off" = "$on" ]
            fi
        elif [ "$off" = "$on" ]; then
            n_same=$((n_same + 1))
        else
            ok "$id: same result in off and $label" false
            tap_diag "$(diff <(printf '%s\n' "$off") <(printf '%s\n' "$on"))"
        fi
    done
    ok "$label: every other query: identical status, cmdStatus, cmdTuples, oid, fields, types, rows, errors, notices, transaction state ($n_same)" \
        [ "$n_same" -eq "$(printf '%s\n' "${ENTRIES[@]}" | grep -vc ' K$')" ]
}
same_results on "rewrite mode (all)"
same_results needed "rewrite mode (needed)"
has "$(cat "$WORK/off.out")" "q34 notice severity=NOTICE sqlstate=00000 message=say alpha" \
    "the table covers notices"
has "$(cat "$WORK/off.out")" "q40 error sqlstate=23505" "the table covers an error inside a transaction"
has "$(cat "$WORK/off.out")" "q41 error sqlstate=25P02" "… and the aborted transaction after it"
has "$(cat "$WORK/off.out")" "q61 results=2" "the table covers a PQsendQuery loop with two results"

# ------------------------------------------------ what the server received
wrong=()
n_params=0
n_text=0
for entry in "${ENTRIES[@]}"; do
    id=${entry% *}
    case ${entry#* } in
    R | K) if ran_with_params "$id"; then n_params=$((n_params + 1)); else wrong+=("$id should have run with parameters"); fi ;;
    L) if ! ran_with_params "$id" && ran_as_text "$id"; then n_text=$((n_text + 1)); else wrong+=("$id should have run as sent"); fi ;;
    esac
done
ok "server log: $n_params queries ran as parameterized statements, $n_text as sent" [ ${#wrong[@]} -eq 0 ]
[ ${#wrong[@]} -eq 0 ] || tap_diag "${wrong[@]}"
has "$(cat "$WORK/on.server.log")" "DETAIL:  parameters: \$1 = '日本語'" \
    "server log: the UTF8 value arrived as a parameter"
has "$(cat "$WORK/on.server.log")" "/*q45*/ SELECT id, s FROM rw.t WHERE s = \$1  " \
    "server log: the SJIS literal with 0x5c trail bytes became \$1"
has "$(cat "$WORK/on.server.log")" "/*q27*/ UPDATE rw.t SET iv = '2' WHERE s = \$1" \
    "server log: an assignment with digits stays a literal (INTERVAL typmod)"
lacks "$(grep -a 'execute <unnamed>' "$WORK/on.server.log")" "/*q60*/" \
    "server log: a multi-statement string ran as one simple query"

# Why the others were left alone: the shim's debug events come in query order.
events() { # RUN
    grep -aoE '"event":"(rewritten|rewrite_skipped)","detail":"[^"]*' "$WORK/$1.shim" |
        sed -E 's/"event":"([a-z_]+)","detail":"/\1 /' | tail -n "${#ENTRIES[@]}"
}
mapfile -t EVENTS < <(events on)
mismatch=0
for i in "${!ENTRIES[@]}"; do
    id=${ENTRIES[$i]% *}
    case ${ENTRIES[$i]#* } in
    R | K) [[ ${EVENTS[$i]} == rewritten* ]] || mismatch=1 ;;
    L)
        [[ ${EVENTS[$i]} == rewrite_skipped* ]] || mismatch=1
        [[ $id == q* ]] && tap_diag "$id left alone: ${EVENTS[$i]#*: sent as it is: }"
        ;;
    esac
done
ok "shim debug log: one rewritten/rewrite_skipped event per query, matching the server log" \
    test "$mismatch" -eq 0 -a "${#EVENTS[@]}" -eq "${#ENTRIES[@]}"

# Rewrite's default: of the queries rewritten above, those whose literals
# are all plain ASCII text (no byte >= 0x80, backslash or doubled quote)
# go as they are; the others still go with parameters.
mapfile -t NEEDED < <(events needed)
wrong=()
n_params=0
n_plain=0
n_avoided=0
for i in "${!ENTRIES[@]}"; do
    id=${ENTRIES[$i]% *}
    case ${NEEDED[$i]} in
    rewritten*)
        [[ ${EVENTS[$i]} == rewritten* ]] || wrong+=("$id rewritten only in needed mode")
        if ran_with_params "$id" needed; then n_params=$((n_params + 1)); else wrong+=("$id should have run with parameters"); fi
        ;;
    *"sent as it is: its literals are plain text")
        [[ ${EVENTS[$i]} != rewritten* ]] || n_avoided=$((n_avoided + 1))
        if ! ran_with_params "$id" needed && ran_as_text "$id" needed; then n_plain=$((n_plain + 1)); else wrong+=("$id should have run as sent"); fi
        ;;
    rewrite_skipped*) [[ ${EVENTS[$i]} == rewrite_skipped* ]] || wrong+=("$id left alone for another reason: ${NEEDED[$i]}") ;;
    *) wrong+=("$id: no event") ;;
    esac
done
ok "needed mode: $n_params queries ran with parameters, $n_plain with plain literals as sent ($n_avoided of them rewritten in all mode)" \
    test ${#wrong[@]} -eq 0 -a "$n_params" -gt 0 -a "$n_avoided" -gt 0 -a "${#NEEDED[@]}" -eq "${#ENTRIES[@]}"
[ ${#wrong[@]} -eq 0 ] || tap_diag "${wrong[@]}"
has "$(cat "$WORK/needed.server.log")" "/*q45*/ SELECT id, s FROM rw.t WHERE s = \$1  " \
    "needed mode: the SJIS literal with 0x5c trail bytes became \$1"
has "$(cat "$WORK/needed.server.log")" "DETAIL:  parameters: \$1 = '日本語'" \
    "needed mode: the UTF8 value arrived as a parameter"

lacks "$(cat "$WORK/off.shim" 2>/dev/null)" "\"event\":\"rewrit" "off mode: nothing is rewritten"
QUOTEGUARD_VERBOSE=1 with_shim rewrite "$WORK/quiet.shim" env PGDATABASE=rw_on "$COMPARE" >/dev/null 2>&1
lacks "$(cat "$WORK/quiet.shim")" "\"event\":\"rewrit" "rewrites are logged only at debug verbosity"

# ----------------------------------------------------- corpus, rewrite mode
if [ -z "${CORPUS_OFF_PID:-}" ]; then
    tap_bail "needs $CORPUS/pg-regress-index.tsv (the reference material beside the source tree)"
fi
wait "$CORPUS_OFF_PID"
ok "corpus: off run finished" [ $? -eq 0 ]
wait "$CORPUS_ON_PID"
ok "corpus: rewrite run finished" [ $? -eq 0 ]

n_files=$(wc -l <"$PLAIN")
n_rewritten=$(grep -ac '"event":"rewritten"' "$WORK/corpus-rewrite.shim")
n_left=$(grep -ac '"event":"rewrite_skipped"' "$WORK/corpus-rewrite.shim")
n_executed=$(cat "$WORK/corpus-rewrite.executed")
# Each differing stretch of output is one changed statement; when the only
# change is a lost " at character N" on an ERROR line, it is the documented
# bind-time input error.
read -r n_changed n_position n_oids n_moved < <(diff "$WORK/corpus-off.out" "$WORK/corpus-rewrite.out" |
    awk -v changes="$WORK/corpus-changed.txt" '
    function catalog_free(line) {
        gsub(/(^|[^0-9])[0-9][0-9][0-9][0-9][0-9]+/, "&#", line); gsub(/[0-9]+#/, "OID", line)
        return line
    }
    function settle() {
        if (pending != "") { changed++; print pending_text > changes }
        pending = ""
    }
    # Hunk h of a region, on its own.
    function judge(h,    i, a, b, nl, nr, same, drift, k, kind, key) {
        nl = nls[h]; nr = nrs[h]
        same = (nl == nr)
        for (i = 1; same && i <= nl; i++) {
            a = L[h, i]; b = R[h, i]
            sub(/ at character [0-9]+$/, "", a)
            if (a != b || b !~ /ERROR:/) same = 0
        }
        # Catalog numbers (OIDs, relfilenodes >= 16384) advance with
        # autovacuum toasting statistics at its own pace: not a result.
        # Rows ordered by them may then come in another order: the lines
        # are compared as a multiset.
        drift = (nl == nr)
        split("", count)
        for (i = 1; drift && i <= nl; i++) {
            count[catalog_free(L[h, i])]++; count[catalog_free(R[h, i])]--
        }
        for (k in count)
            if (count[k]) drift = 0
        if (same) {
            position++
        } else if (drift) {
            oids++
        } else if (nl == 0 || nr == 0) {
            # Rows of an unordered result that come in another order: diff
            # shows lines taken out in one hunk and the same put back in
            # the next.
            kind = nl ? "out" : "in"; key = ""
            for (i = 1; i <= nl + nr; i++) key = key catalog_free(nl ? L[h, i] : R[h, i]) "\n"
            if (pending != "" && pending != kind && pending_key == key) {
                moved++; pending = ""
            } else {
                settle(); pending = kind; pending_key = key; pending_text = texts[h]
            }
        } else {
            settle()
            changed++
            print texts[h] > changes
        }
    }
    # A region: hunks at most 10 lines apart.  Rows ordered by catalog
    # numbers that moved may come in another order over several hunks of
    # every shape: where the region takes out what it puts back, as a
    # multiset, that is the drift above (with no number changed, rows of
    # an unordered result in another order).
    function flush_region(    h, i, k, drift, moved_only) {
        drift = moved_only = hunks > 1
        split("", count); split("", raw)
        for (h = 1; drift && h <= hunks; h++) {
            for (i = 1; i <= nls[h]; i++) { count[catalog_free(L[h, i])]++; raw[L[h, i]]++ }
            for (i = 1; i <= nrs[h]; i++) { count[catalog_free(R[h, i])]--; raw[R[h, i]]-- }
        }
        for (k in count)
            if (count[k]) drift = 0
        for (k in raw)
            if (raw[k]) moved_only = 0
        if (drift) {
            settle()
            if (moved_only) moved++; else oids++
        } else {
            for (h = 1; h <= hunks; h++) judge(h)
        }
        hunks = 0
    }
    /^[0-9]/ {
        split($0, range, /[acd,]/)
        if (hunks && range[1] + 0 > region_end + 10) flush_region()
        region_end = $0 ~ /^[0-9]+,/ ? range[2] + 0 : range[1] + 0
        hunks++; nls[hunks] = 0; nrs[hunks] = 0; texts[hunks] = ""
    }
    { texts[hunks] = texts[hunks] $0 "\n" }
    /^< / { L[hunks, ++nls[hunks]] = substr($0, 3); next }
    /^> / { R[hunks, ++nrs[hunks]] = substr($0, 3); next }
    END { if (hunks) flush_region(); settle(); print changed + 0, position + 0, oids + 0, moved + 0 }')
tap_diag "corpus: $n_files plain-SQL files of pg-regress, statements rewritten: $n_rewritten" \
    "corpus: left alone: $n_left, parameterized executions in the server log: $n_executed" \
    "corpus: changed results: $n_changed; error position lost (bind-time input error): $n_position;" \
    "corpus: outputs differing only in catalog numbers (OIDs): $n_oids; rows in another order: $n_moved"
ok "corpus: statements were rewritten ($n_rewritten) and left alone ($n_left)" \
    test "$n_rewritten" -gt 0 -a "$n_left" -gt 0
ok "corpus: no result changed" [ "$n_changed" -eq 0 ]
[ "$n_changed" -eq 0 ] || tap_diag "$(head -n 60 "$WORK/corpus-changed.txt")"
tap_todo "corpus: no error position lost" "bind-time input errors carry no position" [ "$n_position" -eq 0 ]
lacks "$(grep -a '"action":"blocked"' "$WORK/corpus-rewrite.shim")" "blocked" \
    "corpus: rewrite mode blocked no legitimate statement"

tap_done
