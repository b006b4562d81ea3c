#!/bin/bash
# Query shapes against real servers (issue 9).
#
# A legacy "application" — one request is one process of the test clients
# pg_legacy / my_legacy: a numeric id pasted unescaped, a name, an IN list,
# a multi-row INSERT, an UPDATE and a paged search — runs first under
# QUOTEGUARD_SHAPES=learn (four requests at once, so several processes append
# to the profile together), then under QUOTEGUARD_SHAPES=enforce with other
# data: every legitimate request must still work (the false-positive count
# must be 0).  Then the attacks on the unescaped id — numeric `1 OR 1=1`,
# UNION, stacked queries — which succeed without quoteguard, are blocked
# under enforce (the statement never reaches the server) and logged under
# audit.  The same for the e2e PHP application (tests/e2e/php) served by
# php -S with a page that pastes its id unescaped, which sqlmap exploits
# without quoteguard and cannot under enforce.  The profiles are checked with
# `quoteguard shapes`.
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh
. tests/lib/mariadb.sh

qg_require_build clients/pg_legacy clients/my_legacy
PG_LEGACY=$QG_BUILD/clients/pg_legacy
MY_LEGACY=$QG_BUILD/clients/my_legacy
SHAPES_TOOL=scripts/quoteguard-shapes

WORK=$(mktemp -d /tmp/qg-shapes.XXXXXX) || tap_bail "no temp dir"
chmod 755 "$WORK"
qg_at_exit "rm -rf '$WORK'"
PROFILES=$WORK/profiles
mkdir -p "$PROFILES"

hex() { printf '%s' "$1" | od -An -v -tx1 | tr -d ' \n'; }
sq() { printf '%s' "${1//\'/\'\'}"; } # doubles single quotes

# Runs a command with the shim in MODE with shapes SHAPES and LOG.
#   shaped MODE SHAPES LOG command…
shaped() {
    local mode=$1 shapes=$2 log=$3
    shift 3
    QUOTEGUARD_SHAPES=$shapes QUOTEGUARD_SHAPES_FILE="$PROFILES/%p.shapes" \
        with_shim "$mode" "$log" "$@"
}

blocked_count() { grep -ac 'quoteguard: blocked' <<<"$1"; }
profile_lines() { grep -cv '^#' "$1" 2>/dev/null || echo 0; }
lists_cleanly() { "$SHAPES_TOOL" list "$@" >/dev/null; } # malformed lines: exit 2

# ------------------------------------------------------------- PostgreSQL

