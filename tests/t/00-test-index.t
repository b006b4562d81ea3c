#!/bin/bash
# tests/README.md and the tests agree: every tests/t/*.t and tests/unit/*.c
# has a row there and every row names a test that exists; test numbers are
# unique; each tests/t/*.t has one `# servers:` line (what make check-quick
# selects by), and the servers column of its row says the same.
# servers: none
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh

index=tests/README.md
[ -f "$index" ] || tap_bail "$index missing"

# Rows of the two tables: "| `NN-name` | servers | …" and "| `test_name` | …".
index_tests=$(sed -n 's/^| `\([0-9][0-9]-[a-z][a-z0-9-]*\)` |.*/\1/p' "$index" | sort)
index_units=$(sed -n 's/^| `\(test_[a-z0-9_]*\)` |.*/\1/p' "$index" | sort)
tree_tests=$(ls tests/t/*.t | sed 's|.*/||; s|\.t$||' | sort)
tree_units=$(ls tests/unit/*.c | sed 's|.*/||; s|\.c$||' | sort)

missing=$(comm -23 <(printf '%s\n' "$tree_tests") <(printf '%s\n' "$index_tests"))
ok "every tests/t/*.t has a row in $index" [ -z "$missing" ] || tap_diag "no row: $missing"
gone=$(comm -13 <(printf '%s\n' "$tree_tests") <(printf '%s\n' "$index_tests"))
ok "every row of $index names a test in tests/t" [ -z "$gone" ] || tap_diag "no such test: $gone"
missing=$(comm -23 <(printf '%s\n' "$tree_units") <(printf '%s\n' "$index_units"))
ok "every tests/unit/*.c has a row in $index" [ -z "$missing" ] || tap_diag "no row: $missing"
gone=$(comm -13 <(printf '%s\n' "$tree_units") <(printf '%s\n' "$index_units"))
ok "every unit row of $index names a file in tests/unit" [ -z "$gone" ] || tap_diag "no such file: $gone"

shared=$(printf '%s\n' "$tree_tests" | cut -d- -f1 | uniq -d)
ok "no two tests share a number" [ -z "$shared" ] || tap_diag "shared numbers: $shared"

# The servers line: none, or the servers the test starts.
untagged= unknown= disagree=
for t in $tree_tests; do
    lines=$(grep -c '^# servers: ' "tests/t/$t.t")
    if [ "$lines" -ne 1 ]; then
        untagged="$untagged $t"
        continue
    fi
    servers=$(sed -n 's/^# servers: //p' "tests/t/$t.t")
    for s in $servers; do
        case $s in none | pg | mariadb | php-fpm | apache | php-S) ;; *) unknown="$unknown $t:$s" ;; esac
    done
    case " $servers " in *" none "*) [ "$servers" = none ] || unknown="$unknown $t:none+" ;; esac
    row=$(sed -n "s/^| \`$t\` | \\([^|]*\\) |.*/\\1/p" "$index")
    [ "$(echo $row)" = "$(echo $servers)" ] || disagree="$disagree $t($servers/$row)"
done
ok "each test has exactly one '# servers:' line" [ -z "$untagged" ] || tap_diag "without one:$untagged"
ok "servers lines name known servers, or none alone" [ -z "$unknown" ] || tap_diag "unknown:$unknown"
ok "the servers column of $index is each test's line" [ -z "$disagree" ] || tap_diag "differ (test/row):$disagree"

# A test that says none must not start one.
starts=
for t in $tree_tests; do
    grep -q '^# servers: none$' "tests/t/$t.t" || continue
    grep -qE '^[^#]*\<(pg_start|my_start)\>' "tests/t/$t.t" && starts="$starts $t"
done
ok "no test that says 'servers: none' starts a server" [ -z "$starts" ] || tap_diag "they do:$starts"

# A test that starts a server adds its own exit handlers with qg_at_exit
# (tests/lib/atexit.sh): a `trap … EXIT` would replace the one that stops
# the server, or be replaced by it.
traps=
for t in $tree_tests; do
    grep -qE '^[^#]*\<(pg_start|my_start)\>' "tests/t/$t.t" &&
        grep -qE '^[^#]*\<trap\>.*\<EXIT\>' "tests/t/$t.t" && traps="$traps $t"
done
ok "no test that starts a server sets trap … EXIT" [ -z "$traps" ] || tap_diag "they do:$traps"
tap_done
