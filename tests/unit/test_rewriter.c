/* Rewrite mode: which literals become parameters, the exact rewritten text
 * and the decoded values (src/core/rewriter.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encoding_tables.h"
#include "lexer_internal.h"
#include "quoteguard.h"
#include "rewriter.h"
#include "tap.h"

#define SCS_ON QG_STD_STRINGS
#define SCS_OFF 0u
#define SRV_UTF8 QG_REWRITE_SERVER_UTF8
#define MAX_EXPECT 6

typedef struct rewrite_case {
    const char *encoding;
    unsigned flags;
    unsigned options;
    const char *sql;
    const char *expect_text; /* NULL: must stay unchanged */
    const char *expect_params[MAX_EXPECT + 1]; /* NULL-terminated */
    const char *why;
} rewrite_case;

static const rewrite_case cases[] = {
    /* --- comparisons, lists, patterns --- */
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT * FROM t WHERE name = 'abc'",
     "SELECT * FROM t WHERE name = $1   ", {"abc"}, "equality operand"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT * FROM t WHERE a <> 'x' AND b != 'y' AND c < 'p' AND d >= 'q'",
     "SELECT * FROM t WHERE a <> $1  AND b != $2  AND c < $3  AND d >= $4 ", {"x", "y", "p", "q"},
     "every comparison operator"},
    {"UTF8", SCS_ON, SRV_UTF8,
     "SELECT * FROM t WHERE s NOT IN ('a', 'b') AND s ILIKE 'a%' AND s NOT SIMILAR TO 'b' ESCAPE '#'",
     "SELECT * FROM t WHERE s NOT IN ($1 , $2 ) AND s ILIKE $3   AND s NOT SIMILAR TO $4  ESCAPE $5 ",
     {"a", "b", "a%", "b", "#"}, "IN list, ILIKE, SIMILAR TO, ESCAPE"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT * FROM t WHERE s LIKE 'a!%%' ESCAPE '!'",
     "SELECT * FROM t WHERE s LIKE $1     ESCAPE $2 ", {"a!%%", "!"}, "LIKE … ESCAPE"},
    {"UTF8", SCS_ON, SRV_UTF8,
     "SELECT * FROM t WHERE s IS DISTINCT FROM 'a' OR s IS NOT DISTINCT FROM 'b'",
     "SELECT * FROM t WHERE s IS DISTINCT FROM $1  OR s IS NOT DISTINCT FROM $2 ", {"a", "b"},
     "IS [NOT] DISTINCT FROM, and DISTINCT there does not mark the query grouped"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT * FROM t ORDER BY id LIMIT '5' OFFSET '10'",
     "SELECT * FROM t ORDER BY id LIMIT $1  OFFSET $2  ", {"5", "10"}, "LIMIT and OFFSET operands"},
    {"UTF8", SCS_ON, SRV_UTF8,
     "SELECT * FROM t WHERE lower(s) = lower('ABC') AND coalesce(s, 'z') <> 'q'",
     "SELECT * FROM t WHERE lower(s) = lower($1   ) AND coalesce(s, $2 ) <> $3 ",
     {"ABC", "z", "q"}, "arguments of fixed-type built-in functions"},
    {"UTF8", SCS_ON, SRV_UTF8, "select * from t where s = 'a' and i in ('1','2') limit '5'",
     "select * from t where s = $1  and i in ($2 ,$3 ) limit $4 ", {"a", "1", "2", "5"},
     "lower-case keywords, digits outside assignments"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT * FROM t WHERE s = ''", "SELECT * FROM t WHERE s = $1",
     {""}, "empty literal fills exactly"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT * FROM t WHERE s LIKE'a%'",
     "SELECT * FROM t WHERE s LIKE $1 ", {"a%"}, "a space keeps $1 off the keyword it touched"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT * FROM t WHERE s = 'a'; -- done\n",
     "SELECT * FROM t WHERE s = $1 ; -- done\n", {"a"}, "trailing semicolon and comment"},
    {"UTF8", SCS_ON, SRV_UTF8,
     "SELECT * FROM t WHERE i = '5'::int AND iv = '1'::interval AND a = '{1}'::int[]",
     "SELECT * FROM t WHERE i = $1 ::int AND iv = '1'::interval AND a = $2   ::int[]",
     {"5", "{1}"}, "casts to typmod-free types; ::interval stays"},
    {"UTF8", SCS_ON, SRV_UTF8,
     "SELECT * FROM t WHERE x IN (SELECT 'a' FROM u) AND y IN (SELECT a FROM u WHERE b = 'c')",
     "SELECT * FROM t WHERE x IN (SELECT 'a' FROM u) AND y IN (SELECT a FROM u WHERE b = $1 )",
     {"c"}, "IN (subquery) is no list: its select-list literal stays"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT s FROM t WHERE s = 'a' GROUP BY s HAVING s <> 'b'",
     "SELECT s FROM t WHERE s = $1  GROUP BY s HAVING s <> 'b'", {"a"},
     "grouped query: WHERE yes, HAVING no"},
    /* --- data-modifying statements --- */
    {"UTF8", SCS_ON, SRV_UTF8, "INSERT INTO t (s, d) VALUES ('x', '2020-01-01'), ('y', 'today')",
     "INSERT INTO t (s, d) VALUES ($1 , '2020-01-01'), ($2 , $3     )", {"x", "y", "today"},
     "VALUES rows; a value with digits stays (INTERVAL columns read it with their typmod)"},
    {"UTF8", SCS_ON, SRV_UTF8, "UPDATE t SET s = 'new', iv = '1 hour' WHERE s = '1'",
     "UPDATE t SET s = $1   , iv = '1 hour' WHERE s = $2 ", {"new", "1"},
     "SET assignment without digits; comparison with digits"},
    {"UTF8", SCS_ON, SRV_UTF8,
     "INSERT INTO t (s) VALUES ('x') ON CONFLICT (s) WHERE s <> 'q' DO UPDATE SET s = 'z' WHERE t.s <> 'w'",
     "INSERT INTO t (s) VALUES ($1 ) ON CONFLICT (s) WHERE s <> 'q' DO UPDATE SET s = $2  WHERE t.s <> $3 ",
     {"x", "z", "w"}, "ON CONFLICT inference predicate stays, DO UPDATE is rewritten"},
    {"UTF8", SCS_ON, SRV_UTF8, "DELETE FROM t WHERE s = 'gone' RETURNING s",
     "DELETE FROM t WHERE s = $1     RETURNING s", {"gone"}, "DELETE … RETURNING"},
    {"UTF8", SCS_ON, SRV_UTF8,
     "WITH x AS (SELECT * FROM t WHERE s = 'q') SELECT * FROM x WHERE s<>'r';",
     "WITH x AS (SELECT * FROM t WHERE s = $1 ) SELECT * FROM x WHERE s<>$2 ;", {"q", "r"},
     "CTE body and main query"},
    {"UTF8", SCS_ON, SRV_UTF8, "VALUES ('1'), ('2')", "VALUES ($1 ), ($2 )", {"1", "2"},
     "VALUES statement: no assignment, digits fine"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT * FROM t JOIN u ON u.s = 'a' WHERE t.x = 'b' FOR UPDATE",
     "SELECT * FROM t JOIN u ON u.s = $1  WHERE t.x = $2  FOR UPDATE", {"a", "b"},
     "JOIN … ON condition, FOR UPDATE after the operand"},
    {"UTF8", SCS_ON, SRV_UTF8,
     "SELECT * FROM t WHERE ts = '2020-01-01'::timestamp with time zone AND s = 'x'",
     "SELECT * FROM t WHERE ts = '2020-01-01'::timestamp with time zone AND s = $1 ", {"x"},
     "cast to a two-word type stays; WITH inside an expression starts no CTE"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT lower(s) FROM t WHERE s = 'a' UNION SELECT upper('b')",
     "SELECT lower(s) FROM t WHERE s = $1  UNION SELECT upper($2 )", {"a", "b"},
     "both sides of a UNION"},
    {"UTF8", SCS_ON, SRV_UTF8, "INSERT INTO t SELECT * FROM (VALUES ('1'), ('a')) v",
     "INSERT INTO t SELECT * FROM (VALUES ('1'), ($1 )) v", {"a"},
     "VALUES rows inside an INSERT keep the digit rule"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT lower('A' COLLATE \"C\"), lower('B')",
     "SELECT lower('A' COLLATE \"C\"), lower($1 )", {"B"}, "COLLATE keeps its literal"},
    /* --- decoding --- */
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT * FROM t WHERE s = E'a\\tb\\nc\\\\d''e\\041\\x41\\q'",
     "SELECT * FROM t WHERE s = $1                        ", {"a\tb\nc\\d'e!Aq"},
     "E'' escapes: control, backslash, doubled quote, octal, hex, other"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT * FROM t WHERE s = E'\\u00e9t\\U0001F600' OR s = E'\\ud83d\\ude00'",
     "SELECT * FROM t WHERE s = $1                   OR s = $2             ",
     {"\xc3\xa9t\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"}, "\\u, \\U and a surrogate pair"},
    {"UTF8", SCS_ON, SRV_UTF8,
     "SELECT * FROM t WHERE s = U&'d\\0061t\\+000061' OR s = U&'d!0061t' UESCAPE '!'",
     "SELECT * FROM t WHERE s = $1                  OR s = $2                     ",
     {"data", "dat"}, "U&'' with the default escape and with UESCAPE"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT * FROM t WHERE s = 'ab'\n  'cd' AND i = 1",
     "SELECT * FROM t WHERE s = $1  \n       AND i = 1", {"abcd"},
     "continuation joins the parts; the newline stays in place"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT * FROM t WHERE s = 'a\\b'",
     "SELECT * FROM t WHERE s = $1   ", {"a\\b"}, "standard_conforming_strings: backslash is data"},
    {"UTF8", SCS_OFF, SRV_UTF8, "SELECT * FROM t WHERE s = 'it''s'",
     "SELECT * FROM t WHERE s = $1     ", {"it's"}, "scs off, no backslash: same as on"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT * FROM t WHERE s = '\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e' AND i = 1",
     "SELECT * FROM t WHERE s = $1    AND i = 1", {"\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e"},
     "UTF-8 text: padding counts characters, not bytes"},
    {"SJIS", SCS_ON, 0, "SELECT * FROM t WHERE s = '\x83\x5c\x95\x5c' AND i = 1",
     "SELECT * FROM t WHERE s = $1   AND i = 1", {"\x83\x5c\x95\x5c"},
     "SJIS with 0x5c trail bytes"},
    {"SJIS", SCS_ON, 0, "SELECT * FROM t WHERE s = E'\x83\x5c\\n'",
     "SELECT * FROM t WHERE s = $1    ", {"\x83\x5c\n"},
     "SJIS in E'': the trail byte is no backslash"},
    {"SJIS", SCS_ON, 0, "SELECT * FROM t WHERE s = 'a\x83\x5c\nb\r\n\x95\x5c' AND i = 1",
     "SELECT * FROM t WHERE s = $1 \n \r\n   AND i = 1", {"a\x83\x5c\nb\r\n\x95\x5c"},
     "SJIS with line ends: one space per character between them"},
    {"SJIS", SCS_OFF, 0, "SELECT * FROM t WHERE s = '\x83\x5c''\x95\x5c' AND t = E'\x83\x5c\\\\'",
     "SELECT * FROM t WHERE s = $1     AND t = $2    ", {"\x83\x5c'\x95\x5c", "\x83\x5c\\"},
     "SJIS, scs off: a 0x5c trail byte is no backslash, an escaped backslash is one"},
    {"LATIN1", SCS_ON, 0, "SELECT * FROM t WHERE s = 'caf\xe9'",
     "SELECT * FROM t WHERE s = $1    ", {"caf\xe9"}, "single-byte encoding"},
    {"EUC_JP", SCS_ON, 0, "UPDATE t SET s = '\xa4\xa2' WHERE s = '\xa4\xa4'",
     "UPDATE t SET s = $1  WHERE s = $2 ", {"\xa4\xa2", "\xa4\xa4"}, "EUC_JP assignment"},

    /* --- left alone --- */
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT 'a'", NULL, {NULL}, "bare select-list literal"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT * FROM t WHERE d = DATE '2020-01-01' AND iv > interval '1 day'",
     NULL, {NULL}, "typed literals"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT * FROM t ORDER BY 'x'", NULL, {NULL},
     "ORDER BY 'x' is an error for a literal, a sort key for a parameter"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT lower(s) = 'a' FROM t GROUP BY lower(s) = 'a'", NULL, {NULL},
     "GROUP BY matches expressions: $1 never equals $2"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT DISTINCT lower(s) = 'a' FROM t", NULL, {NULL},
     "SELECT DISTINCT marks the query grouped"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT count(*) FILTER (WHERE s = 'a') FROM t GROUP BY n", NULL,
     {NULL}, "grouped: nothing under the select list, not even a FILTER clause"},
    {"UTF8", SCS_ON, SRV_UTF8, "INSERT INTO t (s) VALUES ('x') ON CONFLICT (s) WHERE s <> 'q' DO NOTHING; SELECT 1",
     NULL, {NULL}, "a second statement after the first"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT * FROM t WHERE s = ANY('{a,b}')", NULL, {NULL},
     "ANY('{…}')"},
    {"UTF8", SCS_ON, SRV_UTF8, "SET search_path = 'x'", NULL, {NULL}, "utility statement"},
    {"UTF8", SCS_ON, SRV_UTF8, "EXPLAIN SELECT * FROM t WHERE s = 'a'", NULL, {NULL}, "EXPLAIN"},
    {"UTF8", SCS_ON, SRV_UTF8, "COPY t FROM '/tmp/x' WITH (DELIMITER ',')", NULL, {NULL}, "COPY"},
    {"UTF8", SCS_ON, SRV_UTF8,
     "CREATE FUNCTION f() RETURNS int AS 'select 1' LANGUAGE sql", NULL, {NULL},
     "CREATE FUNCTION body"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT 1; SELECT * FROM t WHERE s = 'a'", NULL, {NULL},
     "two statements cannot go through the extended protocol"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT * FROM t WHERE s = $1 AND x = 'a'", NULL, {NULL},
     "the query has its own $1"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT * FROM t WHERE s = concat('a', 'b') OR s = 'a' || 'b'",
     NULL, {NULL}, "arguments of type \"any\" and operands of ||"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT * FROM t WHERE d = date('2020-01-01')", NULL, {NULL},
     "typename('literal') is a cast only for a literal"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT * FROM t WHERE s = 'a' COLLATE \"C\"", NULL, {NULL},
     "COLLATE binds to the literal"},
    {"UTF8", SCS_ON, SRV_UTF8,
     "SELECT * FROM t WHERE b = B'101' OR x = X'ff' OR n = N'abc' OR s = $$abc$$", NULL, {NULL},
     "bit, hex, national and dollar-quoted strings"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT * FROM t WHERE s = E'\\xe9' OR s = E'\\351' OR s = E'it\\'s'",
     NULL, {NULL}, "escapes making a high byte (server encoding) and \\' (backslash_quote)"},
    {"UTF8", SCS_ON, 0, "SELECT * FROM t WHERE s = E'\\u00e9'", NULL, {NULL},
     "Unicode escape with a server encoding that may not be UTF8"},
    {"LATIN1", SCS_ON, SRV_UTF8, "SELECT * FROM t WHERE s = E'\\u00e9' OR s = U&'\\00e9'", NULL,
     {NULL}, "Unicode escapes need a UTF8 client"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT * FROM t WHERE s = E'\\ud83d' OR s = U&'\\D83D'", NULL,
     {NULL}, "lone surrogate: a server error, left to the server"},
    {"UTF8", SCS_OFF, SRV_UTF8, "SELECT * FROM t WHERE s = 'a\\b' OR s = U&'x'", NULL, {NULL},
     "scs off: backslash earns a warning; U&'' is an error"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT * FROM t WHERE s = U&'d!0061t' UESCAPE 'a'", NULL, {NULL},
     "UESCAPE with a hex digit"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT * FROM t WHERE s=''and i = 1", NULL, {NULL},
     "no room for a space between $1 and the keyword"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT current_query() WHERE 'a' = 'a'", NULL, {NULL},
     "the query reads its own text"},
    {"UTF8", SCS_ON, SRV_UTF8, "SELECT * FROM t WHERE s = 'a' 'b'", NULL, {NULL},
     "two literals on one line: a syntax error stays the server's"},
    {"UTF8", SCS_ON, SRV_UTF8, "UPDATE t SET iv = '1' WHERE s = x", NULL, {NULL},
     "assignment of a value with digits (INTERVAL HOUR reads '1' as one hour)"},
    {"UTF8", SCS_ON, SRV_UTF8,
     "SELECT * FROM t WHERE s = 'a' AT TIME ZONE 'UTC' OR s = 'b'::interval hour", NULL, {NULL},
     "operators binding tighter than the comparison"},
};