if pg_available && pg_start; then
    pg_psql -q -c "CREATE TABLE users (id int PRIMARY KEY, name text, city text, visits int DEFAULT 0, secret text);
                   INSERT INTO users (id, name, city, secret) VALUES
                     (1, 'alice', 'Tokyo', 'pg_secret_alice'), (2, 'bob', 'Turin', 'pg_secret_bob'),
                     (3, 'o''brien', 'Dublin', 'pg_secret_ob'), (17, 'Zoë', 'Toulouse', 'pg_secret_zoe');
                   CREATE TABLE visits (user_id int, page text, at timestamptz DEFAULT now())" ||
        tap_bail "cannot create the PostgreSQL tables"

    # One request: ID pasted unescaped (MARKER tags the statement in the
    # server log), then the page's other statements with ordinary values.
    #   pg_request ID NAME IDS ROWS OFFSET MARKER [runner…]
    pg_request() {
        local id=$1 name=$2 ids=$3 rows=$4 offset=$5 marker=$6
        shift 6
        "$@" "$PG_LEGACY" --escape none \
            --after "SELECT id, name FROM users WHERE name = '$(sq "$name")' ORDER BY id" \
            --after "SELECT count(*) FROM users WHERE id IN ($ids)" \
            --after "INSERT INTO visits (user_id, page) VALUES $rows" \
            --after "UPDATE users SET visits = visits + 1 WHERE id = $id" \
            --after "SELECT name, city FROM users WHERE city LIKE 'T%' ORDER BY name LIMIT 5 OFFSET $offset" \
            "SELECT /*$marker*/ name, city FROM users WHERE id = %s" "$(hex "$id")"
    }
    pg_learn_data=(
        "1|alice|1,2,3|(1,'home'),(1,'about')|0"
        "2|bob|2|(2,'home')|5"
        "3|o'brien|1,3|(3,'home'),(3,'cart'),(3,'pay')|0"
        "1|nobody|5,6|(1,'search')|10"
    )
    pg_enforce_data=(
        "17|Zoë|4,5,6,7,8,9,10|(17,'home'),(17,'a'),(17,'b'),(17,'c'),(17,'d')|20"
        "2|o'brien|17|(2,'x')|0"
        "-1|O''Hara|1,2|(1,'back'),(2,'forth')|3"
        "3|alice|3,2,1,0,-1|(3,'end')|1"
    )

    # Learn: the four requests at once, twice (the second round adds nothing).
    for round in 1 2; do
        learners=()
        for row in "${pg_learn_data[@]}"; do
            IFS='|' read -r id name ids rows offset <<<"$row"
            pg_request "$id" "$name" "$ids" "$rows" "$offset" "learn" \
                shaped enforce learn "$WORK/pg-learn.log" >>"$WORK/pg-learn.out" &
            learners+=($!)
        done
        wait "${learners[@]}" # not the server, which may be a child of this shell
    done
    pg_profile=$PROFILES/pg_legacy.shapes
    pg_shapes=$(profile_lines "$pg_profile")
    ok "PG learn: every request worked" [ "$(grep -ac '^ERROR' "$WORK/pg-learn.out")" -eq 0 ]
    ok "PG learn: 8 processes, 4 at a time: the application's 6 shapes, each on one line ($pg_shapes lines)" \
        [ "$pg_shapes" -eq 6 ]
    ok "PG learn: the profile is well formed (quoteguard shapes list reads it)" \
        lists_cleanly "$pg_profile"
    matches "$(cat "$pg_profile")" $'^[0-9a-f]{16}\tpostgres\tpg_legacy\t20[0-9-]{8}T[0-9:.]{12}Z\tpg_legacy[!+][^\t]*\tselect name, city from users where id = \\?$' \
        "PG learn: a line has fingerprint, dialect, program, time, site and the normalized sample"
    has "$(cat "$pg_profile")" "	insert into visits (user_id, page) values (?, ?)" \
        "PG learn: VALUES rows of any count are one shape"
    has "$(cat "$pg_profile")" "	select count (*) from users where id in (?)" \
        "PG learn: IN lists of any length are one shape"

    # Enforce with other data: the false positives.
    pg_fp=0
    for row in "${pg_enforce_data[@]}"; do
        IFS='|' read -r id name ids rows offset <<<"$row"
        out=$(pg_request "$id" "$name" "$ids" "$rows" "$offset" "legit" shaped enforce enforce "$WORK/pg-enforce.log")
        pg_fp=$((pg_fp + $(blocked_count "$out")))
        printf '%s\n' "$out" >>"$WORK/pg-enforce.out"
    done
    ok "PG enforce: other data, no false positive ($pg_fp blocked of ${#pg_enforce_data[@]} requests x 6 statements)" \
        [ "$pg_fp" -eq 0 ]
    ok "PG enforce: every statement ran" [ "$(grep -ac '^ERROR' "$WORK/pg-enforce.out")" -eq 0 ]
    lacks "$(cat "$WORK/pg-enforce.log" 2>/dev/null)" "unknown_shape" "PG enforce: nothing logged for legitimate requests"

    # The attacks on the unescaped id.
    #   name  input  proof that it works without quoteguard
    pg_attacks=(
        "numeric|1 OR 1=1|ROW: bob"
        "union|0 UNION SELECT secret, name FROM users|ROW: pg_secret_alice"
        "stacked|1; UPDATE users SET city = 'pwned' WHERE id = 2|STATUS: PGRES_COMMAND_OK"
        "comment|1 OR 1=1 --|ROW: bob"
    )
    for row in "${pg_attacks[@]}"; do
        IFS='|' read -r kind input proof <<<"$row"
        out=$(pg_request "$input" alice 1 "(1,'x')" 0 "qgs_plain_$kind")
        has "$out" "$proof" "PG $kind: without quoteguard the attack works ($proof)"
        out=$(pg_request "$input" alice 1 "(1,'x')" 0 "qgs_enf_$kind" shaped enforce enforce "$WORK/pg-attack.log")
        matches "$out" '^ERROR: 42601 quoteguard: blocked unknown_shape [0-9a-f]{16}' \
            "PG $kind: enforce blocks it as unknown_shape"
        lacks "$(cat "$QG_PG_LOG")" "qgs_enf_$kind" "PG $kind: the statement never reached the server"
        has "$out" "ROW: Zoë|Toulouse" "PG $kind: the request's legitimate statements still ran"
        out=$(pg_request "$input" alice 1 "(1,'x')" 0 "qgs_audit_$kind" shaped audit enforce "$WORK/pg-audit-$kind.log")
        has "$out" "$proof" "PG $kind: audit lets it through"
        matches "$(cat "$WORK/pg-audit-$kind.log")" '"mode":"audit","action":"logged".*"reason":"unknown_shape"' \
            "PG $kind: audit logs it as unknown_shape"
        pg_psql -q -c "UPDATE users SET city = 'Turin' WHERE id = 2" # after the stacked one
    done
    has "$(cat "$WORK/pg-attack.log")" '"detail":"shape not in the profile: select name, city from users where id = ? or ? = ?"' \
        "PG: the log shows the unknown shape's normalized sample"
    pg_stop
