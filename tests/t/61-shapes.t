#!/bin/bash
# Query shapes against real servers.
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
# servers: pg mariadb php-S
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

# Runs a command with the shim in MODE with shapes SHAPES and LOG; the
# profile is $SHAPES_FILE, by default one per program in $PROFILES.
#   shaped MODE SHAPES LOG command…
shaped() {
    local mode=$1 shapes=$2 log=$3
    shift 3
    QUOTEGUARD_SHAPES=$shapes QUOTEGUARD_SHAPES_FILE="${SHAPES_FILE:-$PROFILES/%p.shapes}" \
        with_shim "$mode" "$log" "$@"
}

blocked_count() { grep -ac 'quoteguard: blocked' <<<"$1"; }
profile_lines() { local n; n=$(grep -cv '^#' "$1" 2>/dev/null); echo "${n:-0}"; }
quiet() { "$@" >/dev/null; }
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
    tap_diag "$("$SHAPES_TOOL" list "$pg_profile")"
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

    # The operator's way for a new legitimate query: learned into a pending
    # file on a test run, compared, approved into the profile.
    new_page() { "$@" "$PG_LEGACY" --escape conn "SELECT count(*) FROM visits WHERE page = '%s'" "$(hex "$page")"; }
    page=home
    out=$(new_page shaped enforce enforce "$WORK/pg-new.log")
    matches "$out" '^ERROR: 42601 quoteguard: blocked unknown_shape' "shapes tool: a query the profile lacks is blocked"
    page=cart
    SHAPES_FILE="$WORK/pending-%p.shapes" new_page shaped enforce learn "$WORK/pg-new.log" >/dev/null
    pending=$WORK/pending-pg_legacy.shapes
    out=$(scripts/quoteguard shapes diff "$pg_profile" "$pending")
    ok "shapes diff: exit 1 with the one new shape" test $? -eq 1 -a "$(grep -c . <<<"$out")" -eq 1
    has "$out" "select count (*) from visits where page = ?" "shapes diff: prints its line"
    ok "shapes diff: a profile against itself: exit 0" scripts/quoteguard shapes diff "$pg_profile" "$pg_profile"
    ok "shapes approve --all: exit 0" quiet scripts/quoteguard shapes approve --all "$pending" "$pg_profile"
    ok "shapes approve: the profile has one shape more" [ "$(profile_lines "$pg_profile")" -eq $((pg_shapes + 1)) ]
    ok "shapes approve: nothing is left pending" [ "$(profile_lines "$pending")" -eq 0 ]
    page=pay
    out=$(new_page shaped enforce enforce "$WORK/pg-new.log")
    matches "$out" '^ROW: [0-9]+$' "shapes approve: the query now runs under enforce"
    lacks "$out" "quoteguard: blocked" "shapes approve: and is not blocked"

    # ---------------------------------------------------- the PHP application
    # tests/e2e/php (addslashes + pg_query, GBK and SJIS pages) plus a page
    # that pastes its id without any escaping, served by php -S; learned
    # from one browse, enforced on another with other values, attacked by
    # sqlmap.
    if command -v php >/dev/null && php -m 2>/dev/null | grep -qx pgsql && command -v curl >/dev/null; then
        pg_psql -q -c "CREATE DATABASE qgphp" &&
            PGDATABASE=qgphp pg_psql -q -f tests/e2e/data/pg.sql >/dev/null ||
            tap_bail "cannot load the e2e data"
        WWW=$WORK/www
        mkdir -p "$WWW"
        ln -s "$PWD"/tests/e2e/php/*.php "$WWW/"
        cat >"$WWW/user.php" <<'PHP'
<?php
// A user by id: the id is pasted into the SQL without any escaping.
require __DIR__ . '/common.php';
$db = db_connect('UTF8', true);
$id = isset($_GET['id']) ? $_GET['id'] : '1';
show_rows($db, "SELECT id, name, city FROM users WHERE id = " . $id, 'UTF-8');
PHP
        # php_serve LOG MODE SHAPES: starts php -S (with the shim unless MODE
        # is none) on a free port; sets PHP_URL and PHP_PID.
        php_serve() {
            local log=$1 mode=$2 shapes=$3 port i
            for i in 1 2 3 4 5; do
                port=$((20000 + RANDOM % 20000))
                PHP_URL=http://127.0.0.1:$port
                if [ "$mode" = none ]; then
                    PGDATABASE=qgphp php -S "127.0.0.1:$port" -t "$WWW" >"$WORK/php-$port.log" 2>&1 &
                else
                    PGDATABASE=qgphp shaped "$mode" "$shapes" "$log" \
                        php -S "127.0.0.1:$port" -t "$WWW" >"$WORK/php-$port.log" 2>&1 &
                fi
                PHP_PID=$!
                for _ in $(seq 1 100); do
                    curl -s -o /dev/null "$PHP_URL/index.php" && return 0
                    kill -0 "$PHP_PID" 2>/dev/null || break
                    sleep 0.05
                done
                php_stop
            done
            return 1
        }
        # Through shaped (a function) the server is a child of PHP_PID, whose
        # background subshell does not exec it: stop both, or each server
        # outlives the test, and a later one's readiness check may reach it.
        php_stop() {
            local child
            for child in $(cat "/proc/$PHP_PID/task/$PHP_PID/children" 2>/dev/null); do
                kill "$child" 2>/dev/null
            done
            kill "$PHP_PID" 2>/dev/null
            wait "$PHP_PID" 2>/dev/null
        }
        browse() { # OUT PATH…: path, status and body of each page
            local out=$1 path
            shift
            : >"$out"
            for path in "$@"; do
                printf '== %s\n' "$path" >>"$out"
                curl -s --globoff -o "$WORK/page" -w '%{http_code}\n' "$PHP_URL/$path" >>"$out"
                cat "$WORK/page" >>"$out"
            done
        }
        php_learn_pages=(
            "index.php" "gbk_search.php?name=alice" "gbk_city.php?city=Par"
            "sjis_user.php?name=%93%FA%96%7B" "user.php?id=1" "user.php?id=3"
        )
        php_enforce_pages=(
            "index.php" "gbk_search.php?name=o%27brien" "gbk_search.php?name=%D6%D0%CE%C4"
            "gbk_search.php?name=nobody" "gbk_city.php?city=%B1%B1" "gbk_city.php?city=C:%5C"
            "sjis_user.php?name=o%27brien" "user.php?id=5" "user.php?id=-1" "user.php?id=42"
        )
        if php_serve "$WORK/php-learn.log" enforce learn; then
            browse "$WORK/php-learn.out" "${php_learn_pages[@]}"
            php_stop
            php_profile=$(ls "$PROFILES"/php*.shapes 2>/dev/null | head -n 1)
            php_shapes=$(profile_lines "${php_profile:-/dev/null}")
            php_distinct=$(grep -v '^#' "${php_profile:-/dev/null}" | cut -f1 | sort -u | wc -l)
            ok "PHP learn: a profile for php, one line per shape ($php_shapes lines, $php_distinct shapes)" \
                [ "$php_shapes" -ge 5 ] && [ "$php_distinct" -eq "$php_shapes" ] && lists_cleanly "$php_profile"
            tap_diag "$("$SHAPES_TOOL" list "$php_profile")"
            php_serve none none off && browse "$WORK/php-plain.out" "${php_enforce_pages[@]}" && php_stop
            php_serve "$WORK/php-enforce.log" enforce enforce &&
                browse "$WORK/php-enforce.out" "${php_enforce_pages[@]}"
            php_fp=$(blocked_count "$(cat "$WORK/php-enforce.out")")
            ok "PHP enforce: ${#php_enforce_pages[@]} other requests, no false positive ($php_fp blocked)" [ "$php_fp" -eq 0 ]
            ok "PHP enforce: every page answers byte for byte as without quoteguard" \
                cmp -s "$WORK/php-plain.out" "$WORK/php-enforce.out"
            php_stop
            gone=false
            for _ in $(seq 1 40); do
                curl -s -o /dev/null "$PHP_URL/index.php" || { gone=true; break; }
                sleep 0.05
            done
            ok "PHP: a server started under quoteguard is gone after php_stop" $gone

            if command -v sqlmap >/dev/null; then
                # sqlmap_run LABEL: against user.php?id=1, every technique but
                # time-based (which only adds waiting); output file printed.
                sqlmap_run() {
                    local out=$WORK/sqlmap-$1.out
                    rm -rf "$WORK/sqlmap" "$WORK/home" && mkdir -p "$WORK/home"
                    (cd "$WORK" && HOME=$WORK/home TMPDIR=$WORK TERM=dumb timeout -k 5 120 \
                        sqlmap -u "$PHP_URL/user.php?id=1" -p id --batch --technique=BEUS \
                            --level=1 --risk=1 --timeout=5 --retries=0 --dbms=PostgreSQL \
                            --flush-session --output-dir="$WORK/sqlmap" --disable-coloring \
                            -D public -T secrets --dump) >"$out" 2>&1 </dev/null
                    echo "$out"
                }
                flag=qg-e2e-flag-5d1c0a
                php_serve none none off && out=$(sqlmap_run plain) && php_stop
                has "$(cat "$out")" "$flag" "sqlmap: without quoteguard it finds the unescaped id and dumps the secret"
                tap_diag "$(grep -E '^ *(Type|Title): ' "$out" | sed 's/^ *//')"
                php_serve "$WORK/php-sqlmap.log" enforce enforce && out=$(sqlmap_run enforce) && php_stop
                lacks "$(cat "$out")" "$flag" "sqlmap under shapes enforce: the secret stays secret"
                has "$(cat "$out")" "all tested parameters do not appear to be injectable" \
                    "sqlmap under shapes enforce: nothing injectable found"
                blocked=$(grep -c '"action":"blocked".*"reason":"unknown_shape"' "$WORK/php-sqlmap.log")
                ok "sqlmap under shapes enforce: its requests were blocked as unknown shapes ($blocked)" [ "$blocked" -gt 0 ]
                php_serve none none off && browse "$WORK/php-after.out" "${php_enforce_pages[@]}" && php_stop
                ok "the data is unchanged after the attacks" cmp -s "$WORK/php-plain.out" "$WORK/php-after.out"
            else
                tap_diag "sqlmap not installed: its part is skipped"
            fi
        else
            ok "php -S starts under quoteguard" false
        fi
    else
        tap_diag "php with pgsql, or curl, not available: the PHP part is skipped"
    fi
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
    if [ -n "${pg_profile-}" ]; then
        merged=$(scripts/quoteguard shapes merge "$pg_profile" "$my_profile" "$pg_profile")
        ok "shapes merge: the union of the PG and MySQL profiles, once each" \
            [ "$(grep -vc '^#' <<<"$merged")" -eq $(($(profile_lines "$pg_profile") + my_shapes)) ]
    fi
    my_stop
else
    tap_diag "MariaDB not available: its part is skipped"
fi

tap_done