/* Characters of s in enc: a replacement keeps every other token in place. */
static size_t chars(const qg_encoding *enc, const char *s)
{
    size_t n = 0, len = strlen(s);
    for (size_t p = 0; p < len; n++) {
        size_t c = qg_encoding_char_len(enc, (const unsigned char *)s + p, len - p);
        p += c ? c : 1;
    }
    return n;
}

static void run_case(const rewrite_case *c)
{
    qg_context ctx;
    const qg_encoding *enc = qg_encoding_find(QG_DIALECT_POSTGRES, c->encoding);
    qg_context_init(&ctx, QG_DIALECT_POSTGRES, enc, c->flags);
    char text[512], values[512];
    const char *params[16];
    qg_rewrite rw = {.text = text, .text_cap = sizeof text, .values = values,
                     .values_cap = sizeof values, .params = params, .params_cap = 16};
    qg_rewrite_status st = qg_rewrite_query(&ctx, c->options, c->sql, strlen(c->sql), &rw);
    if (!c->expect_text) {
        tap_ok(st == QG_REWRITE_UNCHANGED && rw.why != NULL, "left alone: %s (%s)", c->why,
               rw.why ? rw.why : "?");
        return;
    }
    if (!tap_ok(st == QG_REWRITE_DONE, "rewritten: %s", c->why)) {
        tap_diag("status %d, why %s", st, rw.why ? rw.why : "-");
        return;
    }
    size_t expect_n = 0;
    while (c->expect_params[expect_n])
        expect_n++;
    bool same_params = rw.nparams == expect_n;
    for (size_t i = 0; same_params && i < expect_n; i++)
        same_params = strcmp(params[i], c->expect_params[i]) == 0;
    bool same_text = strcmp(text, c->expect_text) == 0;
    tap_ok(same_text && same_params && rw.text_len == strlen(text) &&
               chars(enc, text) == chars(enc, c->sql),
           "  text, values and length in characters: %s", c->why);
    if (!same_text)
        tap_diag("got [%s]", text);
    for (size_t i = 0; !same_params && i < rw.nparams; i++)
        tap_diag("$%zu = [%s]", i + 1, params[i]);
}

