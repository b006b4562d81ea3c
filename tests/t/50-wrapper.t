#!/bin/bash
# The quoteguard wrapper: what it refuses (set-ID, capabilities, static,
# other architecture — only what cannot be guarded) with which exit code,
# what --allow-unguarded changes, that scripts, launchers and interpreters
# run as they are, how LD_PRELOAD is composed (kept, never twice, also when
# nested), which settings it exports, how `check` reports them with their
# precedence (option > environment > config file > default) — checked
# against what the preloaded library itself says in its start-up line — and
# the errors for bad options.
# servers: none
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh

qg_require_build
QG=$PWD/scripts/quoteguard
LIB=$(readlink -f "$QG_SHIM")
TMP=$(mktemp -d /tmp/qg-wrapper.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# Only what a test sets may reach the wrapper: no settings from the caller,
# and an empty config file instead of the machine's /etc/quoteguard.conf.
for v in $(env | sed -n 's/^\(QUOTEGUARD_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset LD_PRELOAD
: > "$TMP/empty.conf"
export QUOTEGUARD_CONFIG=$TMP/empty.conf

# run CMD…: sets out (stdout), err (stderr) and rc.
run() {
    out=$("$@" 2>"$TMP/stderr")
    rc=$?
    err=$(cat "$TMP/stderr")
}
status_is() { # expected description
    [ "$rc" -eq "$1" ]
    tap_result $? "$2" || tap_diag "exit status $rc, expected $1" "stderr: $err"
}

# ------------------------------------------------------------ test programs
cat > "$TMP/pgclient.c" <<'EOF'
#include <libpq-fe.h>
#include <stdio.h>
int main(void) { printf("libpq %d\n", PQlibVersion()); return 0; }
EOF
cc -I"$(pg_config --includedir)" -o "$TMP/pgclient" "$TMP/pgclient.c" -lpq ||
    tap_bail "cannot build a libpq client"
printf 'int main(void) { return 0; }\n' > "$TMP/static.c"
cc -static -o "$TMP/static" "$TMP/static.c" || tap_bail "cannot build a static program"
printf 'int qg_test_unused;\n' > "$TMP/other.c"
cc -shared -fPIC -o "$TMP/other.so" "$TMP/other.c" || tap_bail "cannot build a shared library"
# A 32-bit x86 ELF executable header with a PT_INTERP entry: enough for the
# wrapper to judge; it is never run.
python3 - "$TMP/elf32" <<'EOF'
import struct, sys
ehdr = b"\x7fELF\x01\x01\x01" + bytes(9) + struct.pack(
    "<HHIIIIIHHHHHH", 2, 3, 1, 0x8048000, 52, 0, 0, 52, 32, 1, 0, 0, 0)
phdr = struct.pack("<IIIIIIII", 3, 84, 0, 0, 19, 19, 4, 1)
open(sys.argv[1], "wb").write(ehdr + phdr + b"/lib/ld-linux.so.2\0")
EOF
chmod +x "$TMP/elf32"

# ---------------------------------------------------------- basic behaviour
run "$QG" --version
status_is 0 "--version exits 0"
version=$(sed -n 's/^#define QG_VERSION "\(.*\)"$/\1/p' include/quoteguard.h)
has "$out" "quoteguard $version" "--version prints QG_VERSION from include/quoteguard.h"
run "$QG" --help
status_is 0 "--help exits 0"
has "$out" "Usage: quoteguard" "--help prints the usage"

run "$QG" -q "$TMP/pgclient"
status_is 0 "a libpq client runs under the wrapper"
has "$out" "libpq " "the client's own output comes through"

run "$QG" -q -- env
matches "$out" "^LD_PRELOAD=$LIB\$" "LD_PRELOAD holds the library when nothing was preloaded before"

# ----------------------------------------------------------------- refusals
cp "$TMP/pgclient" "$TMP/suid" && chmod u+s "$TMP/suid"
run "$QG" "$TMP/suid"
status_is 80 "a set-user-ID copy of a libpq client is refused with 80"
has "$err" "set-user-ID" "the refusal says set-user-ID"
lacks "$out" "libpq " "the refused program did not run"
has "$err" "--allow-unguarded=setid" "the refusal names the narrow override"
run "$QG" --allow-unguarded=static "$TMP/suid"
status_is 80 "--allow-unguarded=static does not let a set-ID program run"
run "$QG" --allow-unguarded=setid "$TMP/suid"
status_is 0 "--allow-unguarded=setid runs the set-user-ID program anyway"
has "$out" "libpq " "the program ran"
has "$err" "warning: running unguarded (--allow-unguarded=setid): " "the warning says it runs unguarded and why"
run "$QG" --allow-unguarded=setid -q "$TMP/suid"
lacks "$err" "warning" "-q silences the warning"
run "$QG" --force "$TMP/pgclient"
status_is 64 "--force is gone (exit 64)"
has "$err" "--allow-unguarded=setid|caps|static|arch" "its message names the narrow options"
run "$QG" --allow-unguarded=interpreter "$TMP/pgclient"
status_is 64 "--allow-unguarded takes only setid, caps, static, arch"

cp "$TMP/pgclient" "$TMP/sgid" && chmod g+s "$TMP/sgid"
run "$QG" "$TMP/sgid"
status_is 80 "a set-group-ID copy is refused with 80"
has "$err" "set-group-ID" "the refusal says set-group-ID"

cp "$TMP/pgclient" "$TMP/caps"
if setcap cap_net_raw+ep "$TMP/caps" 2>/dev/null; then
    run "$QG" "$TMP/caps"
    status_is 81 "a libpq client with file capabilities is refused with 81"
    has "$err" "cap_net_raw" "the refusal names the capabilities"
else
    tap_result 1 "setcap works here (libcap2-bin from scripts/install-deps)"
fi

run "$QG" "$TMP/static"
status_is 82 "a statically linked program is refused with 82"
has "$err" "statically linked" "the refusal says statically linked"
run "$QG" --allow-unguarded=static "$TMP/static"
status_is 0 "--allow-unguarded=static runs it"

run "$QG" "$TMP/elf32"
status_is 83 "a 32-bit program is refused with 83 (the library is 64-bit)"
has "$err" "32-bit x86" "the refusal names the program's architecture"

run "$QG" /bin/true
status_is 0 "/bin/true (no client library) runs: what it starts inherits the preload"
run "$QG" check /bin/true
matches "$out" '^children: +the programs it starts inherit the preload' "check says its children are guarded if they load a client"
lacks "$out" "liburing" "check on a program without liburing names none"

# io_uring moves bytes without a library call: check names a program that links liburing
uring=$(ls /usr/lib/x86_64-linux-gnu/liburing.so.* 2>/dev/null | head -n 1)
if [ -n "$uring" ]; then
    printf 'int io_uring_queue_init(unsigned, void *, unsigned);\nint main(int argc, char **argv) { (void)argv; return argc > 9 ? io_uring_queue_init(1, 0, 0) : 0; }\n' |
        cc -x c - -x none -o "$TMP/uses-uring" -Wl,--no-as-needed "$uring" 2>&1 | head -n 5
    run "$QG" check "$TMP/uses-uring"
    matches "$out" '^unseen: +links liburing\.so\.[0-9]+ => .*io_uring' "check names a program that links liburing and why it is unseen"
else
    tap_skip "no liburing.so on this machine"
fi

printf '#!/bin/sh\necho from-script\nexec psql -c "select 1"\n' > "$TMP/sh-script" && chmod +x "$TMP/sh-script"
run "$QG" check "$TMP/sh-script"
status_is 0 "check on a #!/bin/sh start script exits 0"
matches "$out" '^children: +psql -> guarded \(links libpq\.so\.5\)$' "check: the program the script execs would be guarded"
cp "$TMP/pgclient" "$TMP/suid2" && chmod u+s "$TMP/suid2"
printf '#!/bin/sh\nexec %s\n' "$TMP/suid2" > "$TMP/sh-suid" && chmod +x "$TMP/sh-suid"
run "$QG" check "$TMP/sh-suid"
matches "$out" "^children: +$TMP/suid2 -> not guarded: set-ID" "check: a set-ID program the script execs would not be"

# ------------------------------------------------------ launchers, interpreters
run "$QG" check env FOO=1 nice -n 5 "$TMP/pgclient"
status_is 0 "check env … nice … client exits 0"
matches "$out" '^ +env \(/usr/bin/env\) starts nice$' "check follows env to nice"
matches "$out" "^ +nice \(/usr/bin/nice\) starts $TMP/pgclient\$" "and nice to the client"
matches "$out" "^program: +$TMP/pgclient " "the client is the program judged"
run "$QG" env "$TMP/suid"
status_is 80 "a set-ID program behind env is refused"
run "$QG" timeout 10 "$TMP/static"
status_is 82 "a static program behind timeout is refused"

run "$QG" -q php -r 'echo getenv("LD_PRELOAD"), "|", getenv("QUOTEGUARD_VERBOSE"), "\n";'
status_is 0 "php runs without extra options"
has "$out" "$LIB|0" "php got the library preloaded and the settings"

printf '#!/usr/bin/env php\n<?php echo "script ran\\n";\n' > "$TMP/app.php" && chmod +x "$TMP/app.php"
run "$QG" -q "$TMP/app.php"
status_is 0 "a #!/usr/bin/env php script runs"
has "$out" "script ran" "the script ran"
run "$QG" check "$TMP/app.php"
has "$out" "$TMP/app.php is a script run by /usr/bin/env php" "check shows the script's interpreter"
matches "$out" '^children: +/.*/pgsql\.so -> guarded \(links libpq\.so\.5\)' "check: php's pgsql.so would be guarded"
matches "$out" '/mysqli\.so -> guarded at the wire' "check: mysqli through mysqlnd is guarded at the wire"
matches "$out" '/pdo_mysql\.so -> guarded at the wire' "check: PDO_mysql through mysqlnd is guarded at the wire"
run env QUOTEGUARD_WIRE=off "$QG" check "$TMP/app.php"
matches "$out" '/mysqli\.so -> not guarded: speaks the protocol itself and wire = off' \
    "check: with QUOTEGUARD_WIRE=off mysqli would not be guarded"

run "$QG" check perl
status_is 0 "check perl exits 0"
matches "$out" 'DBD/Pg/Pg\.so -> guarded \(links libpq\.so' "check perl finds DBD::Pg and its libpq"
matches "$out" 'DBD/mysql/mysql\.so -> guarded \(links lib(mariadb|mysqlclient)\.so' "check perl finds DBD::mysql and its client library"

run "$QG" check /usr/bin/python3
status_is 0 "check python3 exits 0"
matches "$out" 'psycopg2/_psycopg.*\.so -> guarded \(links libpq\.so' "check python3 finds psycopg2 and its libpq"

# ---------------------------------------------------------------------- check
run "$QG" check "$TMP/pgclient"
status_is 0 "check on a libpq client exits 0"
matches "$out" '^links: +libpq\.so\.5 => /' "check lists the libpq the client links"
matches "$out" '^attach: +yes$' "check says the shim can attach"
matches "$out" "^library: +$LIB \\(source tree\\)$" "check names the library of the source tree"
run "$QG" --dry-run "$TMP/pgclient"
status_is 0 "--dry-run is check"
lacks "$out" "libpq 1" "--dry-run does not run the command"
run "$QG" check "$TMP/suid"
status_is 80 "check exits with the refusal's code"
matches "$out" '^attach: +refused \(exit 80\)' "check says the attach is refused and why"
run "$QG" check psql
matches "$out" "pg_wrapper.* runs /usr/lib/postgresql/.*/bin/psql" "check follows Debian's pg_wrapper to the real psql"
matches "$out" '^attach: +yes$' "psql can be guarded"

# Through a symbolic link, from another directory.
ln -s "$QG" "$TMP/qg-link"
run bash -c "cd / && '$TMP/qg-link' check '$TMP/pgclient'"
matches "$out" "^library: +$LIB " "the wrapper finds the library when called through a symlink"

# -------------------------------------------------------------- LD_PRELOAD
run env LD_PRELOAD="$TMP/other.so" "$QG" -q -- env
matches "$out" "^LD_PRELOAD=$LIB:$TMP/other.so\$" "an existing LD_PRELOAD is kept, after the library"
run "$QG" --mode audit -- "$QG" -q -- env
matches "$out" "^LD_PRELOAD=$LIB\$" "nested quoteguard: the library is preloaded once"
matches "$out" '^QUOTEGUARD_MODE=audit$' "nested quoteguard: the outer settings reach the command"
run env LD_PRELOAD="$TMP/other.so" "$QG" -q -- "$QG" -q -- env
matches "$out" "^LD_PRELOAD=$LIB:$TMP/other.so\$" "nested with an existing value: kept, library once"
run env LD_PRELOAD="$LIB:$TMP/other.so" "$QG" -q -- env
matches "$out" "^LD_PRELOAD=$LIB:$TMP/other.so\$" "already preloaded: LD_PRELOAD unchanged"
run env LD_PRELOAD="$TMP/other.so" "$QG" check "$TMP/pgclient"
matches "$out" "^LD_PRELOAD: $LIB:$TMP/other.so \\(prepended\\)" "check shows the composed LD_PRELOAD"

# ------------------------------------------------------------------ settings
mkdir "$TMP/cwd"
run bash -c "cd '$TMP/cwd' && '$QG' --mode audit --log rel.log -v --config ../empty.conf -- env"
matches "$out" '^QUOTEGUARD_MODE=audit$' "--mode is exported"
matches "$out" "^QUOTEGUARD_LOG=$TMP/cwd/rel.log\$" "--log FILE is exported as an absolute path"
matches "$out" '^QUOTEGUARD_VERBOSE=2$' "-v exports QUOTEGUARD_VERBOSE=2"
matches "$out" "^QUOTEGUARD_CONFIG=$TMP/cwd/../empty.conf\$" "--config is exported as an absolute path"
has "$err" "preloading $LIB into" "-v says what is preloaded"
run "$QG" --log SYSLOG -- env
matches "$out" '^QUOTEGUARD_LOG=syslog$' "--log syslog is exported (case folded)"
run env QUOTEGUARD_MODE=off "$QG" -q -- env
matches "$out" '^QUOTEGUARD_MODE=off$' "without --mode the environment's value stays"

printf 'mode = rewrite   # from the file\nlog = %s/file.log\nverbose = 2\nrewrite = all\n' "$TMP" > "$TMP/qg.conf"
run env QUOTEGUARD_MODE=audit "$QG" check --config "$TMP/qg.conf" "$TMP/pgclient"
matches "$out" '^mode: +audit \(QUOTEGUARD_MODE in the environment\)$' "check: the environment overrides the file"
matches "$out" "^log: +$TMP/file.log \\($TMP/qg.conf\\)\$" "check: a file value names the file"
matches "$out" "^config: +$TMP/qg.conf \\(--config" "check: the config file and where it was named"
run env QUOTEGUARD_MODE=audit "$QG" check --mode off --config "$TMP/qg.conf" "$TMP/pgclient"
matches "$out" '^mode: +off \(option, exported as QUOTEGUARD_MODE\)$' "check: an option overrides the environment"
run "$QG" check -q --config "$TMP/qg.conf" "$TMP/pgclient"
matches "$out" '^mode: +rewrite \(.*qg.conf\)$' "check: the file's mode, with its inline comment stripped"
matches "$out" '^verbose: +0 \(option' "check: -q overrides the file's verbose"
matches "$out" '^rewrite: +all \(.*qg.conf\)$' "check: which literals rewrite mode replaces, from the file"
run "$QG" check --mode rewrite "$TMP/pgclient"
matches "$out" '^rewrite: +needed \(default\)$' "check: rewrite mode replaces only the literals that need it by default"

# What the library itself reads agrees with check: its start-up line.
run env QUOTEGUARD_MODE=audit "$QG" --config "$TMP/qg.conf" --log "$TMP/startup.log" "$TMP/pgclient"
matches "$(cat "$TMP/startup.log" 2>/dev/null)" '"event":"attached".*"mode":"audit"' \
    "the library's start-up line shows the mode check reported (environment over file)"
run "$QG" --config "$TMP/qg.conf" --log "$TMP/startup2.log" "$TMP/pgclient"
matches "$(cat "$TMP/startup2.log" 2>/dev/null)" '"event":"attached".*"mode":"rewrite","rewrite":"all"' \
    "without the environment the library uses the file's mode, and says which literals rewrite replaces"

printf 'mode = audit\nbogus_key = 1\nallow = 12345\nrewrite = most\n' > "$TMP/bad.conf"
run "$QG" check --config "$TMP/bad.conf" "$TMP/pgclient"
status_is 78 "check with a bad config exits 78"
matches "$out" '^mode: +enforce \(forced: the settings have problems\)$' "check: problems force mode enforce"
matches "$out" '^problem: +bogus_key="1" .*unknown key' "check: names an unknown key"
matches "$out" '^problem: +allow="12345" .*not a fingerprint' "check: names a bad fingerprint"
matches "$out" '^problem: +rewrite="most" .*expected needed or all' "check: names a bad rewrite choice"
run "$QG" --config "$TMP/bad.conf" --log "$TMP/bad.log" "$TMP/pgclient"
has "$err" "the shim will use mode enforce" "running with a bad config warns on stderr"
matches "$(cat "$TMP/bad.log" 2>/dev/null)" '"event":"config_error".*bogus_key' "the library agrees: config_error logged"

printf 'only_programs = psql\n' > "$TMP/only.conf"
run "$QG" check --config "$TMP/only.conf" "$TMP/pgclient"
matches "$out" '^scope: +pgclient is outside only_programs' "check: a program outside only_programs is reported"

# -------------------------------------------------------------- check --pid
"$QG" -q sleep 30 & guarded_pid=$!
sleep 30 & plain_pid=$!
for i in $(seq 50); do grep -q libquoteguard "/proc/$guarded_pid/maps" 2>/dev/null && break; sleep 0.1; done
run "$QG" check --pid "$guarded_pid"
status_is 0 "check --pid on a process started by the wrapper exits 0"
matches "$out" "^shim: +$LIB \\(mapped" "check --pid names the mapped library"
run "$QG" check --pid "$plain_pid"
status_is 1 "check --pid on a process without the shim exits 1"
has "$out" "not mapped: this process is not guarded" "check --pid says it is not guarded"
kill "$guarded_pid" "$plain_pid" 2>/dev/null
run "$QG" check --pid 999999999
status_is 66 "check --pid on no such process exits 66"

# ---------------------------------------------------------------- bad usage
run "$QG" --mode bogus "$TMP/pgclient"
status_is 64 "--mode bogus exits 64"
has "$err" "--mode 'bogus': expected enforce, audit, rewrite or off" "--mode bogus says what is expected"
run "$QG" --mode
status_is 64 "--mode without a value exits 64"
run "$QG" --frobnicate "$TMP/pgclient"
status_is 64 "an unknown option exits 64"
run "$QG"
status_is 64 "no command exits 64"
has "$err" "no command given" "no command is explained"
run "$QG" --config "$TMP/missing.conf" "$TMP/pgclient"
status_is 66 "a missing --config file exits 66"
run "$QG" --log "$TMP/no/such/dir/x.log" "$TMP/pgclient"
status_is 73 "a --log file in a missing directory exits 73"
run "$QG" --log "$TMP" "$TMP/pgclient"
status_is 64 "--log naming a directory exits 64"
run "$QG" --library "$TMP/missing.so" "$TMP/pgclient"
status_is 69 "a missing --library exits 69"
run "$QG" qg-no-such-command
status_is 127 "an unknown command exits 127"
run "$QG" "$TMP/pgclient.c"
status_is 126 "a file that is not executable exits 126"
run "$QG" -- check
status_is 127 "after -- the word check is the command"

tap_done
