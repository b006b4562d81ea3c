#!/bin/bash
# Client libraries loaded after start-up, the way PHP, Perl and Python load
# them: the program links neither libpq nor libmariadb and dlopen()s
# extension objects that do (RTLD_LOCAL, RTLD_LOCAL|RTLD_DEEPBIND,
# RTLD_GLOBAL), uses both libraries at once from two threads, dlclose()s
# them and loads them again.  Attacks must be blocked and ordinary queries
# answered in every pass.  Then the same with the MySQL C API under the other
# sonames of src/policy/client_libraries.h (Oracle's and Percona's libraries, built
# here from MariaDB's static library): loaded RTLD_LOCAL, the shim finds the
# real functions only through the name it knows.
# servers: pg mariadb
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh
. tests/lib/mariadb.sh
. tests/lib/hardening.sh

qg_require_build clients/both_ext
pg_available || tap_skip_all "no PostgreSQL server binaries (or not root)"
my_available || tap_skip_all "no MariaDB server binaries (or not root)"
PG_EXT=$(qg_helper_build libqgext_pg.so tests/clients/ext/qgext_pg.c -shared -fPIC \
    -I"$(pg_config --includedir 2>/dev/null || echo /usr/include/postgresql)" -lpq) ||
    tap_bail "cannot build the libpq extension"
MY_EXT=$(qg_helper_build libqgext_my.so tests/clients/ext/qgext_my.c -shared -fPIC \
    $(mariadb_config --cflags) $(mariadb_config --libs)) || tap_bail "cannot build the libmariadb extension"
pg_start || tap_bail "cannot start PostgreSQL"
my_start || tap_bail "cannot start MariaDB"

out=$("$QG_BUILD/clients/both_ext" "$PG_EXT" "$MY_EXT" "$QG_MY_SOCKET" 2>&1)
has "$out" "FAIL: pass 1: pg attack not blocked" "without the shim the attacks go through the extensions (the check can fail)"

log=$QG_PG_DIR/both.log
out=$(with_shim enforce "$log" "$QG_BUILD/clients/both_ext" "$PG_EXT" "$MY_EXT" "$QG_MY_SOCKET" 2>&1)
names=("" "RTLD_LOCAL" "RTLD_LOCAL|RTLD_DEEPBIND" "RTLD_GLOBAL (after dlclose of the others)")
for pass in 1 2 3; do
    has "$out" "PASS $pass pg: blocked=1 clean=1" "pass $pass, ${names[$pass]}: libpq extension: attack blocked, ordinary query answered"
    has "$out" "PASS $pass my: blocked=1 clean=1" "pass $pass, ${names[$pass]}: libmariadb extension: attack blocked, ordinary query answered"
    has "$out" "PASS $pass both: rounds=10 ok" "pass $pass: both libraries at once from two threads, 10 rounds each"
done
has "$out" "BOTH_EXT: 0 failures" "no failure in any pass"
ok "one finding per blocked attack (3 passes x 22)" [ "$(grep -ac '"action":"blocked"' "$log")" -eq 66 ]

MARIADB_STATIC=$(mariadb_config --variable=pkglibdir)/libmariadb.a # package libmariadb-dev
RENAMED=$QG_PG_DIR/renamed
mkdir -p "$RENAMED"
for soname in libmysqlclient.so.24 libperconaserverclient.so.21; do
    dir=$RENAMED/$soname
    mkdir -p "$dir"
    cc -shared -o "$dir/$soname" -Wl,-soname,"$soname" -Wl,--whole-archive "$MARIADB_STATIC" \
        -Wl,--no-whole-archive $(mariadb_config --libs_sys) &&
        cc -std=c11 -shared -fPIC -o "$dir/libqgext_my.so" tests/clients/ext/qgext_my.c \
            $(mariadb_config --cflags) "$dir/$soname" -Wl,-rpath,"$dir" ||
        tap_bail "cannot build the MySQL C API as $soname"
    log=$QG_PG_DIR/both-$soname.log
    out=$(with_shim enforce "$log" "$QG_BUILD/clients/both_ext" "$PG_EXT" "$dir/libqgext_my.so" "$QG_MY_SOCKET" 2>&1)
    for pass in 1 2 3; do
        has "$out" "PASS $pass my: blocked=1 clean=1" "$soname, pass $pass, ${names[$pass]}: attack blocked, ordinary query answered"
    done
    has "$out" "BOTH_EXT: 0 failures" "$soname: no failure in any pass"
    lacks "$(cat "$log")" missing_symbol "$soname: no missing_symbol"
    matches "$(cat "$log")" "\"event\":\"attached\".*\"libraries\":\"[^\"]*$soname" "$soname: named in the attached line"
done
tap_done