/* Too small buffers: no partial answer, the sizes needed, then success. */
static void test_no_room(void)
{
    qg_context ctx;
    qg_context_init(&ctx, QG_DIALECT_POSTGRES, qg_encoding_find(QG_DIALECT_POSTGRES, "UTF8"),
                    SCS_ON);
    const char *sql = "SELECT * FROM t WHERE a = 'first' AND b = E'sec\\tond'";
    qg_rewrite rw = {0};
    qg_rewrite_status st = qg_rewrite_query(&ctx, 0, sql, strlen(sql), &rw);
    tap_ok(st == QG_REWRITE_NO_ROOM && rw.text_len == strlen(sql) && rw.nparams == 2 &&
               rw.values_len == strlen("first") + 1 + strlen("sec\tond") + 1,
           "no buffers: NO_ROOM with the sizes needed (%zu, %zu, %zu)", rw.text_len,
           rw.values_len, rw.nparams);

    char *text = malloc(rw.text_len + 1), *values = malloc(rw.values_len);
    const char **params = malloc(rw.nparams * sizeof *params);
    qg_rewrite exact = {.text = text, .text_cap = rw.text_len + 1, .values = values,
                        .values_cap = rw.values_len, .params = params, .params_cap = rw.nparams};
    st = qg_rewrite_query(&ctx, 0, sql, strlen(sql), &exact);
    tap_ok(st == QG_REWRITE_DONE &&
               strcmp(text, "SELECT * FROM t WHERE a = $1      AND b = $2         ") == 0 &&
               strcmp(params[0], "first") == 0 && strcmp(params[1], "sec\tond") == 0,
           "exactly the sizes asked for are enough");

    exact.values_cap = rw.values_len - 1;
    tap_ok(qg_rewrite_query(&ctx, 0, sql, strlen(sql), &exact) == QG_REWRITE_NO_ROOM,
           "one byte less for the values: NO_ROOM");
    free(text);
    free(values);
    free(params);
}

