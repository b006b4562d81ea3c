/* The MySQL front's pure logic: reading the server's reports (sql_mode,
 * tracked variables), the statement reader for multi-statement texts, the
 * escaper and the connection map. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn_map.h"
#include "mysql_escape.h"
#include "mysql_plan.h"
#include "mysql_state.h"
#include "mysql_statements.h"
#include "quoteguard.h"
#include "tap.h"

static void test_sql_mode(void)
{
    static const struct {
        const char *text;
        bool ok;
        unsigned flags;
    } cases[] = {
        {"", true, 0},
        {"STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO", true, 0},
        {"NO_BACKSLASH_ESCAPES", true, QG_NO_BACKSLASH_ESCAPES},
        {"no_backslash_escapes", true, QG_NO_BACKSLASH_ESCAPES},
        {"MYSQL40,NO_BACKSLASH_ESCAPES,HIGH_NOT_PRECEDENCE", true, QG_NO_BACKSLASH_ESCAPES},
        {"MYSQL323", true, 0},
        {"REAL_AS_FLOAT,PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,ANSI", true, QG_ANSI_QUOTES},
        {"ORACLE", true, QG_ANSI_QUOTES},
        {"postgresql,NO_BACKSLASH_ESCAPES", true, QG_ANSI_QUOTES | QG_NO_BACKSLASH_ESCAPES},
        {" ANSI_QUOTES , NO_BACKSLASH_ESCAPES ", true, QG_ANSI_QUOTES | QG_NO_BACKSLASH_ESCAPES},
        {"ANSI_QUOTES,", false, 0},
        {"ANSI_QUOTES,,ANSI", false, 0},
        {"ANSI;DROP", false, 0},
        {"'ANSI'", false, 0},
        {"2097152", false, 0},
        {"ANSI,4", false, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned flags = 99;
        bool ok = qg_my_sql_mode_flags(cases[i].text, strlen(cases[i].text), &flags);
        tap_ok(ok == cases[i].ok && (!ok || flags == cases[i].flags),
               "sql_mode \"%s\": %s, flags %u", cases[i].text, ok ? "read" : "not a list", flags);
    }
}

static bool apply(qg_my_state *st, const char *name, const char *value, bool *list)
{
    return qg_my_state_apply(st, name, strlen(name), value, strlen(value), list);
}

static void test_reports(void)
{
    qg_my_state st = {.charset = "latin1", .flags = 0};
    bool list;
    tap_ok(apply(&st, "character_set_client", "GBK", &list) && strcmp(st.charset, "gbk") == 0 &&
               !list,
           "a reported character_set_client is taken, lower-cased");
    tap_ok(apply(&st, "sql_mode", "MYSQL40,NO_BACKSLASH_ESCAPES", &list) &&
               st.flags == QG_NO_BACKSLASH_ESCAPES,
           "a reported sql_mode with digits in a mode name is read");
    tap_ok(!apply(&st, "sql_mode", "BROKEN;", &list) && st.flags == QG_NO_BACKSLASH_ESCAPES,
           "a sql_mode that cannot be read says so and changes nothing");
    tap_ok(apply(&st, "time_zone", "+00:00", &list) && !list && strcmp(st.charset, "gbk") == 0,
           "other variables are ignored");
    tap_ok(apply(&st, "SESSION_TRACK_SYSTEM_VARIABLES", "*", &list) && list,
           "a report of the tracked list is flagged for the caller");
    tap_ok(!apply(&st, "character_set_client", "", &list), "an empty charset name is refused");

    static const char *const default_list =
        "autocommit,character_set_client,character_set_connection,character_set_results,time_zone";
    tap_ok(!qg_my_tracking_covers(default_list, strlen(default_list)),
           "the server's default list does not report sql_mode");
    static const char *const ours = "autocommit,character_set_client,session_track_system_variables,"
                                    "sql_mode,time_zone";
    tap_ok(qg_my_tracking_covers(ours, strlen(ours)), "the list the shim asks for covers both");
    tap_ok(qg_my_tracking_covers("*", 1), "\"*\" reports every variable");
    tap_ok(!qg_my_tracking_covers("", 0), "an empty list reports nothing");
    tap_ok(!qg_my_tracking_covers("sql_mode_x,character_set_client", 31),
           "names are compared whole");

    qg_my_state a = {.charset = "gbk", .flags = 1}, b = a;
    tap_ok(qg_my_state_equal(&a, &b), "equal states");
    b.flags = 0;
    tap_ok(!qg_my_state_equal(&a, &b), "states that differ in flags");
    char text[128];
    qg_my_state_describe(&a, text, sizeof text);
    tap_ok(strcmp(text, "charset=gbk no_backslash_escapes=0 ansi_quotes=0") == 0,
           "describe: %s", text);
}

typedef struct statement_case {
    const char *sql;
    const char *charset; /* after the first statement */
    unsigned flags;
    bool changed, unknown;
    size_t length; /* of the first statement; 0 = all of it */
} statement_case;

