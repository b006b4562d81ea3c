#!/bin/bash
# The Debian package: `make deb` builds it from the tree, lintian finds
# nothing, it installs into a fresh root (dpkg --root, maintainer scripts
# run for that root) with every file where the system expects it, changes
# no running program, `quoteguard check` and `quoteguard enable` work from
# the installed files, the drop-in `enable` writes is one systemd loads
# (systemd-analyze verify reads it, and would name a bad key in it), a
# service that cannot be guarded gets none, and `dpkg -r` leaves only the
# conffiles.
# servers: none
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh

qg_require_build clients/pg_legacy
for tool in dpkg-buildpackage dh lintian systemd-analyze logrotate; do
    command -v "$tool" >/dev/null || tap_bail "$tool is missing (scripts/install-deps installs it)"
done
[ "$(id -u)" -eq 0 ] || tap_skip_all "dpkg --root needs root"
TMP=$(mktemp -d /tmp/qg-deb.XXXXXX)
trap 'kill "$sleeper" 2>/dev/null; rm -rf "$TMP"' EXIT
for v in $(env | sed -n 's/^\(QUOTEGUARD_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset LD_PRELOAD
MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
version=$(sed -n 's/^#define QG_VERSION "\(.*\)"$/\1/p' include/quoteguard.h)

make -s --no-print-directory deb BUILD="$TMP/b" > "$TMP/make.log" 2>&1
ok "make deb builds the package" [ $? -eq 0 ] || tap_diag "$(tail -n 20 "$TMP/make.log")"
DEB=$TMP/b/deb/quoteguard_${version}_$(dpkg --print-architecture).deb
[ -f "$DEB" ] || tap_bail "no $DEB"
has "$(head -n 1 debian/changelog)" "quoteguard ($version)" "debian/changelog has the version of include/quoteguard.h"

tags=$(lintian --tag-display-limit 0 -I --pedantic "$DEB" 2>&1 | grep -v 'running with root privileges')
ok "lintian (with info and pedantic tags): nothing to say" [ -z "$tags" ] || tap_diag "$tags"

contents=$(dpkg-deb -c "$DEB")
for f in "usr/lib/$MA/quoteguard/libquoteguard.so" "usr/lib/$MA/quoteguard/quoteguard-config" \
    usr/bin/quoteguard usr/bin/quoteguard-report usr/share/man/man1/quoteguard.1.gz \
    usr/share/man/man5/quoteguard.conf.5.gz etc/quoteguard.conf etc/logrotate.d/quoteguard \
    usr/lib/tmpfiles.d/quoteguard.conf var/log/quoteguard/; do
    matches "$contents" " \\./$f( |\$)" "the package holds /$f"
done
has "$(dpkg-deb -f "$DEB" Depends)" "python3" "it depends on python3 (the report)"
conffiles=$(dpkg-deb --ctrl-tarfile "$DEB" | tar -xOf - ./conffiles)
is_list() { [ "$1" = "$2" ]; }
ok "conffiles: /etc/quoteguard.conf and the logrotate snippet" \
    is_list "$(printf '%s\n' "$conffiles" | sort)" "$(printf '/etc/logrotate.d/quoteguard\n/etc/quoteguard.conf\n')"
dpkg-deb -x "$DEB" "$TMP/x"
scripts=$(dpkg-deb --ctrl-tarfile "$DEB" | tar -xOf - --wildcards './p*' 2>/dev/null)
lacks "$scripts" "ld.so.preload" "no maintainer script touches /etc/ld.so.preload"
lacks "$scripts" "restart" "no maintainer script restarts anything"

# A fresh root: an empty dpkg database; the package's dependencies are the
# host's, so dpkg is told not to look for them there.
ROOT=$TMP/root
mkdir -p "$ROOT/var/lib/dpkg/updates" "$ROOT/var/lib/dpkg/info" && : > "$ROOT/var/lib/dpkg/status"
sleep 60 & sleeper=$!
# its environment is sleep's once it has run exec (until then, the shell's)
for _ in $(seq 100); do [ "$(cat "/proc/$sleeper/comm" 2>/dev/null)" = sleep ] && break; sleep 0.05; done
environ_before=$(tr '\0' '\n' < "/proc/$sleeper/environ")
dpkg --root="$ROOT" --force-script-chrootless --force-depends -i "$DEB" > "$TMP/dpkg.log" 2>&1
ok "dpkg --root … -i installs it" [ $? -eq 0 ] || tap_diag "$(cat "$TMP/dpkg.log")"
lacks "$(cat "/proc/$sleeper/maps")" "libquoteguard" "a program running before the install has no shim in it"
ok "… and its environment is unchanged" [ "$(tr '\0' '\n' < "/proc/$sleeper/environ")" = "$environ_before" ]
ok "the install writes no /etc/ld.so.preload" [ ! -e "$ROOT/etc/ld.so.preload" ]
ok "the library is in the multiarch directory" [ -f "$ROOT/usr/lib/$MA/quoteguard/libquoteguard.so" ]
ok "/var/log/quoteguard/ exists" [ -d "$ROOT/var/log/quoteguard" ]
is_mode() { [ "$(stat -c %a "$1" 2>/dev/null)" = "$2" ]; }
ok "/run/quoteguard is made for the counters (tmpfiles.d, mode 1777)" is_mode "$ROOT/run/quoteguard" 1777
QG=$ROOT/usr/bin/quoteguard
out=$("$QG" check --config "$ROOT/etc/quoteguard.conf"); rc=$?
ok "the shipped config is valid: check --config exits 0" [ "$rc" -eq 0 ] || tap_diag "$out"
sed -e 's/^#mode = audit$/mode = audit/' -e 's|^#log = |log = |' -e 's|^#counters_dir = |counters_dir = |' \
    "$ROOT/etc/quoteguard.conf" > "$TMP/audit.conf"
ok "its audit example, uncommented, sets three keys" [ "$(grep -c '^[a-z]' "$TMP/audit.conf")" -eq 3 ]
out=$("$QG" check --config "$TMP/audit.conf"); rc=$?
ok "… and is valid too" [ "$rc" -eq 0 ] || tap_diag "$out"
out=$(QUOTEGUARD_CONFIG=$TMP/audit.conf "$QG" check /bin/true)
matches "$out" '^mode: +audit \(' "… in mode audit"
matches "$out" "^library: +$ROOT/usr/lib/$MA/quoteguard/libquoteguard.so " "the installed wrapper finds the installed library"
out=$(logrotate -d "$ROOT/etc/logrotate.d/quoteguard" 2>&1)
lacks "$out" "error" "logrotate reads the snippet without an error"
has "$out" "/var/log/quoteguard/*.log" "… and applies it to /var/log/quoteguard/*.log"

# quoteguard enable / disable on units of that root.
mkdir -p "$ROOT/opt/app" "$ROOT/etc/systemd/system"
cp "$QG_BUILD/clients/pg_legacy" "$ROOT/opt/app/legacy"
cp "$QG_BUILD/clients/pg_legacy" "$ROOT/opt/app/legacy-suid" && chmod u+s "$ROOT/opt/app/legacy-suid"
unit() { # name execstart [more service lines]
    printf '[Unit]\nDescription=%s\n[Service]\n%bExecStart=%s\n[Install]\nWantedBy=multi-user.target\n' \
        "$1" "${3:-}" "$2" > "$ROOT/etc/systemd/system/$1.service"
}
unit legacy '/opt/app/legacy --encoding UTF8 "SELECT 1" 41' 'Environment=LD_PRELOAD=/opt/app/other.so\n'
unit suid /opt/app/legacy-suid
DROPIN=$ROOT/etc/systemd/system/legacy.service.d/quoteguard.conf
out=$("$QG" enable --root "$ROOT" --mode audit --log /var/log/quoteguard/legacy.log legacy 2>&1); rc=$?
ok "enable legacy: exit 0" [ "$rc" -eq 0 ] || tap_diag "$out"
has "$out" "restart legacy.service for it to take effect" "enable says the service must be restarted"
dropin=$(cat "$DROPIN" 2>/dev/null)
has "$dropin" "[Service]" "the drop-in is a [Service] section"
has "$dropin" "Environment=\"LD_PRELOAD=/usr/lib/$MA/quoteguard/libquoteguard.so:/opt/app/other.so\"" \
    "LD_PRELOAD: the installed library first, the unit's own preload kept"
has "$dropin" 'Environment="QUOTEGUARD_MODE=audit"' "the mode is passed"
has "$dropin" 'Environment="QUOTEGUARD_LOG=/var/log/quoteguard/legacy.log"' "the log is passed"
verify=$(systemd-analyze verify "$ROOT/etc/systemd/system/legacy.service" 2>&1)
lacks "$verify" "quoteguard.conf" "systemd-analyze verify loads the unit with the drop-in and has nothing to say about it"
cp "$DROPIN" "$TMP/dropin.good"
printf 'Enviroment=X=1\n' >> "$DROPIN"
has "$(systemd-analyze verify "$ROOT/etc/systemd/system/legacy.service" 2>&1)" "quoteguard.conf:6: Unknown key 'Enviroment'" \
    "(verify does read the drop-in: a bad key in it is named)"
cp "$TMP/dropin.good" "$DROPIN"

out=$("$QG" enable --root "$ROOT" suid 2>&1); rc=$?
ok "enable on a set-ID ExecStart: exit 80" [ "$rc" -eq 80 ] || tap_diag "exit $rc: $out"
has "$out" "set-user-ID" "… saying why"
ok "… and no drop-in is written" [ ! -e "$ROOT/etc/systemd/system/suid.service.d" ]
out=$("$QG" enable --root "$ROOT" --config "$TMP/audit.conf" --mode bogus legacy 2>&1); rc=$?
ok "enable with a bad option: exit 64" [ "$rc" -eq 64 ]
printf 'mode = "audit"\n' > "$TMP/bad.conf"
out=$("$QG" enable --root "$ROOT" --config "$TMP/bad.conf" legacy 2>&1); rc=$?
ok "enable with a config that has problems: exit 78" [ "$rc" -eq 78 ] || tap_diag "exit $rc: $out"
ok "… the earlier drop-in is left as it was" cmp -s "$DROPIN" "$TMP/dropin.good"
out=$("$QG" enable --root "$ROOT" nosuch 2>&1); rc=$?
ok "enable on a unit that does not exist: exit 66" [ "$rc" -eq 66 ]

out=$("$QG" disable --root "$ROOT" legacy 2>&1); rc=$?
ok "disable legacy: exit 0" [ "$rc" -eq 0 ]
ok "disable removes the drop-in and its directory" [ ! -e "$ROOT/etc/systemd/system/legacy.service.d" ]
rm -f "$ROOT/etc/systemd/system/legacy.service" "$ROOT/etc/systemd/system/suid.service"
rm -rf "$ROOT/opt"
rmdir "$ROOT/etc/systemd/system" "$ROOT/etc/systemd"

dpkg --root="$ROOT" --force-script-chrootless -r quoteguard > "$TMP/dpkg.log" 2>&1
ok "dpkg -r removes it" [ $? -eq 0 ] || tap_diag "$(cat "$TMP/dpkg.log")"
left=$(cd "$ROOT" && find . ! -type d ! -path './var/lib/dpkg/*' | sort)
ok "dpkg -r leaves nothing but the conffiles" is_list "$left" "$(printf './etc/logrotate.d/quoteguard\n./etc/quoteguard.conf\n')" ||
    tap_diag "left: $left"
ok "… not even /run/quoteguard" [ ! -e "$ROOT/run/quoteguard" ]
dpkg --root="$ROOT" --force-script-chrootless -P quoteguard > "$TMP/dpkg.log" 2>&1
left=$(cd "$ROOT" && find . ! -type d ! -path './var/lib/dpkg/*')
ok "dpkg -P removes the conffiles too" [ -z "$left" ] || tap_diag "left: $left"

tap_done