/* Parameter numbers grow: "$10" no longer fits into '' and it stays. */
static void test_wide_numbers(void)
{
    qg_context ctx;
    qg_context_init(&ctx, QG_DIALECT_POSTGRES, qg_encoding_find(QG_DIALECT_POSTGRES, "UTF8"),
                    SCS_ON);
    const char *sql = "SELECT * FROM t WHERE s IN ('','','','','','','','','','','abc')";
    char text[256], values[64];
    const char *params[16];
    qg_rewrite rw = {.text = text, .text_cap = sizeof text, .values = values,
                     .values_cap = sizeof values, .params = params, .params_cap = 16};
    qg_rewrite_status st = qg_rewrite_query(&ctx, 0, sql, strlen(sql), &rw);
    tap_ok(st == QG_REWRITE_DONE && rw.nparams == 10 &&
               strcmp(text, "SELECT * FROM t WHERE s IN ($1,$2,$3,$4,$5,$6,$7,$8,$9,'',$10  )") ==
                   0 &&
               strcmp(params[9], "abc") == 0,
           "tenth empty literal stays, the next one becomes $10");
}

/* More tokens than the first pass keeps for the second: past them the
 * second pass reads the rest again, to the same decisions. */
static void test_many_tokens(void)
{
    qg_context ctx;
    qg_context_init(&ctx, QG_DIALECT_POSTGRES, qg_encoding_find(QG_DIALECT_POSTGRES, "UTF8"),
                    SCS_ON);
    char sql[1024] = "SELECT * FROM t WHERE s IN (", expect[1024] = "SELECT * FROM t WHERE s IN (";
    for (int i = 1; i <= 40; i++) {
        char item[32], param[32];
        snprintf(item, sizeof item, "%s'v%d' /* c */", i > 1 ? ", " : "", i);
        snprintf(param, sizeof param, "%s$%-*d /* c */", i > 1 ? ", " : "", i < 10 ? 3 : 4, i);
        strcat(sql, item);
        strcat(expect, param);
    }
    strcat(sql, ") AND u LIKE 'x%' AND n = 3 GROUP BY s HAVING s <> 'h'");
    strcat(expect, ") AND u LIKE $41  AND n = 3 GROUP BY s HAVING s <> 'h'");
    char text[1024], values[512];
    const char *params[64];
    qg_rewrite rw = {.text = text, .text_cap = sizeof text, .values = values,
                     .values_cap = sizeof values, .params = params, .params_cap = 64};
    qg_rewrite_status st = qg_rewrite_query(&ctx, 0, sql, strlen(sql), &rw);
    bool ok = st == QG_REWRITE_DONE && rw.nparams == 41 && strcmp(text, expect) == 0 &&
              strcmp(params[40], "x%") == 0;
    for (int i = 0; ok && i < 40; i++) {
        char v[16];
        snprintf(v, sizeof v, "v%d", i + 1);
        ok = strcmp(params[i], v) == 0;
    }
    if (!tap_ok(ok, "80 comments and literals: the tail is decided as the head (GROUP BY seen)"))
        tap_diag("status %d, %zu parameters, got [%s]", st, rw.nparams, text);
}

