#!/bin/bash
# make install / uninstall into a staging directory: every file in place,
# the wrapper with the library path and version baked in (and working from
# the staged tree), the pkg-config file usable to build a program against
# the checker library (shared and static), man pages that render without
# warnings, and uninstall leaving nothing behind.
# servers: none
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh

qg_require_build libquoteguard-check.a libquoteguard-check.so
TMP=$(mktemp -d /tmp/qg-install.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
for v in $(env | sed -n 's/^\(QUOTEGUARD_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset LD_PRELOAD
DEST=$TMP/dest
ROOT=$DEST/usr
version=$(sed -n 's/^#define QG_VERSION "\(.*\)"$/\1/p' include/quoteguard.h)
# The soname carries the major number and, while that is 0, the minor too.
major=${version%%.*}
abi=$major
[ "$major" != 0 ] || { minor=${version#*.}; abi=$major.${minor%%.*}; }
soname=libquoteguard-check.so.$abi

make -s --no-print-directory install DESTDIR="$DEST" PREFIX=/usr BUILD="$QG_BUILD" > "$TMP/make.log" 2>&1
ok "make install DESTDIR=… PREFIX=/usr succeeds" [ $? -eq 0 ] || tap_diag "$(tail -n 20 "$TMP/make.log")"

for f in bin/quoteguard bin/quoteguard-report lib/quoteguard/libquoteguard.so lib/quoteguard/quoteguard-config \
    include/quoteguard.h \
    lib/libquoteguard-check.a lib/libquoteguard-check.so "lib/libquoteguard-check.so.$version" \
    "lib/$soname" lib/pkgconfig/quoteguard.pc \
    share/man/man1/quoteguard.1 share/man/man5/quoteguard.conf.5; do
    ok "installed: $f" [ -e "$ROOT/$f" ]
done
ok "the wrapper is executable" [ -x "$ROOT/bin/quoteguard" ]
ok "the installed library is the built one" cmp -s "$QG_BUILD/libquoteguard.so" "$ROOT/lib/quoteguard/libquoteguard.so"

installed=$(cat "$ROOT/bin/quoteguard")
matches "$installed" '^QG_LIB_INSTALLED=/usr/lib/quoteguard/libquoteguard.so$' "the library path is baked into the wrapper"
matches "$installed" "^QG_VERSION_INSTALLED=$version\$" "the version is baked into the wrapper"
matches "$installed" "^QG_CLIENT_LIBRARIES_INSTALLED='$(echo $(cat "$QG_BUILD/client-libraries"))'\$" \
    "the client-library sonames of src/policy/client_libraries.h are baked into the wrapper"
has "$("$ROOT/bin/quoteguard" --version)" "quoteguard $version" "the installed wrapper prints the version"

# A libpq client to check and run through the installed wrapper.
printf '#include <libpq-fe.h>\n#include <stdio.h>\nint main(void) { printf("libpq %%d\\n", PQlibVersion()); return 0; }\n' > "$TMP/pgclient.c"
cc -I"$(pg_config --includedir)" -o "$TMP/pgclient" "$TMP/pgclient.c" -lpq || tap_bail "cannot build a libpq client"
out=$(cd / && "$ROOT/bin/quoteguard" check "$TMP/pgclient"); rc=$?
ok "installed check exits 0 for a libpq client" [ "$rc" -eq 0 ]
matches "$out" "^library: +$ROOT/lib/quoteguard/libquoteguard.so \\(beside the wrapper; the installed path /usr/lib/quoteguard/libquoteguard.so is missing\\)\$" \
    "staged: the wrapper names the baked path and uses the library beside it"
matches "$out" '^attach: +yes$' "installed check: the shim can attach"
out=$(cd / && QUOTEGUARD_CONFIG=/dev/null "$ROOT/bin/quoteguard" -q -- env)
matches "$out" "^LD_PRELOAD=$ROOT/lib/quoteguard/libquoteguard.so\$" "the installed wrapper preloads the installed library"
out=$(QUOTEGUARD_CONFIG=/dev/null "$ROOT/bin/quoteguard" --log "$TMP/run.log" "$TMP/pgclient")
has "$out" "libpq " "a client runs through the installed wrapper"
matches "$(cat "$TMP/run.log" 2>/dev/null)" '"event":"attached".*"program":"pgclient".*"libraries":"libpq.so.5"' \
    "the installed library attached to it"
printf '{"time":"2026-01-01T00:00:00.000Z","pid":1,"program":"p","mode":"audit","action":"logged","api":"PQexec","dialect":"postgres","encoding":"SJIS","conn":"0x1","reason":"structure_mismatch","offset":0,"span":[0,0],"excerpt":"x","fingerprint":"00000000000000ab"}\n' > "$TMP/one.log"
has "$("$ROOT/bin/quoteguard" report "$TMP/one.log")" "findings: blocked 0, logged 1, allowed 0" "installed: quoteguard report runs the installed report"

# pkg-config: build a program against the checker.
pc() { PKG_CONFIG_PATH=$ROOT/lib/pkgconfig pkg-config --define-variable=prefix="$ROOT" "$@" quoteguard; }
is_version=$(pc --modversion)
ok "pkg-config knows quoteguard $version" [ "$is_version" = "$version" ]
has "$(cat "$ROOT/lib/pkgconfig/quoteguard.pc")" "Libs: -L\${libdir} -lquoteguard-check" "quoteguard.pc links -lquoteguard-check"
cat > "$TMP/use.c" <<'EOF'
#include <quoteguard.h>
#include <stdio.h>
#include <string.h>
/* A byte-wise escaped SJIS attack: 0x95 0x5c is one character to the server. */
int main(void)
{
    const qg_encoding *enc = qg_encoding_find(QG_DIALECT_POSTGRES, "Shift_JIS");
    if (!enc)
        return 2;
    qg_context ctx;
    qg_context_init(&ctx, QG_DIALECT_POSTGRES, enc, 0);
    const char attack[] = "SELECT 1 FROM t WHERE a = '\x95\\' OR 1=1 --'";
    const char clean[] = "SELECT 1 FROM t WHERE a = 'plain'";
    qg_result r;
    qg_verdict bad = qg_check(&ctx, attack, strlen(attack), &r);
    qg_verdict good = qg_check(&ctx, clean, strlen(clean), NULL);
    printf("%s attack:%s clean:%s\n", qg_encoding_name(enc),
           bad == QG_VERDICT_BLOCK ? qg_reason_name(r.findings[0].reason) : "not-blocked",
           good == QG_VERDICT_CLEAN ? "clean" : "flagged");
    /* The lexer through its opaque handle: the literal and the comment. */
    const char text[] = "SELECT 'a''b' -- c";
    qg_lexer *lx = qg_lexer_new(&ctx, text, strlen(text), QG_READ_SERVER, NULL);
    if (!lx)
        return 3;
    qg_token tok;
    while (qg_lexer_next(lx, &tok))
        printf("token %s %zu-%zu\n",
               tok.kind == QG_TOK_STRING ? "string" : tok.kind == QG_TOK_COMMENT ? "comment" : "other",
               tok.start, tok.end);
    qg_lexer_free(lx);
    return 0;
}
EOF
cc $(pc --cflags) -o "$TMP/use" "$TMP/use.c" $(pc --libs) 2>"$TMP/cc.log"
ok "a program builds with pkg-config --cflags --libs quoteguard" [ $? -eq 0 ] || tap_diag "$(cat "$TMP/cc.log")"
out=$(LD_LIBRARY_PATH=$ROOT/lib "$TMP/use")
has "$out" "SJIS attack:structure_mismatch clean:clean" "the installed shared checker blocks the attack and passes clean SQL"
has "$out" "token string 7-13
token comment 14-18" "the installed lexer reads the literal and the comment through its opaque handle"
has "$(objdump -p "$ROOT/lib/$soname")" "SONAME               $soname" "the library's soname is $soname"
has "$(LD_LIBRARY_PATH=$ROOT/lib ldd "$TMP/use")" "$soname => $ROOT/lib/$soname" \
    "the program uses the installed shared library by its soname"
cc $(pc --cflags) -o "$TMP/use-static" "$TMP/use.c" "$ROOT/lib/libquoteguard-check.a" 2>"$TMP/cc.log"
ok "a program links the installed static library" [ $? -eq 0 ] || tap_diag "$(cat "$TMP/cc.log")"
has "$("$TMP/use-static")" "SJIS attack:structure_mismatch clean:clean" "the static checker gives the same verdicts"

for page in share/man/man1/quoteguard.1 share/man/man5/quoteguard.conf.5; do
    warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$ROOT/$page" 2>&1 >/dev/null)
    ok "$page renders without warnings" [ -z "$warnings" ] || tap_diag "$warnings"
done
has "$(MANWIDTH=200 man -l "$ROOT/share/man/man1/quoteguard.1" 2>/dev/null)" "EXIT STATUS" "quoteguard(1) has the exit statuses"

make -s --no-print-directory uninstall DESTDIR="$DEST" PREFIX=/usr BUILD="$QG_BUILD" > "$TMP/make.log" 2>&1
ok "make uninstall succeeds" [ $? -eq 0 ] || tap_diag "$(tail -n 20 "$TMP/make.log")"
left=$(find "$DEST" ! -type d)
ok "uninstall removes every installed file" [ -z "$left" ] || tap_diag "left: $left"
ok "uninstall removes lib/quoteguard/" [ ! -e "$ROOT/lib/quoteguard" ]

tap_done