static void test_statements(void)
{
    static const statement_case cases[] = {
        {"SET NAMES gbk", "gbk", 0, true, false, 0},
        {"SET NAMES 'sjis' COLLATE 'sjis_bin'; SELECT 1", "sjis", 0, true, false, 36},
        {"SET CHARACTER SET big5", "big5", 0, true, false, 0},
        {"SET CHAR SET big5", "big5", 0, true, false, 0},
        {"SET CHARSET gbk", "gbk", 0, true, false, 0},
        {"set names GBK", "gbk", 0, true, false, 0},
        {"SET @@session.character_set_client = gbk", "gbk", 0, true, false, 0},
        {"SET `character_set_client` = gbk", "gbk", 0, true, false, 0},
        {"SET @a = 1, character_set_client := 'gbk'", "gbk", 0, true, false, 0},
        /* a name of several tokens, an operator after '=' */
        {"SET @a=-1, NAMES gbk", "gbk", 0, true, false, 0},
        {"SET @x=@y, character_set_client=gbk", "gbk", 0, true, false, 0},
        {"SET @@global.sql_mode = DEFAULT, NAMES gbk", "gbk", 0, true, false, 0},
        {"SET sql_mode=~0", "latin1", 0, false, true, 0},
        {"SET sql_mode = 1e+5", "latin1", 0, false, true, 0},
        {"SET sql_mode = 2097152", "latin1", 0, false, true, 0},
        {"SET sql_mode = 'ANSI,NO_BACKSLASH_ESCAPES'", "latin1",
         QG_ANSI_QUOTES | QG_NO_BACKSLASH_ESCAPES, true, false, 0},
        {"SET GLOBAL character_set_client = gbk", "latin1", 0, false, false, 0},
        {"SET @x = 'SET NAMES gbk'", "latin1", 0, false, false, 0},
        {"SET TRANSACTION ISOLATION LEVEL READ COMMITTED", "latin1", 0, false, false, 0},
        {"SELECT 'a;b'; SET NAMES gbk", "latin1", 0, false, false, 13},
        {"INSERT INTO t VALUES ('x')", "latin1", 0, false, false, 0},
        {"BEGIN", "latin1", 0, false, false, 0},
        {"BEGIN WORK; SELECT 1", "latin1", 0, false, false, 11},
        {"SET NAMES DEFAULT", "latin1", 0, false, true, 0},
        {"SET NAMES cp1251_koi8", "cp1251_koi8", 0, true, true, 0},
        {"SET sql_mode = CONCAT(@@sql_mode, ',ANSI')", "latin1", 0, false, true, 0},
        {"SET character_set_client = 28", "latin1", 0, false, true, 0},
        {"SET STATEMENT sql_mode = '' FOR SELECT 1", "latin1", 0, false, true, 0},
        {"SET@@character_set_client=gbk", "gbk", 0, true, false, 0},
        {"SET @@ session . character_set_client = gbk", "latin1", 0, false, true, 0},
        /* the server gives the caller its charset and sql_mode back */
        {"CALL p()", "latin1", 0, false, false, 0},
        {"(SELECT 1) UNION (SELECT 2)", "latin1", 0, false, false, 0},
        /* the statements inside statements, read */
        {"EXECUTE IMMEDIATE 'SET NAMES gbk'", "gbk", 0, true, false, 0},
        {"EXECUTE IMMEDIATE CONCAT('SET NAMES ', 'gbk')", "latin1", 0, false, true, 0},
        {"EXECUTE IMMEDIATE 'SET NAMES gbk; SELECT 1'", "gbk", 0, true, true, 0},
        {"SET NAMES `gbk`", "gbk", 0, true, false, 0},
        {"SET STATEMENT max_statement_time = 1 FOR SET NAMES gbk", "gbk", 0, true, false, 0},
        {"SET STATEMENT character_set_client = big5 FOR SET NAMES gbk", "latin1", 0, false, true, 0},
        {"PREPARE s FROM 'SET NAMES gbk'", "latin1", 0, false, false, 0},
        {"EXECUTE s", "latin1", 0, false, true, 0},
        /* a compound statement is cut at its first ';': the rest then reads as
         * after an unknown effect */
        {"BEGIN NOT ATOMIC SET NAMES gbk; END", "latin1", 0, false, true, 31},
        {"IF 1 THEN SET NAMES gbk; END IF", "latin1", 0, false, true, 24},
        {"DO f()", "latin1", 0, false, true, 0},
        {"/*!99999 SET NAMES gbk */", "gbk", 0, true, true, 0},
        /* executable comments every server runs, and those some do not */
        {"/*!40101 SET NAMES gbk */", "gbk", 0, true, false, 0},
        {"/*! SET NAMES gbk */", "gbk", 0, true, false, 0},
        {"/*!100000 SET NAMES gbk */", "gbk", 0, true, true, 0},
        {"/*M! SET NAMES gbk */", "gbk", 0, true, true, 0}, /* MySQL: a comment */
        {"/*M!50000 SET NAMES gbk */", "gbk", 0, true, true, 0},
        {"/*!4010 SET NAMES gbk */", "latin1", 0, false, true, 0}, /* no version: 4010 is code */
        /* a control byte is no white space to the server (it stops there) */
        {"SET NAMES\x01gbk", "latin1", 0, false, true, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const statement_case *c = &cases[i];
        qg_my_state st = {.charset = "latin1", .flags = 0};
        qg_my_effect fx;
        size_t len = strlen(c->sql);
        size_t n = qg_my_read_statement(&st, c->sql, len, &fx);
        tap_ok(strcmp(st.charset, c->charset) == 0 && st.flags == c->flags &&
                   fx.changed == c->changed && fx.unknown == c->unknown &&
                   n == (c->length ? c->length : len),
               "[%s]: charset %s flags %u changed %d unknown %d length %zu", c->sql, st.charset,
               st.flags, fx.changed, fx.unknown, n);
    }
    tap_ok(qg_my_reads_alike("SELECT 'it''s'", 14), "ASCII without backslash reads alike");
    tap_ok(!qg_my_reads_alike("SELECT 'a\\'", 11), "a backslash does not");
    tap_ok(!qg_my_reads_alike("SELECT '\x95'", 10), "a byte >= 0x80 does not");

    /* Texts that may change the state unreported: a statement that runs
     * others, however it is written and wherever in the text, or @@ but
     * in one statement whose first word changes nothing (the server's
     * grammar assigns no @@name there: `SELECT @@sql_mode := 'x'`,
     * `UPDATE t SET @@sql_mode = 'x'` are syntax errors). */
    static const struct {
        const char *sql;
        bool may;
    } hide[] = {
        {"CALL p()", true},
        {"execute s", true},
        {"/* c */ EXECUTE IMMEDIATE CONCAT('SET @', '@character_set_client = gbk')", true},
        {"# c\nCALL p()", true},
        {"-- c\nEXECUTE s", true},
        {"/*!40101 EXECUTE s */", true},
        {"\fCALL p()", true},
        {"SELECT 1; EXECUTE s", true},
        {"SELECT @@sql_mode", false},
        {"UPDATE t SET c = @@character_set_client", false},
        {"SET @@sql_mode = ''", true},
        {"DO @@sql_mode", true},
        {"SELECT @@sql_mode; SELECT 1", true},
        {"SELECT 'x; CALL p()'", false},
        {"SELECT 1 /* ; CALL p() */", false},
        {"CALLS()", false},
        {"EXPLAIN SELECT 1", false},
        {"INSERT INTO t VALUES ('call me; execute')", false},
    };
    qg_my_state latin1 = {.charset = "latin1", .flags = 0};
    for (size_t i = 0; i < sizeof hide / sizeof hide[0]; i++)
        tap_ok(qg_my_may_change_unreported(&latin1, hide[i].sql, strlen(hide[i].sql)) == hide[i].may,
               "may change the state unreported: %d [%s]", hide[i].may, hide[i].sql);
    qg_my_state gbk = {.charset = "gbk", .flags = 0};
    const char in_gbk[] = "SELECT '\xbf\\'; EXECUTE s -- '";
    tap_ok(qg_my_may_change_unreported(&gbk, in_gbk, strlen(in_gbk)) &&
               !qg_my_may_change_unreported(&latin1, in_gbk, strlen(in_gbk)),
           "the statements are those of the connection's character set (gbk: bf 5c is one character)");
}

/* A text's first word and what it says, each keyword in three spellings
 * and with the text ending right after it (fewer than eight bytes to read)
 * or going on; near misses read as other words. */
static void test_first_word(void)
{
    static const char *const inert[] = {
        "ALTER", "ANALYZE", "CHECK", "COMMIT", "CREATE", "DELETE", "DESC", "DESCRIBE",
        "EXPLAIN", "FLUSH", "GRANT", "HANDLER", "INSERT", "KILL", "LOAD", "LOCK",
        "OPTIMIZE", "RELEASE", "RENAME", "REPAIR", "REPLACE", "REVOKE", "ROLLBACK",
        "SAVEPOINT", "SELECT", "SHOW", "START", "TABLE", "TRUNCATE", "UNLOCK", "UPDATE",
        "USE", "VALUES", "WITH", "XA",
    };
    static const char *const runs[] = {"CALL", "EXECUTE"};
    static const char *const other[] = {
        "SET", "SELECTS", "SELEC", "SAVEPOINTS", "SAVEPOINX", "CALLS", "EXECUTED", "X",
        "SELECT_", "SELECT1", "SELECT$", "SELECT.x", "S\xc5LECT", "SELECT\xc5", "BEGIN",
        "PREPARE", "DEALLOCATE", "DROP", "DO", "XB", "{SELECT", "SEL`ECT",
    };
    static const struct {
        const char *const *words;
        size_t count;
        qg_my_word_kind kind;
    } groups[] = {
        {inert, sizeof inert / sizeof inert[0], QG_MY_WORD_INERT},
        {runs, sizeof runs / sizeof runs[0], QG_MY_WORD_RUNS},
        {other, sizeof other / sizeof other[0], QG_MY_WORD_OTHER},
    };
    unsigned short_words = 0;
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
        for (size_t i = 0; i < groups[g].count; i++) {
            const char *word = groups[g].words[i];
            size_t n = strlen(word);
            unsigned wrong = 0;
            for (int spelling = 0; spelling < 3; spelling++) {
                char text[64];
                for (size_t k = 0; k < n; k++) {
                    unsigned char ch = (unsigned char)word[k];
                    bool lower = spelling == 1 || (spelling == 2 && k % 2);
                    text[k] = (char)(lower && ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
                }
                /* the word alone, and the word in a statement after spaces */
                wrong += qg_my_first_word_kind(text, n) != groups[g].kind;
                wrong += (qg_my_inert_first_word(text, n)) != (groups[g].kind == QG_MY_WORD_INERT);
                char statement[96];
                for (int tail = 0; tail < 2; tail++) {
                    int len = snprintf(statement, sizeof statement, "  %.*s%s", (int)n, text,
                                       tail ? " c FROM t WHERE id = 7" : "");
                    size_t at, word_len;
                    qg_my_word_kind kind = QG_MY_WORD_OTHER;
                    bool found = qg_my_first_word(statement, (size_t)len, &at, &word_len, &kind);
                    /* a word starts with a letter; the reader takes the
                     * others' bytes up to the first that no word holds */
                    bool letter = (word[0] | 0x20) >= 'a' && (word[0] | 0x20) <= 'z';
                    if (!letter)
                        wrong += found;
                    else
                        wrong += !found || at != 2 || kind != groups[g].kind ||
                                 (groups[g].kind != QG_MY_WORD_OTHER && word_len != n);
                    /* at the text's start, where the reading in one step
                     * may settle it: the same word and kind */
                    size_t short_len;
                    qg_my_word_kind short_kind;
                    if (qg_my_short_word(statement + 2, (size_t)len - 2, &short_len, &short_kind)) {
                        short_words++;
                        wrong += !found || short_len != word_len || short_kind != kind;
                    }
                }
            }
            tap_ok(wrong == 0, "first word %s: %s in every spelling", word,
                   groups[g].kind == QG_MY_WORD_INERT  ? "changes nothing"
                   : groups[g].kind == QG_MY_WORD_RUNS ? "runs other statements"
                                                       : "must be read");
        }
    }
    tap_ok(short_words > 50, "a short word at a text's start is read in one step (%u times)",
           short_words);
    size_t at, n;
    qg_my_word_kind kind;
    tap_ok(qg_my_first_word("\n\tselect_all(1)", 16, &at, &n, &kind) && at == 2 && n == 10 &&
               kind == QG_MY_WORD_OTHER,
           "a word goes on through '_' and is then no keyword");
    tap_ok(qg_my_first_word("SELECT\xe4\xb8\x80 FROM t", 19, &at, &n, &kind) && n == 9 &&
               kind == QG_MY_WORD_OTHER,
           "a word goes on through high bytes");
    tap_ok(!qg_my_first_word("  (SELECT 1)", 12, &at, &n, &kind) &&
               !qg_my_first_word("/* c */ SELECT 1", 16, &at, &n, &kind) &&
               !qg_my_first_word("   ", 3, &at, &n, &kind),
           "no first word before punctuation, a comment or nothing");
    static const char *const single[] = {
        "SELECT c FROM sbtest WHERE id = '7'", "select 1", "  SELECT c FROM t WHERE id = 1",
        "SET NAMES sjis", "set sql_mode = ''", "CALL p(1, 2, 3, 4)", "EXECUTE s USING @a",
        "SELECTS FROM t x", "SELECT@@sql_mode FROM t", "SELECT_1 FROM t", "UPDATE t SET c = 1",
        "/* c */ SELECT 1 FROM t", "(SELECT 1 FROM t)", "SAVEPOINT a_point_here", "XA START 'x'",
        "SET STATEMENT sql_mode = '' FOR SELECT 1", "DO 1 + 1 + 1 + 1", "SELECT\xe4\xb8\x80 FROM t",
    };
    /* the search for a ';' at every length and place, the bytes around
     * the text holding one */
    unsigned missed = 0;
    for (size_t len = 0; len <= 80; len++) {
        char text[96];
        memset(text, ';', sizeof text);
        char *sql = text + 8;
        memset(sql, 'x', len);
        missed += qg_my_holds_semicolon(sql, len);
        for (size_t at = 0; at < len; at++) {
            sql[at] = ';';
            missed += !qg_my_holds_semicolon(sql, len);
            sql[at] = 'x';
        }
    }
    tap_ok(missed == 0, "a ';' is found at every place of texts of 0 to 80 bytes, and only there "
                        "(%u wrong)",
           missed);
    qg_my_state latin1 = {.charset = "latin1", .flags = 0};
    unsigned differ = 0;
    for (size_t i = 0; i < sizeof single / sizeof single[0]; i++) {
        qg_my_plan plan;
        qg_my_plan_init(&plan, single[i], strlen(single[i]));
        bool alone = qg_my_plan_single(&plan) && qg_my_single_inert(single[i], strlen(single[i]));
        qg_my_plan_read(&plan, &latin1, NULL);
        differ += alone != qg_my_plan_inert(&plan);
    }
    tap_ok(differ == 0, "a text of one statement: its first word alone says it changes nothing "
                        "where its plan says so (%u differ)",
           differ);
}

static void test_escape_choice(void)
{
    bool quotes_only;
    qg_my_state gbk = {.charset = "gbk", .flags = 0};
    qg_my_state nbe = {.charset = "latin1", .flags = QG_NO_BACKSLASH_ESCAPES};
    qg_my_state utf8 = {.charset = "utf8mb4", .flags = 0};
    tap_ok(qg_my_escape_for_server(&gbk, "latin1", false, &quotes_only) ==
                   qg_encoding_find(QG_DIALECT_MYSQL, "gbk") &&
               !quotes_only,
           "real_escape: the library believes latin1, the server has gbk: escape for gbk");
    tap_ok(!qg_my_escape_for_server(&gbk, "GBK", false, &quotes_only),
           "real_escape: the library is right: its own escaping runs");
    tap_ok(!qg_my_escape_for_server(&gbk, "gbk", false, &quotes_only) && !quotes_only,
           "real_escape: the same name as the server's: its own escaping runs");
    qg_my_state unknown = {.charset = "no_such_charset", .flags = 0};
    tap_ok(!qg_my_escape_for_server(&unknown, "no_such_charset", false, &quotes_only) &&
               !qg_my_escape_for_server(&unknown, "latin1", false, &quotes_only),
           "real_escape: a charset the shim does not know: nothing to escape for, by name or not");
    tap_ok(qg_my_escape_for_server(&nbe, "latin1", false, &quotes_only) && quotes_only,
           "real_escape: the server has NO_BACKSLASH_ESCAPES, the library does not know");
    tap_ok(qg_my_escape_for_server(&utf8, "utf8mb4", true, &quotes_only) && !quotes_only,
           "real_escape: a stale NO_BACKSLASH_ESCAPES bit (after CALL): backslashes again");
    tap_ok(qg_my_escape_for_legacy(&gbk, &quotes_only) && !quotes_only,
           "escape_string: gbk needs the upgrade");
    tap_ok(!qg_my_escape_for_legacy(&utf8, &quotes_only), "escape_string: utf8mb4 does not");
    tap_ok(qg_my_escape_for_legacy(&nbe, &quotes_only) && quotes_only,
           "escape_string: NO_BACKSLASH_ESCAPES does");
}

static void test_escape(void)
{
    const qg_encoding *gbk = qg_encoding_find(QG_DIALECT_MYSQL, "gbk");
    const qg_encoding *latin1 = qg_encoding_find(QG_DIALECT_MYSQL, "latin1");
    char out[64];
    size_t n = qg_my_escape(gbk, false, out, "\xbf'", 2);
    tap_ok(n == 4 && memcmp(out, "\\\xbf\\'", 4) == 0 && out[n] == '\0',
           "gbk: an ill-formed lead byte is escaped itself, so the quote stays escaped");
    n = qg_my_escape(gbk, false, out, "\x95\\A'", 4);
    tap_ok(n == 5 && memcmp(out, "\x95\\A\\'", 5) == 0,
           "gbk: a character whose trail byte is 0x5c is copied whole");
    n = qg_my_escape(latin1, false, out, "a\0b\n\r\x1a\"\\", 8);
    tap_ok(n == 14 && memcmp(out, "a\\0b\\n\\r\\Z\\\"\\\\", 14) == 0,
           "latin1: the escapes of mysql_real_escape_string");
    n = qg_my_escape(latin1, true, out, "it's a\\b", 8);
    tap_ok(n == 9 && memcmp(out, "it''s a\\b", 9) == 0,
           "NO_BACKSLASH_ESCAPES: only the quote is doubled");
}

typedef struct test_entry {
    qg_conn_head head;
    int value;
} test_entry;

static int freed_before;

static void count_free(void *entry)
{
    (void)entry;
    freed_before++;
}

static void test_conn_map(void)
{
    static qg_conn_map map = QG_CONN_MAP_INIT(test_entry);
    enum { N = 1000 };
    static char keys[N];
    tap_ok(qg_conn_map_empty(&map) && !qg_conn_map_find(&map, &keys[0]), "a new map is empty");
    for (int i = 0; i < 12; i++)
        qg_conn_map_get_or_add(&map, &keys[i]);
    tap_ok(map.slots == map.first_slots && qg_conn_map_find(&map, &keys[11]),
           "a dozen entries live in the map's first slots, no table allocated");
    bool all = true;
    for (int i = 0; i < N; i++) {
        test_entry *e = qg_conn_map_get_or_add(&map, &keys[i]);
        all = all && e && e->head.key == &keys[i] && e->value == 0;
        if (e)
            e->value = i + 1;
    }
    tap_ok(all, "%d entries added, each zeroed but for its key", N);
    tap_ok(qg_conn_map_get_or_add(&map, &keys[7]) == qg_conn_map_find(&map, &keys[7]),
           "adding a present key gives its entry");
    for (int i = 0; i < N; i += 2)
        qg_conn_map_remove(&map, &keys[i], count_free);
    all = freed_before == N / 2;
    for (int i = 0; i < N; i++) {
        test_entry *e = qg_conn_map_find(&map, &keys[i]);
        all = all && (i % 2 ? e && e->value == i + 1 : e == NULL);
    }
    tap_ok(all, "after removing every other one, the rest are found with their values");
    for (int i = 0; i < N; i++) /* tombstones are reused or swept on growth */
        qg_conn_map_get_or_add(&map, &keys[i]);
    for (int i = 0; i < N; i++)
        qg_conn_map_remove(&map, &keys[i], NULL);
    tap_ok(qg_conn_map_empty(&map), "empty again after removing all");
}

/* A thread's kept look-ups answer as the map does: a removal forgets them. */
static void test_conn_map_kept(void)
{
    static qg_conn_map map = QG_CONN_MAP_INIT(test_entry);
    static char keys[QG_CONN_MAP_KEPT + 2];
    qg_conn_map_kept kept = {0};
    tap_ok(!qg_conn_map_find_kept(&map, &kept, &keys[0]), "no entry kept for a key not in the map");
    test_entry *first = qg_conn_map_get_or_add_kept(&map, &kept, &keys[0]);
    tap_ok(first && qg_conn_map_find_kept(&map, &kept, &keys[0]) == first &&
               qg_conn_map_find(&map, &keys[0]) == first,
           "an entry added is kept and is the map's");
    bool all = true;
    for (unsigned i = 1; i < QG_CONN_MAP_KEPT + 2; i++) {
        test_entry *e = qg_conn_map_get_or_add_kept(&map, &kept, &keys[i]);
        all = all && e && qg_conn_map_find_kept(&map, &kept, &keys[i]) == e;
    }
    tap_ok(all && qg_conn_map_find_kept(&map, &kept, &keys[0]) == first,
           "more keys than are kept: each found, the first one again from the map");
    qg_conn_map_remove(&map, &keys[1], NULL);
    tap_ok(qg_conn_map_find_kept(&map, &kept, &keys[0]) == first,
           "another key's removal leaves a key's entry as it was");
    test_entry *third = qg_conn_map_find(&map, &keys[2]);
    tap_ok(third && third != first && qg_conn_map_find_kept(&map, &kept, &keys[2]) == third &&
               qg_conn_map_find_kept(&map, &kept, &keys[0]) == first &&
               qg_conn_map_find_kept(&map, &kept, &keys[2]) == third,
           "two keys looked up in turn: each the last look-up once, each its own entry");
    qg_conn_map_find_kept(&map, &kept, &keys[0]);
    qg_conn_map_remove(&map, &keys[0], NULL);
    tap_ok(!qg_conn_map_find_kept(&map, &kept, &keys[0]),
           "a removed key's kept entry is forgotten");
    test_entry *again = qg_conn_map_get_or_add_kept(&map, &kept, &keys[0]);
    tap_ok(again && again == qg_conn_map_find(&map, &keys[0]) && again->value == 0,
           "the key added again has its new entry");
    for (unsigned i = 0; i < QG_CONN_MAP_KEPT + 2; i++)
        qg_conn_map_remove(&map, &keys[i], NULL);
}

int main(void)
{
    test_sql_mode();
    test_reports();
    test_statements();
    test_first_word();
    test_escape();
    test_escape_choice();
    test_conn_map();
    test_conn_map_kept();
    return tap_done();
}