/* What replaces a literal, as the character-by-character reading gives
 * it: "$1", then a space per character, line ends kept.  False when a
 * line end would be under "$1". */
static bool expected_padding(const qg_encoding *enc, const char *literal, char *out)
{
    size_t len = strlen(literal);
    for (size_t p = 0, n = 0; p < len; n++) {
        size_t c = qg_encoding_char_len(enc, (const unsigned char *)literal + p, len - p);
        if (literal[p] == '\n' && n < 2)
            return false;
        *out++ = n < 2 ? "$1"[n] : literal[p] == '\n' ? '\n' : ' ';
        p += c ? c : 1;
    }
    *out = '\0';
    return true;
}

/* Long literals are counted in runs: one character that stops a run (a
 * quote, a backslash, a line end, a byte the encoding does not take) at
 * every position, after runs of every length. */
static void test_long_literals(void)
{
    static const struct {
        const char *encoding, *piece, *stops[6];
    } runs[] = {
        {"SJIS", "\x95\x5c", {"''", "\\", "\"", "\n", "a", "\x81"}},
        {"UTF8", "\xe6\x97\xa5", {"''", "\\", "`", "\n", "\xe3\x81", "\xff"}},
        {"GB18030", "\x81\x30\x81\x30", {"''", "\\", "\n", "\xa1\xa2", "\x81", "9"}},
        {"EUC_JP", "\x8f\xa1\xa1", {"''", "\n", "\x8e\xa6", "\xa4", "x", "\xff"}},
        {"BIG5", "\xa4\x5c", {"''", "\\", "\n", "\xa4", "\xa1\x40", "z"}},
        {"LATIN1", "\xe9", {"''", "\\", "\n", "\x80", "a", "\xff"}},
    };
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        qg_context ctx;
        const qg_encoding *enc = qg_encoding_find(QG_DIALECT_POSTGRES, runs[r].encoding);
        qg_context_init(&ctx, QG_DIALECT_POSTGRES, enc, SCS_ON);
        int failed = 0, tried = 0;
        for (int k = 0; k < 6 && runs[r].stops[k]; k++) {
            for (int count = 0; count <= 24; count++) {
                for (int at = 0; at <= count && !failed; at++) {
                    char literal[256] = "'", value[256] = "", padding[256];
                    char sql[512], want[512], text[512], values[512];
                    for (int i = 0; i <= count; i++) {
                        if (i == at)
                            strcat(literal, runs[r].stops[k]);
                        if (i < count)
                            strcat(literal, runs[r].piece);
                    }
                    for (size_t i = 1, v = 0; literal[i]; i++) /* '' is one quote */
                        value[v++] = literal[i], i += literal[i] == '\'';
                    strcat(literal, "'");
                    bool fits = expected_padding(enc, literal, padding);
                    snprintf(sql, sizeof sql, "SELECT * FROM t WHERE s = %s AND i = 1", literal);
                    snprintf(want, sizeof want, "SELECT * FROM t WHERE s = %s AND i = 1", padding);
                    const char *params[4];
                    qg_rewrite rw = {.text = text, .text_cap = sizeof text, .values = values,
                                     .values_cap = sizeof values, .params = params,
                                     .params_cap = 4};
                    qg_rewrite_status st = qg_rewrite_query(&ctx, 0, sql, strlen(sql), &rw);
                    tried++;
                    if (!fits ? st != QG_REWRITE_UNCHANGED
                              : st != QG_REWRITE_DONE || strcmp(text, want) != 0 ||
                                    strcmp(params[0], value) != 0) {
                        failed++;
                        tap_diag("%s, stop %d at %d of %d: status %d, got [%s]", runs[r].encoding,
                                 k, at, count, st, st == QG_REWRITE_DONE ? text : "");
                    }
                }
            }
        }
        tap_ok(!failed, "%s: %d long literals padded character by character", runs[r].encoding,
               tried);
    }
}

