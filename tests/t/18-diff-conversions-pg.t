#!/bin/bash
# Differential test: which client characters PostgreSQL's conversion to the
# server encoding turns into ASCII, against the shim's table
# (qg_conversion_to_ascii).  For every client encoding and every server
# encoding it has a conversion to (pg_conversion's defaults, the ones the
# server uses for client_encoding), every character of the client encoding
# that is not ASCII goes through the server's convert() (the same conversion
# procedure the client_encoding path calls): in chunks of 1024, and one by
# one in a chunk that fails or makes ASCII.  UTF8's and MULE_INTERNAL's
# four-byte characters are taken one in 64 (tests/diff/pg_conversions.c).
# servers: pg
set -u
cd "$(dirname "$0")/../.."
. tests/lib/pg.sh
BUILD=${BUILD:-build}
helper=$BUILD/diff/pg_conversions

if ! pg_available; then
    echo "1..0 # SKIP no PostgreSQL server binaries or not root"
    exit 0
fi
make -s "$helper" >/dev/null || { echo "Bail out! cannot build $helper"; exit 1; }
pg_start >/dev/null || { echo "Bail out! cannot start PostgreSQL"; exit 1; }

pg_psql -q <<'SQL' >/dev/null || { echo "Bail out! cannot create qg_convert_each"; exit 1; }
CREATE FUNCTION qg_convert_each(chars text[], src text, dst text) RETURNS TABLE(converted bytea)
LANGUAGE plpgsql AS $$
DECLARE h text;
BEGIN
    FOREACH h IN ARRAY chars LOOP
        BEGIN converted := convert(decode(h, 'hex'), src, dst);
        EXCEPTION WHEN others THEN converted := NULL; END;
        RETURN NEXT;
    END LOOP;
END $$;
SQL
pairs=$(pg_psql -At -F' ' -c "SELECT pg_encoding_to_char(conforencoding), pg_encoding_to_char(contoencoding)
    FROM pg_conversion WHERE condefault ORDER BY 1, 2" |
    grep -Ev ' (SJIS|SHIFT_JIS_2004|BIG5|GBK|UHC|GB18030|JOHAB)$')  # client-only: never a server's
echo "1..$(( $(wc -l <<<"$pairs") + 1 ))"

made_ascii=()
while read -r client server; do
    out=$("$helper" compare "$client" "$server" 2>&1)
    status=$?
    read -r converted failed ascii <<<"$(tail -n 1 <<<"$out")"
    if [ "$status" -eq 0 ]; then
        echo "ok - $client -> $server: $converted characters converted, $failed rejected, $ascii made ASCII, as the shim says"
    else
        echo "not ok - $client -> $server"
        head -n 20 <<<"$out" | sed 's/^/# /'
    fi
    [ "${ascii:-0}" != 0 ] && made_ascii+=("$client->$server: $ascii")
done <<<"$pairs"
# The table must not be empty by accident: the known case is there.
if [ "$("$helper" chars SHIFT_JIS_2004 >/dev/null; echo $?)" = 0 ] &&
   printf '%s\n' "${made_ascii[@]}" | grep -q '^SHIFT_JIS_2004->UTF8: '; then
    echo "ok - conversions that make ASCII: ${made_ascii[*]}"
else
    echo "not ok - conversions that make ASCII: ${made_ascii[*]:-none} (SHIFT_JIS_2004->UTF8 expected)"
fi