else
    tap_diag "PostgreSQL not available: its part is skipped"
fi

# ------------------------------------------------------------------ MySQL

if my_available && my_start; then
    my_sql -e "CREATE DATABASE qg;
               CREATE TABLE qg.users (id INT PRIMARY KEY, name VARCHAR(64), city VARCHAR(64), visits INT DEFAULT 0, secret VARCHAR(64));
               INSERT INTO qg.users (id, name, city, secret) VALUES
                 (1, 'alice', 'Tokyo', 'my_secret_alice'), (2, 'bob', 'Turin', 'my_secret_bob'),
                 (3, 'o''brien', 'Dublin', 'my_secret_ob'), (17, 'Zoe', 'Toulouse', 'my_secret_zoe');
               CREATE TABLE qg.visits (user_id INT, page VARCHAR(64), at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)" ||
        tap_bail "cannot create the MariaDB tables"

    # The same application on MariaDB (multi-statement connection, as some
    # legacy programs have): my_request ID NAME IDS ROWS OFFSET MARKER [runner…]
    my_request() {
        local id=$1 name=$2 ids=$3 rows=$4 offset=$5 marker=$6
        shift 6
        "$@" "$MY_LEGACY" "$QG_MY_SOCKET" db=qg multi escape=none \
            "template=SELECT /*$marker*/ name, city FROM users WHERE id = %s" "input=$(hex "$id")" \
            "sql=SELECT id, name FROM users WHERE name = '$(sq "$name")' ORDER BY id" \
            "sql=SELECT count(*) FROM users WHERE id IN ($ids)" \
            "sql=INSERT INTO visits (user_id, page) VALUES $rows" \
            "sql=UPDATE users SET visits = visits + 1 WHERE id = $id" \
            "sql=SELECT name, city FROM users WHERE city LIKE 'T%' ORDER BY name LIMIT $offset, 5"
    }
    my_learn_data=("${pg_learn_data[@]}")
    my_enforce_data=(
        "17|Zoe|4,5,6,7,8,9,10|(17,'home'),(17,'a'),(17,'b'),(17,'c'),(17,'d')|20"
        "2|o'brien|17|(2,'x')|0"
        "-1|O''Hara|1,2|(1,'back'),(2,'forth')|3"
        "3|alice|3,2,1,0,-1|(3,'end')|1"
    )
    for round in 1 2; do
        learners=()
        for row in "${my_learn_data[@]}"; do
            IFS='|' read -r id name ids rows offset <<<"$row"
            my_request "$id" "$name" "$ids" "$rows" "$offset" "learn" \
                shaped enforce learn "$WORK/my-learn.log" >>"$WORK/my-learn.out" &
            learners+=($!)
        done
        wait "${learners[@]}" # not the server, which may be a child of this shell
    done
    my_profile=$PROFILES/my_legacy.shapes
    my_shapes=$(profile_lines "$my_profile")
    ok "MySQL learn: every request worked" [ "$(grep -ac '^ERROR' "$WORK/my-learn.out")" -eq 0 ]
    ok "MySQL learn: 8 processes, 4 at a time: the application's 6 shapes, each on one line ($my_shapes lines)" \
        [ "$my_shapes" -eq 6 ]
    ok "MySQL learn: the profile is well formed" lists_cleanly "$my_profile"
    has "$(cat "$my_profile")" "	mysql	my_legacy	" "MySQL learn: lines carry dialect and program"

    my_fp=0
    for row in "${my_enforce_data[@]}"; do
        IFS='|' read -r id name ids rows offset <<<"$row"
        out=$(my_request "$id" "$name" "$ids" "$rows" "$offset" "legit" shaped enforce enforce "$WORK/my-enforce.log")
        my_fp=$((my_fp + $(blocked_count "$out")))
        printf '%s\n' "$out" >>"$WORK/my-enforce.out"
    done
    ok "MySQL enforce: other data, no false positive ($my_fp blocked of ${#my_enforce_data[@]} requests x 6 statements)" \
        [ "$my_fp" -eq 0 ]
    ok "MySQL enforce: every statement ran" [ "$(grep -ac '^ERROR' "$WORK/my-enforce.out")" -eq 0 ]

    my_attacks=(
        "numeric|1 OR 1=1|ROW: bob|"
        "union|0 UNION SELECT secret, name FROM users|ROW: my_secret_alice"
        "stacked|1; UPDATE users SET city = 'pwned' WHERE id = 2|OK: 1"
        "comment|1 OR 1=1 #|ROW: bob|"
    )
    for row in "${my_attacks[@]}"; do
        IFS='|' read -r kind input proof <<<"${row%|*}"
        proof=${row#*|*|}
        out=$(my_request "$input" alice 1 "(1,'x')" 0 "qgs_plain_$kind")
        has "$out" "$proof" "MySQL $kind: without quoteguard the attack works ($proof)"
        out=$(my_request "$input" alice 1 "(1,'x')" 0 "qgs_enf_$kind" shaped enforce enforce "$WORK/my-attack.log")
        matches "$out" '^ERROR: 1105 42601 quoteguard: blocked unknown_shape [0-9a-f]{16}' \
            "MySQL $kind: enforce blocks it as unknown_shape"
        lacks "$(cat "$QG_MY_LOG")" "qgs_enf_$kind" "MySQL $kind: the statement never reached the server"
        out=$(my_request "$input" alice 1 "(1,'x')" 0 "qgs_audit_$kind" shaped audit enforce "$WORK/my-audit-$kind.log")
        has "$out" "$proof" "MySQL $kind: audit lets it through"
        matches "$(cat "$WORK/my-audit-$kind.log")" '"mode":"audit","action":"logged".*"reason":"unknown_shape"' \
            "MySQL $kind: audit logs it as unknown_shape"
        my_sql -e "UPDATE qg.users SET city = 'Turin' WHERE id = 2" # after the stacked one
    done
    my_stop
else
    tap_diag "MariaDB not available: its part is skipped"
fi

tap_done