/* Characters of the encoding from a high byte on (random bytes that
 * qg_encoding_char_len takes whole), NUL-terminated, into pool[]: up to
 * `per_length` of each length the encoding has, 1 to 4 bytes. */
static size_t multibyte_pool(const qg_encoding *enc, char pool[][5], size_t per_length)
{
    size_t n = 0;
    for (size_t len = 1; len <= 4; len++) {
        size_t found = 0;
        for (int tries = 0; tries < 100000 && found < per_length; tries++) {
            unsigned char c[4];
            for (size_t i = 0; i < len; i++)
                c[i] = (unsigned char)(i == 0 ? 0x80 + rand() % 0x80 : 0x30 + rand() % 0xd0);
            if (qg_encoding_char_len(enc, c, len) != len)
                continue;
            memcpy(pool[n], c, len);
            pool[n++][len] = '\0';
            found++;
        }
    }
    return n;
}

/* A literal's body of about `bytes` bytes: mostly characters of the pool,
 * with what stops a run of them now and then (a doubled quote, a line end,
 * a backslash, ASCII, a byte the encoding does not take there, a character
 * cut short) unless `runs_only`. */
static void random_body(char pool[][5], size_t pool_n, size_t bytes, bool runs_only, char *out)
{
    static const char *const stops[] = {"''", "\n", "\\", "\"", "`", "a", " ", "\x80", "\xff"};
    const size_t kinds = sizeof stops / sizeof stops[0];
    out[0] = '\0';
    for (size_t len = 0; len < bytes;) {
        const char *piece = pool[(size_t)rand() % pool_n];
        size_t piece_len = strlen(piece);
        if (!runs_only && rand() % 40 == 0) {
            size_t kind = (size_t)rand() % (kinds + 1);
            if (kind < kinds)
                piece = stops[kind], piece_len = strlen(piece);
            else
                piece_len -= piece_len > 1; /* cut */
        }
        memcpy(out + len, piece, piece_len);
        len += piece_len;
        out[len] = '\0';
    }
}

/* The padding of long literals, whole 64-byte blocks of them counted at
 * once by the vector build where it runs: the same text, character by
 * character, as the automaton alone (the reference implementation, SSE2)
 * gives and as qg_encoding_char_len reads it. */
static void test_padding_in_blocks(void)
{
    static const char *const encodings[] = {"SJIS", "UTF8", "GBK", "BIG5", "UHC", "GB18030",
                                            "EUC_KR", "EUC_JP"};
    static char pool[64][5], body[1200], literal[1300], padding[1300], sql[1400], want[1400],
        text[1400], values[1400];
    srand(7);
    for (size_t e = 0; e < sizeof encodings / sizeof encodings[0]; e++) {
        const qg_encoding *enc = qg_encoding_find(QG_DIALECT_POSTGRES, encodings[e]);
        size_t pool_n = multibyte_pool(enc, pool, 16);
        qg_context ctx;
        qg_context_init(&ctx, QG_DIALECT_POSTGRES, enc, SCS_ON);
        int failed = 0, tried = 0;
        for (int round = 0; round < 300 && !failed; round++) {
            random_body(pool, pool_n, (size_t)rand() % 1000, round % 4 == 0, body);
            snprintf(literal, sizeof literal, "'%s'", body);
            bool fits = expected_padding(enc, literal, padding);
            snprintf(sql, sizeof sql, "SELECT * FROM t WHERE s = %s AND i = 1", literal);
            snprintf(want, sizeof want, "SELECT * FROM t WHERE s = %s AND i = 1", padding);
            for (int way = 0; way < 3; way++) {
                int build = qg_allow_vectors(way == 0   ? QG_VECTORS_REFERENCE
                                             : way == 1 ? QG_VECTORS_SSE2
                                                        : QG_VECTORS_WIDEST);
                const char *params[4];
                qg_rewrite rw = {.text = text, .text_cap = sizeof text, .values = values,
                                 .values_cap = sizeof values, .params = params, .params_cap = 4};
                qg_rewrite_status st = qg_rewrite_query(&ctx, 0, sql, strlen(sql), &rw);
                tried++;
                bool ok = !fits ? st == QG_REWRITE_UNCHANGED
                                : st == QG_REWRITE_DONE && strcmp(text, want) == 0;
                if (!ok && !failed++)
                    tap_diag("%s, %zu bytes, reference %d, build %d: status %d, got [%s]",
                             encodings[e], strlen(literal), way == 0, build, st,
                             st == QG_REWRITE_DONE ? text : "");
            }
        }
        qg_allow_vectors(QG_VECTORS_WIDEST);
        tap_ok(!failed, "%s: %d long literals padded alike by every build", encodings[e], tried);
    }
}

/* The vector count takes the whole blocks of a run of valid characters,
 * and counts them as qg_encoding_char_len does: it leaves less than a
 * block, and a character open at the last one's end. */
