#!/bin/bash
# Differential test: the checker's encoding verdict (qg_encoding_char_len
# walks the whole string) against the real PostgreSQL server for every client
# encoding, and against glibc iconv where it has the same encoding.
#
# For each string the server gives two answers: the verifier's
# (convert(b, ENC, ENC) runs pg_verify_mbstr only) and the conversion's
# (convert_from(b, ENC) to the UTF8 database, which also needs a mapping).
# The checker must agree with the verifier; every other outcome is a named
# category below, and any disagreement outside them fails the test.
# servers: pg
set -u
cd "$(dirname "$0")/../.."
. tests/lib/pg.sh
BUILD=${BUILD:-build}
helper=$BUILD/diff/encoding_verdicts

if ! pg_available; then
    echo "1..0 # SKIP no PostgreSQL server binaries or not root"
    exit 0
fi
make -s "$helper" >/dev/null || { echo "Bail out! cannot build $helper"; exit 1; }

pg_encodings=(SQL_ASCII UTF8 EUC_JP EUC_JIS_2004 EUC_CN EUC_KR EUC_TW MULE_INTERNAL
    LATIN1 LATIN2 LATIN3 LATIN4 LATIN5 LATIN6 LATIN7 LATIN8 LATIN9 LATIN10
    ISO_8859_5 ISO_8859_6 ISO_8859_7 ISO_8859_8 WIN866 WIN874 WIN1250 WIN1251 WIN1252
    WIN1253 WIN1254 WIN1255 WIN1256 WIN1257 WIN1258 KOI8R KOI8U
    SJIS SHIFT_JIS_2004 BIG5 GBK UHC GB18030 JOHAB)
# PostgreSQL encoding → glibc iconv charset with the same byte structure.
declare -A iconv_of=([SJIS]=SHIFT_JIS [SHIFT_JIS_2004]=CP932 [GBK]=GBK [BIG5]=BIG5
    [EUC_JP]=EUC-JP [GB18030]=GB18030 [UTF8]=UTF-8)

echo "1..$(( ${#pg_encodings[@]} + ${#iconv_of[@]} + 1 ))"
pg_start >/dev/null || { echo "Bail out! cannot start PostgreSQL"; exit 1; }

work=$(mktemp -d /tmp/qg-diffenc.XXXXXX)
qg_at_exit "rm -rf $work"

"$helper" generate 60 2000 >"$work/samples.hex"
total_strings=$(wc -l <"$work/samples.hex")
pg_psql -q <<'SQL' >/dev/null
CREATE FUNCTION qg_valid(b bytea, enc text, OUT verify int, OUT conv int) LANGUAGE plpgsql AS $$
BEGIN
    BEGIN PERFORM convert(b, enc, enc); verify := 1;
    EXCEPTION WHEN others THEN verify := 0; END;
    BEGIN PERFORM convert_from(b, enc); conv := 1;
    EXCEPTION WHEN others THEN conv := 0; END;
END $$;
CREATE TABLE samples (id int PRIMARY KEY, b bytea);
SQL
awk '{ print NR "\t\\\\x" $0 }' "$work/samples.hex" | pg_psql -c "COPY samples FROM STDIN"

# Reads "hex qg verify conv" lines; prints "category<TAB>hex" for each string.
# $1: encoding name, $2: 1 when the server has no conversion to UTF8.
classify_pg() {
    awk -v enc="$1" -v noconv="$2" '
    {
        hex = $1; qg = $2; ver = $3; conv = $4
        if (qg == ver && (noconv || conv == ver))
            cat = "agree"
        else if (qg == ver && ver == 1 && noconv == 0 && conv == 0)
            cat = "explained:well-formed-but-unmapped (verifier accepts, conversion has no mapping)"
        else if (qg == 0 && ver == 1 && conv == 0 && (enc == "BIG5" || enc == "GBK" || enc == "UHC"))
            cat = "explained:stricter-than-verifier (BIG5/GBK/UHC verifier takes any non-NUL 2nd byte; conversion rejects too)"
        else if (qg == 0 && ver == 1 && conv == 1)
            cat = "UNEXPLAINED:checker-rejects-server-accepts"
        else if (qg == 1 && ver == 0)
            cat = "UNEXPLAINED:checker-accepts-server-rejects"
        else
            cat = "UNEXPLAINED:other"
        print cat "\t" hex
    }'
}