static void test_count_takes_blocks(void)
{
    enum { COUNT_LEFT = 63 + 3 };
    static const char *const encodings[] = {"SJIS", "UTF8", "GBK", "BIG5", "UHC", "GB18030"};
    static char pool[64][5], body[1200];
    if (qg_allow_vectors(QG_VECTORS_WIDEST) < QG_VECTORS_AVX2) {
        tap_ok(1, "vector count # SKIP the CPU has no AVX2");
        return;
    }
    srand(11);
    for (size_t e = 0; e < sizeof encodings / sizeof encodings[0]; e++) {
        const qg_encoding *enc = qg_encoding_find(QG_DIALECT_POSTGRES, encodings[e]);
        size_t pool_n = multibyte_pool(enc, pool, 16);
        int failed = 0;
        for (int round = 0; round < 200 && !failed; round++) {
            size_t from = (size_t)rand() % 5;
            memset(body, 'x', from);
            random_body(pool, pool_n, 64 + (size_t)rand() % 1000, true, body + from);
            const unsigned char *s = (const unsigned char *)body;
            size_t len = strlen(body), chars = 0, want = 0, p = from, c = 1;
            size_t end = qg_count_chars(encoding_dfa(enc), s, from, len, &chars);
            while (p < end && (c = qg_encoding_char_len(enc, s + p, len - p)))
                p += c, want++;
            if (p != end || chars != want || end + COUNT_LEFT < len) {
                if (!failed++)
                    tap_diag("%s: %zu bytes from %zu: stopped at %zu with %zu characters "
                             "(a character ends at %zu, %zu before it)",
                             encodings[e], len, from, end, chars, p, want);
            }
        }
        tap_ok(!failed, "%s: the vector count takes runs of characters whole", encodings[e]);
    }
    /* UTF-8 continuation bytes after a byte that starts no character there
     * (the rewriter reads on one byte past it): none is a character. */
    static const char *const after_wrong_leads[] = {"\xc0\x80", "\xc1\xbf", "\xe0\x80\x80",
                                                    "\xed\xa0\x80", "\xf4\x90\x80\x80",
                                                    "\xf8\x88\x80\x80", "\xff\x80"};
    const qg_encoding *utf8 = qg_encoding_find(QG_DIALECT_POSTGRES, "UTF8");
    int counted = 0;
    for (size_t w = 0; w < sizeof after_wrong_leads / sizeof after_wrong_leads[0]; w++) {
        snprintf(body, sizeof body, "%s%s", after_wrong_leads[w],
                 "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e abcdefghijklmnopqrstuvwxyz "
                 "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789");
        size_t chars = 0;
        if (qg_count_chars(encoding_dfa(utf8), (const unsigned char *)body, 1, strlen(body),
                           &chars) != 1 ||
            chars != 0)
            counted++;
    }
    tap_ok(!counted, "UTF8: the vector count takes no continuation after a wrong lead (%d did)",
           counted);
}

/* Without a quote or a dollar sign there is no literal to replace: the
 * answer comes before any lexing, and only then. */
static void test_no_literal(void)
{
    qg_context ctx;
    qg_context_init(&ctx, QG_DIALECT_POSTGRES, qg_encoding_find(QG_DIALECT_POSTGRES, "UTF8"),
                    SCS_ON);
    static const char *const plain[] = {"SELECT abalance FROM pgbench_accounts WHERE aid = 7",
                                        "UPDATE t SET n = n + 1 WHERE id = 3 -- no literal",
                                        "BEGIN", ""};
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        qg_rewrite rw = {0};
        qg_rewrite_status st = qg_rewrite_query(&ctx, 0, plain[i], strlen(plain[i]), &rw);
        const char *why = qg_rewrite_skip_reason(plain[i], strlen(plain[i]), 0);
        tap_ok(why && st == QG_REWRITE_UNCHANGED && rw.why &&
                   strcmp(rw.why, "no string literal") == 0 && strcmp(why, rw.why) == 0,
               "no quote, no dollar: unchanged, not read (%s)", plain[i]);
    }
    const char *own = "SELECT * FROM t WHERE id = $1";
    qg_rewrite rw = {0};
    qg_rewrite_status st = qg_rewrite_query(&ctx, 0, own, strlen(own), &rw);
    tap_ok(!qg_rewrite_skip_reason(own, strlen(own), 0) && st == QG_REWRITE_UNCHANGED && rw.why &&
               strcmp(rw.why, "the query has $n parameters of its own") == 0,
           "a dollar sign alone: the query is read (%s)", rw.why ? rw.why : "?");
    const char *tail = "SELECT * FROM t WHERE s = 'x'";
    tap_ok(!qg_rewrite_skip_reason(tail, strlen(tail), 0) && qg_rewrite_skip_reason(tail, 26, 0),
           "a quote counts only within the length given");
}

/* QG_REWRITE_PLAIN_AS_IS: a statement is rewritten only when a literal it
 * replaces holds a byte >= 0x80, a backslash or a doubled quote; then all
 * of its replaceable literals go as parameters. */
static void test_plain_as_is(void)
{
    static const struct {
        const char *sql;
        size_t nparams;  /* 0: unchanged, "its literals are plain text" */
        bool read;       /* qg_rewrite_skip_reason() lets the rewriter read it */
    } plain_cases[] = {
        {"SELECT * FROM t WHERE s = 'abc'", 0, false},
        {"SELECT * FROM t WHERE s = 'foo'\n'bar' AND n = 1", 0, false},
        {"SELECT * FROM t WHERE s = ''", 0, true},
        {"SELECT * FROM \"t\xc3\xa9\" WHERE s = 'abc' -- \\", 0, true},
        {"SELECT 'x''y', * FROM t WHERE s = 'abc'", 0, true},
        {"SELECT * FROM t WHERE s = 'O''Brien'", 1, true},
        {"SELECT * FROM t WHERE s = E'a\\tb'", 1, true},
        {"SELECT * FROM t WHERE s = 'h\xc3\xa9'", 1, true},
        {"SELECT * FROM t WHERE a = 'abc' AND b = 'd\xc3\xa9' AND c = ''", 3, true},
        {"UPDATE t SET s = 'it''s' WHERE k = 'abc'", 2, true},
    };
    qg_context ctx;
    qg_context_init(&ctx, QG_DIALECT_POSTGRES, qg_encoding_find(QG_DIALECT_POSTGRES, "UTF8"),
                    SCS_ON);
    for (size_t i = 0; i < sizeof plain_cases / sizeof plain_cases[0]; i++) {
        const char *sql = plain_cases[i].sql;
        size_t len = strlen(sql);
        char text[256], values[256];
        const char *params[8];
        qg_rewrite rw = {.text = text, .text_cap = sizeof text, .values = values,
                         .values_cap = sizeof values, .params = params, .params_cap = 8};
        qg_rewrite_status st = qg_rewrite_query(&ctx, QG_REWRITE_PLAIN_AS_IS, sql, len, &rw);
        bool read = !qg_rewrite_skip_reason(sql, len, QG_REWRITE_PLAIN_AS_IS);
        bool ok = plain_cases[i].nparams
                      ? st == QG_REWRITE_DONE && rw.nparams == plain_cases[i].nparams
                      : st == QG_REWRITE_UNCHANGED && rw.why &&
                            strcmp(rw.why, "its literals are plain text") == 0;
        char shown[128];
        snprintf(shown, sizeof shown, "%s", sql);
        for (char *nl = strchr(shown, '\n'); nl; nl = strchr(nl, '\n'))
            *nl = ' ';
        tap_ok(ok && read == plain_cases[i].read, "plain as is: %s -> %zu parameters (%s)", shown,
               plain_cases[i].nparams, st == QG_REWRITE_DONE ? text : rw.why ? rw.why : "?");
        /* Without the option every one of them is rewritten. */
        st = qg_rewrite_query(&ctx, 0, sql, len, &rw);
        tap_ok(st == QG_REWRITE_DONE, "without plain as is: %s is rewritten", shown);
    }
    const char *own = "SELECT * FROM t WHERE id = $1";
    const char *why = qg_rewrite_skip_reason(own, strlen(own), QG_REWRITE_PLAIN_AS_IS);
    tap_ok(why && strcmp(why, "no string literal") == 0,
           "plain as is: a dollar sign alone is not read");
}

static qg_rewrite_status rewrite_status(const qg_context *ctx, const char *sql)
{
    char text[256], values[256];
    const char *params[8];
    qg_rewrite rw = {.text = text, .text_cap = sizeof text, .values = values,
                     .values_cap = sizeof values, .params = params, .params_cap = 8};
    return qg_rewrite_query(ctx, 0, sql, strlen(sql), &rw);
}

/* Where code splits into tokens as PostgreSQL's lexer splits it: at each
 * whitespace byte; an operator character before ">=" makes one operator
 * with it, no comparison; "$" inside a name makes no parameter. */
static void test_token_bytes(void)
{
    qg_context ctx;
    qg_context_init(&ctx, QG_DIALECT_POSTGRES, qg_encoding_find(QG_DIALECT_POSTGRES, "UTF8"),
                    SCS_ON);
    char sql[64];
    int spaces = 0, operators = 0;
    static const char space_bytes[] = " \t\n\r\f\v", operator_bytes[] = "~!@#^&|`?+-*/%<>=";
    for (const char *c = space_bytes; *c; c++) {
        snprintf(sql, sizeof sql, "SELECT * FROM t WHERE s =%c'x'", *c);
        spaces += rewrite_status(&ctx, sql) == QG_REWRITE_DONE;
    }
    for (const char *c = operator_bytes; *c; c++) {
        snprintf(sql, sizeof sql, "SELECT * FROM t WHERE s %c>= 'x'", *c);
        operators += rewrite_status(&ctx, sql) == QG_REWRITE_UNCHANGED;
    }
    tap_ok(spaces == 6, "each whitespace byte ends the token before it (%d of 6)", spaces);
    tap_ok(operators == 17, "each operator character runs into the >= after it (%d of 17)",
           operators);
    tap_ok(rewrite_status(&ctx, "SELECT * FROM t WHERE a$1 = 'x'") == QG_REWRITE_DONE,
           "a$1 is a name, not a parameter of the query's own");
}

int main(void)
{
    test_no_literal();
    test_plain_as_is();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(&cases[i]);
    test_no_room();
    test_wide_numbers();
    test_many_tokens();
    test_long_literals();
    test_padding_in_blocks();
    test_count_takes_blocks();
    test_token_bytes();

    qg_context mysql;
    qg_context_init(&mysql, QG_DIALECT_MYSQL, qg_encoding_find(QG_DIALECT_MYSQL, "utf8mb4"), 0);
    qg_rewrite rw = {0};
    tap_ok(qg_rewrite_query(&mysql, 0, "SELECT * FROM t WHERE s = 'a'", 29, &rw) ==
               QG_REWRITE_UNCHANGED,
           "MySQL queries are never rewritten");
    return tap_done();
}