declare -A category_total=()
failed_encodings=()
for enc in "${pg_encodings[@]}"; do
    noconv=0
    pg_psql -At -c "SELECT convert_from('\\x41'::bytea, '$enc')" >/dev/null 2>&1 || noconv=1
    pg_psql -At -F' ' -c "SELECT v.verify, v.conv FROM samples, qg_valid(b, '$enc') v ORDER BY id" \
        >"$work/server.$enc" 2>"$work/server.$enc.err"
    "$helper" check pg "$enc" <"$work/samples.hex" | cut -d' ' -f1 >"$work/qg.$enc"
    paste -d' ' "$work/samples.hex" "$work/qg.$enc" "$work/server.$enc" |
        classify_pg "$enc" "$noconv" >"$work/class.$enc"
    rows=$(wc -l <"$work/server.$enc")
    summary=$(cut -f1 "$work/class.$enc" | sort | uniq -c | awk '{ c = $1; $1 = ""; printf "%s%s=%d", sep, substr($0, 2), c; sep = "; " }')
    while read -r count cat; do
        category_total["pg:$cat"]=$(( ${category_total["pg:$cat"]:-0} + count ))
    done < <(cut -f1 "$work/class.$enc" | sed 's/ (.*//' | sort | uniq -c)
    bad=$(grep -c '^UNEXPLAINED' "$work/class.$enc")
    [ "$noconv" = 1 ] && summary="$summary (no conversion to UTF8: verifier only)"
    if [ "$rows" -eq "$total_strings" ] && [ "$bad" -eq 0 ]; then
        echo "ok - $enc: $rows strings vs PostgreSQL: $summary"
    else
        echo "not ok - $enc: $rows/$total_strings server rows, $bad unexplained: $summary"
        grep '^UNEXPLAINED' "$work/class.$enc" | head -n 8 | sed 's/^/# /'
        head -n 3 "$work/server.$enc.err" | sed 's/^/# /'
        failed_encodings+=("$enc")
    fi
done

# glibc iconv: the same strings converted to UTF-8.  Where iconv accepts what
# the checker rejects, PostgreSQL (verifier and conversion) must reject it too,
# and the offending character (at the checker's first bad offset, NUL read as a space) must belong
# to a known glibc extension.
# Reads "hex qg iconv bad qg_nul_as_space server"; $1: the iconv charset.
classify_iconv() {
    awk -v charset="$1" '
    function nibble(c) { return index("0123456789abcdef", c) - 1 }
    function byte(h, k) { return 16 * nibble(substr(h, 2 * k + 1, 1)) + nibble(substr(h, 2 * k + 2, 1)) }
    {
        hex = $1; qg = $2; ic = $3; bad = $4; qg_nul_as_space = $5; server = $6
        lead = byte(hex, bad); next_byte = byte(hex, bad + 1)
        if (qg == ic)
            cat = "agree"
        else if (qg == 1 && ic == 0)
            cat = "explained:well-formed-but-unmapped-in-glibc"
        else if (server != qg)
            cat = "UNEXPLAINED:checker-rejects-iconv-and-server-accept"
        else if (qg_nul_as_space == 1)
            cat = "explained:nul-byte (iconv converts U+0000, the servers reject NUL)"
        else if ((charset == "GBK" || charset == "BIG5") && (lead == 128 || lead == 255))
            cat = "explained:glibc-single-byte-0x80-0xff (glibc passes it through; PostgreSQL rejects it)"
        else if (charset == "EUC-JP" && ((lead >= 128 && lead <= 141) || (lead >= 144 && lead <= 160)))
            cat = "explained:glibc-c1-controls (glibc EUC-JP takes 0x80-0x8d/0x90-0xa0 as characters; PostgreSQL rejects them)"
        else if (charset == "UTF-8" && (lead >= 245 && lead <= 247 || lead == 244 && next_byte >= 144))
            cat = "explained:glibc-beyond-U+10FFFF (glibc decodes 4-byte forms above U+10FFFF; RFC 3629 and PostgreSQL reject them)"
        else
            cat = "UNEXPLAINED:checker-rejects-iconv-accepts"
        print cat "\t" hex
    }'
}
for enc in "${!iconv_of[@]}"; do
    charset=${iconv_of[$enc]}
    "$helper" check pg "$enc" "$charset" <"$work/samples.hex" >"$work/iconv.$enc"
    paste -d' ' "$work/samples.hex" "$work/iconv.$enc" <(awk '{ print $1 * $2 }' "$work/server.$enc") |
        classify_iconv "$charset" >"$work/iclass.$enc"
    summary=$(cut -f1 "$work/iclass.$enc" | sort | uniq -c | awk '{ c = $1; $1 = ""; printf "%s%s=%d", sep, substr($0, 2), c; sep = "; " }')
    while read -r count cat; do
        category_total["iconv:$cat"]=$(( ${category_total["iconv:$cat"]:-0} + count ))
    done < <(cut -f1 "$work/iclass.$enc" | sed 's/ (.*//' | sort | uniq -c)
    bad=$(grep -c '^UNEXPLAINED' "$work/iclass.$enc")
    if [ "$bad" -eq 0 ]; then
        echo "ok - $enc vs iconv $charset: $(wc -l <"$work/iclass.$enc") strings: $summary"
    else
        echo "not ok - $enc vs iconv $charset: $bad unexplained: $summary"
        grep '^UNEXPLAINED' "$work/iclass.$enc" | head -n 8 | sed 's/^/# /'
    fi
done

echo "# totals over ${#pg_encodings[@]} PostgreSQL encodings and ${#iconv_of[@]} iconv charsets, $total_strings strings each:"
for key in $(printf '%s\n' "${!category_total[@]}" | sort); do
    echo "#   $key = ${category_total[$key]}"
done
unexplained=0
for key in "${!category_total[@]}"; do
    case $key in *UNEXPLAINED*) unexplained=$((unexplained + category_total[$key])) ;; esac
done
if [ "$unexplained" -eq 0 ]; then
    echo "ok - no unexplained disagreement"
else
    echo "not ok - $unexplained unexplained disagreements (encodings: ${failed_encodings[*]:-iconv only})"
fi
