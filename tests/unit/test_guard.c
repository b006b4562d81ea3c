/* The guard: mode, allow-list, MySQL policy, unknown encodings, logging,
 * the re-entrancy guard, and that a clean query costs no allocation. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guard.h"
#include "settings.h"
#include "log.h"
#include "tap.h"
#include "test_files.h"

/* Counting allocator: forwards to glibc's, so nothing else changes.  Not
 * under AddressSanitizer, which owns malloc itself. */
#if defined(__SANITIZE_ADDRESS__)
#define COUNTS_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COUNTS_ALLOCATIONS 0
#endif
#endif
#ifndef COUNTS_ALLOCATIONS
#define COUNTS_ALLOCATIONS 1
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);
static unsigned long allocations;

static void counted(void)
{
    __atomic_add_fetch(&allocations, 1, __ATOMIC_RELAXED);
}

void *malloc(size_t n)
{
    counted();
    return __libc_malloc(n);
}

void *calloc(size_t count, size_t n)
{
    counted();
    return __libc_calloc(count, n);
}

void *realloc(void *p, size_t n)
{
    counted();
    return __libc_realloc(p, n);
}

void *memalign(size_t align, size_t n)
{
    counted();
    return __libc_memalign(align, n);
}

void *aligned_alloc(size_t align, size_t n)
{
    counted();
    return __libc_memalign(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    counted();
    void *p = __libc_memalign(align, n);
    if (!p)
        return 12; /* ENOMEM */
    *out = p;
    return 0;
}

void free(void *p)
{
    __libc_free(p);
}

static unsigned long allocation_count(void)
{
    return __atomic_load_n(&allocations, __ATOMIC_RELAXED);
}
#else
static unsigned long allocation_count(void)
{
    return 0;
}
#endif

static char tmpdir[] = "/tmp/qg-test-guard-XXXXXX";

static int count_lines(const char *text)
{
    int n = 0;
    for (; *text; text++)
        n += *text == '\n';
    return n;
}

static int count_of(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

/* Fresh settings in `mode` logging to a new file of their own. */
static void settings_for(qg_settings *s, qg_mode mode, const char *name)
{
    qg_settings_defaults(s);
    qg_settings_set_program(s, "test_guard");
    s->mode = mode;
    s->log_sink = QG_LOG_FILE;
    snprintf(s->log_path, sizeof s->log_path, "%s/%s", tmpdir, name);
}

static const char sjis_attack[] = "SELECT * FROM t WHERE name = '\x95\x5c' OR 1=1 --'";
static const char conn_tag[] = "conn";

static qg_query pg_query(const char *encoding, unsigned flags, const char *sql, size_t len)
{
    return (qg_query){
        .dialect = QG_DIALECT_POSTGRES,
        .encoding_name = encoding,
        .flags = flags,
        .conn = conn_tag,
        .api = "PQexec",
        .sql = sql,
        .len = len,
        .caller = (const char *)&getpid + 1,
    };
}

static char fingerprint_hex[17];

static const char *hex_fingerprint(qg_reason reason, const char *encoding, const char *sql,
                                   size_t len)
{
    snprintf(fingerprint_hex, sizeof fingerprint_hex, "%016llx",
             qg_guard_fingerprint(reason, encoding, sql, len));
    return fingerprint_hex;
}

static void test_clean_query_costs_nothing(const char *env_log)
{
    /* Loading the settings may not allocate, nor may clean queries.  The
     * first query probes once for the client libraries (for the attached
     * line), which the loader may allocate for: it is not counted. */
    qg_query q = pg_query("UTF8", QG_STD_STRINGS, "SELECT 1", 8);
    qg_decision d;
    unsigned long before = allocation_count();
    (void)qg_settings_get();
    unsigned long after_settings = allocation_count();
    bool pass = qg_guard_query(&q, &d);
    before += allocation_count() - after_settings;
    for (int i = 0; i < 100; i++)
        pass = pass && qg_guard_query(&q, &d);
    unsigned long used = allocation_count() - before;
    tap_ok(pass && !d.block, "SELECT 1 passes");
    if (COUNTS_ALLOCATIONS)
        tap_ok(used == 0, "loading the settings and 100 clean queries: %lu allocations", used);
    else
        tap_ok(1, "# SKIP allocations are not counted under AddressSanitizer");
    tap_ok(read_whole_file(env_log, NULL)[0] == '\0', "a clean query logs nothing");

    const qg_settings *s = qg_settings_get();
    tap_ok(s->mode == QG_MODE_AUDIT && s->log_sink == QG_LOG_FILE,
           "qg_guard_query uses the process settings (audit from the environment)");
    q = pg_query("SJIS", 0, sjis_attack, sizeof sjis_attack - 1);
    tap_ok(qg_guard_query(&q, &d) && !d.block, "process settings in audit: the attack passes");
    const char *log = read_whole_file(env_log, NULL);
    tap_ok(count_lines(log) == 1 && strstr(log, "\"action\":\"logged\""),
           "and is logged once");
}

/* The front's path: a clean query of a known encoding under the process
 * settings is checked in line; one with findings is judged as by
 * qg_guard_query. */
static void test_in_line(const char *env_log)
{
    const qg_settings *s = qg_settings_get();
    tap_ok(s->clean_in_line, "audit, active, no shapes, no counters: clean queries in line");
    qg_decision d;
    qg_query q = pg_query("UTF8", QG_STD_STRINGS, "SELECT 'a', 1", 13);
    q.encoding = qg_encoding_find(QG_DIALECT_POSTGRES, "UTF8");
    int logged = count_lines(read_whole_file(env_log, NULL));
    unsigned long before = allocation_count();
    bool pass = true;
    for (int i = 0; i < 100; i++)
        pass = pass && qg_guard_query_in_line(s, &q, &d);
    unsigned long used = allocation_count() - before;
    tap_ok(pass && !d.block && !d.sqlstate && d.message[0] == '\0',
           "in line: a clean query passes, with no decision to report");
    if (COUNTS_ALLOCATIONS)
        tap_ok(used == 0, "in line: 100 clean queries, %lu allocations", used);
    else
        tap_ok(1, "# SKIP allocations are not counted under AddressSanitizer");
    tap_ok(count_lines(read_whole_file(env_log, NULL)) == logged, "in line: nothing logged");

    q = pg_query("SJIS", 0, sjis_attack, sizeof sjis_attack - 1);
    q.encoding = qg_encoding_find(QG_DIALECT_POSTGRES, "SJIS");
    tap_ok(q.encoding && qg_guard_query_in_line(s, &q, &d) && !d.block,
           "in line, audit: the attack passes");
    const char *log = read_whole_file(env_log, NULL);
    tap_ok(count_lines(log) == logged + 1 && count_of(log, "\"action\":\"logged\"") == 2,
           "and is judged and logged once, as by qg_guard_query");
}

static void test_modes(void)
{
    qg_settings s;
    qg_decision d;
    qg_query q = pg_query("SJIS", 0, sjis_attack, sizeof sjis_attack - 1);

    settings_for(&s, QG_MODE_ENFORCE, "enforce.log");
    bool pass = qg_guard_query_with(&s, &q, &d);
    tap_ok(!pass && d.block, "enforce: the SJIS 0x95 0x5c attack is blocked");
    tap_ok(d.sqlstate && strcmp(d.sqlstate, "42601") == 0, "structure mismatch: sqlstate 42601");
    tap_ok(strncmp(d.message, "quoteguard: blocked structure_mismatch at byte 33 (SJIS): ", 58) ==
                   0 &&
               strlen(d.message) > 70,
           "message names reason, byte and encoding: %s", d.message);
    const char *log = read_whole_file(s.log_path, NULL);
    char fp_field[64];
    snprintf(fp_field, sizeof fp_field, "\"fingerprint\":\"%s\"",
             hex_fingerprint(QG_REASON_STRUCTURE_MISMATCH, "SJIS", q.sql, q.len));
    tap_ok(count_lines(log) == 1 && strstr(log, "\"action\":\"blocked\"") &&
               strstr(log, "\"reason\":\"structure_mismatch\"") && strstr(log, "\"offset\":33") &&
               strstr(log, "\"mode\":\"enforce\"") && strstr(log, "\"api\":\"PQexec\"") &&
               strstr(log, "\"encoding\":\"SJIS\"") && strstr(log, fp_field) &&
               strstr(log, "\"caller\":\"libc.so.6!"),
           "one finding line: blocked, reason, offset, fingerprint, caller");

    settings_for(&s, QG_MODE_REWRITE, "rewrite.log");
    tap_ok(!qg_guard_query_with(&s, &q, &d) && d.block, "rewrite: blocked like enforce");

    settings_for(&s, QG_MODE_AUDIT, "audit.log");
    pass = qg_guard_query_with(&s, &q, &d);
    tap_ok(pass && !d.block, "audit: the attack passes");
    log = read_whole_file(s.log_path, NULL);
    tap_ok(count_lines(log) == 1 && strstr(log, "\"action\":\"logged\"") &&
               strstr(log, "\"mode\":\"audit\""),
           "audit: logged once with action logged");

    settings_for(&s, QG_MODE_OFF, "off.log");
    tap_ok(qg_guard_query_with(&s, &q, &d) && !d.block && read_whole_file(s.log_path, NULL)[0] == '\0',
           "off: passes unchecked, nothing logged");

    settings_for(&s, QG_MODE_ENFORCE, "inactive.log");
    s.skip_count = 1;
    strcpy(s.skip_programs[0], "test_guard");
    qg_settings_set_program(&s, "test_guard");
    tap_ok(!s.active && qg_guard_query_with(&s, &q, &d) && read_whole_file(s.log_path, NULL)[0] == '\0',
           "skipped program: passes unchecked, nothing logged");

    settings_for(&s, QG_MODE_ENFORCE, "scs.log");
    q.flags = QG_STD_STRINGS;
    tap_ok(!qg_guard_query_with(&s, &q, &d),
           "standard_conforming_strings on: the SJIS trail still splits the readings");

    settings_for(&s, QG_MODE_ENFORCE, "clean.log");
    static const char clean[] = "SELECT 'it''s', '\x95\x5c\x95\x5c' FROM t";
    q = pg_query("SJIS", QG_STD_STRINGS, clean, sizeof clean - 1);
    tap_ok(qg_guard_query_with(&s, &q, &d) && !d.block && read_whole_file(s.log_path, NULL)[0] == '\0',
           "a clean SJIS query with multibyte literals passes silently");
}

static void test_sqlstates(void)
{
    qg_settings s;
    qg_decision d;
    static const char invalid[] = "SELECT * FROM t WHERE name = '\xc8'' OR 1=1 --'";
    settings_for(&s, QG_MODE_ENFORCE, "invalid.log");
    qg_query q = pg_query("UTF8", 0, invalid, sizeof invalid - 1);
    tap_ok(!qg_guard_query_with(&s, &q, &d) && strcmp(d.sqlstate, "22021") == 0 &&
               strncmp(d.message, "quoteguard: blocked invalid_sequence at byte 30 (UTF8): ",
                       56) == 0,
           "invalid UTF-8: sqlstate 22021: %s", d.message);

    settings_for(&s, QG_MODE_ENFORCE, "unterminated.log");
    q = pg_query("UTF8", QG_STD_STRINGS, "SELECT 'abc", 11);
    tap_ok(!qg_guard_query_with(&s, &q, &d) && strcmp(d.sqlstate, "42601") == 0 &&
               strstr(d.message, "unterminated at byte 7"),
           "unterminated literal: sqlstate 42601: %s", d.message);
}

static void test_allow_list(void)
{
    qg_settings s;
    qg_decision d;
    qg_query q = pg_query("SJIS", 0, sjis_attack, sizeof sjis_attack - 1);
    settings_for(&s, QG_MODE_ENFORCE, "allowed.log");
    s.allow[s.allow_count++] = qg_guard_fingerprint(QG_REASON_STRUCTURE_MISMATCH, "SJIS", q.sql,
                                                    q.len);
    tap_ok(qg_guard_query_with(&s, &q, &d) && !d.block, "allow-listed fingerprint: passes");
    const char *log = read_whole_file(s.log_path, NULL);
    tap_ok(count_lines(log) == 1 && strstr(log, "\"action\":\"allowed\""),
           "and is logged with action allowed");

    /* The same query with an alias of the encoding name: same fingerprint. */
    settings_for(&s, QG_MODE_ENFORCE, "alias.log");
    s.allow[s.allow_count++] = qg_guard_fingerprint(QG_REASON_STRUCTURE_MISMATCH, "SJIS", q.sql,
                                                    q.len);
    q.encoding_name = "Shift_JIS";
    tap_ok(qg_guard_query_with(&s, &q, &d), "the fingerprint uses the canonical encoding name");

    /* One byte different: another fingerprint, blocked again. */
    static const char other[] = "SELECT * FROM t WHERE name = '\x95\x5c' OR 2=2 --'";
    q = pg_query("SJIS", 0, other, sizeof other - 1);
    tap_ok(!qg_guard_query_with(&s, &q, &d), "a different query is not covered");

    /* Allowing one reason does not allow another in the same query: the
     * structure mismatch hides behind the invalid byte until it is allowed. */
    static const char two[] = "SELECT '\xff', '\x95\x5c' OR 1=1 --'";
    settings_for(&s, QG_MODE_ENFORCE, "two.log");
    q = pg_query("SJIS", 0, two, sizeof two - 1);
    tap_ok(!qg_guard_query_with(&s, &q, &d) && strstr(d.message, "invalid_sequence at byte 8"),
           "invalid byte then a structure mismatch: blocked on the invalid byte");
    settings_for(&s, QG_MODE_ENFORCE, "two-allowed.log");
    s.allow[s.allow_count++] = qg_guard_fingerprint(QG_REASON_INVALID_SEQUENCE, "SJIS", q.sql,
                                                    q.len);
    bool pass = qg_guard_query_with(&s, &q, &d);
    log = read_whole_file(s.log_path, NULL);
    tap_ok(!pass && strstr(d.message, "structure_mismatch at byte 16"),
           "invalid byte allowed: still blocked on the structure mismatch: %s", d.message);
    tap_ok(count_lines(log) == 2 && strstr(log, "\"action\":\"allowed\"") &&
               strstr(log, "\"action\":\"blocked\""),
           "both findings logged: allowed and blocked");
    s.allow[s.allow_count++] = qg_guard_fingerprint(QG_REASON_STRUCTURE_MISMATCH, "SJIS", q.sql,
                                                    q.len);
    tap_ok(qg_guard_query_with(&s, &q, &d), "both reasons allowed: passes");
}

static void test_many_findings(void)
{
    qg_settings s;
    qg_decision d;
    /* Ten invalid bytes: more findings than a result holds. */
    static const char many[] = "SELECT '\xff', '\xff', '\xff', '\xff', '\xff', '\xff', '\xff', "
                               "'\xff', '\xff', '\xff'";
    settings_for(&s, QG_MODE_AUDIT, "many.log");
    qg_query q = pg_query("UTF8", QG_STD_STRINGS, many, sizeof many - 1);
    tap_ok(qg_guard_query_with(&s, &q, &d), "audit: many findings pass");
    const char *log = read_whole_file(s.log_path, NULL);
    tap_ok(count_of(log, "\"reason\":\"invalid_sequence\"") == QG_MAX_FINDINGS &&
               count_of(log, "\"event\":\"findings_not_logged\"") == 1 &&
               strstr(log, "2 more findings"),
           "at most %d finding lines, then one line with the count", QG_MAX_FINDINGS);

    settings_for(&s, QG_MODE_ENFORCE, "many-allowed.log");
    s.allow[s.allow_count++] = qg_guard_fingerprint(QG_REASON_INVALID_SEQUENCE, "UTF8", q.sql,
                                                    q.len);
    tap_ok(qg_guard_query_with(&s, &q, &d), "all ten allowed by one fingerprint: passes");

    /* Nine invalid bytes, then an unterminated literal as the tenth finding. */
    static const char hidden[] = "SELECT '\xff', '\xff', '\xff', '\xff', '\xff', '\xff', "
                                 "'\xff', '\xff', '\xff', 'abc";
    settings_for(&s, QG_MODE_ENFORCE, "hidden.log");
    q = pg_query("UTF8", QG_STD_STRINGS, hidden, sizeof hidden - 1);
    s.allow[s.allow_count++] = qg_guard_fingerprint(QG_REASON_INVALID_SEQUENCE, "UTF8", q.sql,
                                                    q.len);
    tap_ok(!qg_guard_query_with(&s, &q, &d) && d.block &&
               strstr(d.message, "past the first 8 of 10"),
           "a blocking finding past the first %d still blocks: %s", QG_MAX_FINDINGS, d.message);
}

static void test_unknown_encoding(void)
{
    qg_settings s;
    qg_decision d;
    qg_query q = pg_query("KOI9", QG_STD_STRINGS, "SELECT 1", 8);
    settings_for(&s, QG_MODE_ENFORCE, "unknown.log");
    tap_ok(!qg_guard_query_with(&s, &q, &d) && d.block &&
               strcmp(d.message, "quoteguard: blocked: unknown client encoding \"KOI9\"") == 0,
           "enforce: unknown encoding blocks: %s", d.message);
    const char *log = read_whole_file(s.log_path, NULL);
    tap_ok(count_lines(log) == 1 && strstr(log, "\"reason\":\"none\"") &&
               strstr(log, "\"encoding\":\"KOI9\"") && strstr(log, "\"detail\":\"unknown"),
           "logged with reason none, the name and a detail");

    settings_for(&s, QG_MODE_AUDIT, "unknown-audit.log");
    tap_ok(qg_guard_query_with(&s, &q, &d) && !d.block, "audit: unknown encoding passes");
    log = read_whole_file(s.log_path, NULL);
    tap_ok(count_lines(log) == 1 && strstr(log, "\"action\":\"logged\""), "and is logged");

    settings_for(&s, QG_MODE_ENFORCE, "unknown-null.log");
    q.encoding_name = NULL;
    tap_ok(!qg_guard_query_with(&s, &q, &d) &&
               strcmp(d.message, "quoteguard: blocked: unknown client encoding \"\"") == 0,
           "no encoding at all: blocked");
}

static void test_mysql_policy(void)
{
    qg_settings s;
    qg_decision d;
    static const char before_quote[] = "SELECT '\xbf'' OR 1=1 -- '";
    qg_query q = {.dialect = QG_DIALECT_MYSQL,
                  .encoding_name = "gbk",
                  .api = "mysql_real_query",
                  .sql = before_quote,
                  .len = sizeof before_quote - 1};
    settings_for(&s, QG_MODE_ENFORCE, "my-default.log");
    tap_ok(!qg_guard_query_with(&s, &q, &d) && strcmp(d.sqlstate, "22021") == 0 &&
               strstr(d.message, "illformed_before_quote"),
           "MySQL default: ill-formed before a quote blocks with 22021: %s", d.message);
    const char *log = read_whole_file(s.log_path, NULL);
    tap_ok(strstr(log, "\"dialect\":\"mysql\"") && strstr(log, "\"api\":\"mysql_real_query\""),
           "logged with dialect mysql");

    settings_for(&s, QG_MODE_ENFORCE, "my-log.log");
    s.mysql_illformed_quote = QG_ACTION_LOG;
    tap_ok(qg_guard_query_with(&s, &q, &d) &&
               strstr(read_whole_file(s.log_path, NULL), "\"action\":\"logged\""),
           "mysql_illformed_quote = log: passes, logged");

    settings_for(&s, QG_MODE_ENFORCE, "my-ignore.log");
    s.mysql_illformed_quote = QG_ACTION_IGNORE;
    tap_ok(qg_guard_query_with(&s, &q, &d) && read_whole_file(s.log_path, NULL)[0] == '\0',
           "mysql_illformed_quote = ignore: passes silently");

    /* eucjpms 8f 41 a1 a1: a reader trusting the lead 8f takes 8f 41 a1,
     * then a1 and the closing quote, where the server reads 8f, 41, a1 a1. */
    static const char illformed[] = "SELECT '\x8f\x41\xa1\xa1'";
    q.encoding_name = "eucjpms";
    q.sql = illformed;
    q.len = sizeof illformed - 1;
    settings_for(&s, QG_MODE_ENFORCE, "my-ill.log");
    tap_ok(qg_guard_query_with(&s, &q, &d) &&
               strstr(read_whole_file(s.log_path, NULL), "\"reason\":\"illformed_sequence\""),
           "MySQL default: an ill-formed sequence whose readings part past the lead's length is logged, not blocked");
    settings_for(&s, QG_MODE_ENFORCE, "my-ill-block.log");
    s.mysql_illformed = QG_ACTION_BLOCK;
    tap_ok(!qg_guard_query_with(&s, &q, &d) && strcmp(d.sqlstate, "22021") == 0,
           "mysql_illformed = block: blocked");

    /* In line, the same policy: a clean MySQL text passes there; the
     * ill-formed one passes there only where its action lets it pass
     * unlogged, else it is left to the guard, which judges it (above). */
    settings_for(&s, QG_MODE_ENFORCE, "my-in-line.log");
    s.clean_in_line = true;
    const qg_encoding *gbk = qg_encoding_find(QG_DIALECT_MYSQL, "gbk");
    static const char clean_my[] = "SELECT c FROM t WHERE id = '\xbf\xa1' AND 1";
    tap_ok(gbk && qg_guard_clean_in_line(&s, QG_DIALECT_MYSQL, gbk, 0, NULL, clean_my,
                                         sizeof clean_my - 1),
           "in line: a clean MySQL text passes");
    tap_ok(!qg_guard_clean_in_line(&s, QG_DIALECT_MYSQL, gbk, 0, NULL, before_quote,
                                   sizeof before_quote - 1),
           "in line: ill-formed before a quote is left to the guard");
    s.mysql_illformed_quote = QG_ACTION_IGNORE;
    tap_ok(qg_guard_clean_in_line(&s, QG_DIALECT_MYSQL, gbk, 0, NULL, before_quote,
                                  sizeof before_quote - 1),
           "in line: mysql_illformed_quote = ignore: passes there");

    /* The MySQL policy does not touch PostgreSQL. */
    static const char pg_invalid[] = "SELECT '\xff abc'";
    settings_for(&s, QG_MODE_ENFORCE, "pg-unaffected.log");
    s.mysql_illformed = QG_ACTION_IGNORE;
    s.mysql_illformed_quote = QG_ACTION_IGNORE;
    q = pg_query("UTF8", QG_STD_STRINGS, pg_invalid, sizeof pg_invalid - 1);
    tap_ok(!qg_guard_query_with(&s, &q, &d), "PostgreSQL invalid bytes still block");
}

static void test_fingerprint(void)
{
    tap_ok(qg_guard_fingerprint(QG_REASON_STRUCTURE_MISMATCH, "SJIS", "SELECT 1", 8) ==
               0x190781952d33fe33ULL,
           "FNV-1a over reason name, 0, encoding, 0, query (known answer)");
    unsigned long long base = qg_guard_fingerprint(QG_REASON_INVALID_SEQUENCE, "UTF8", "x", 1);
    tap_ok(base != qg_guard_fingerprint(QG_REASON_UNTERMINATED, "UTF8", "x", 1) &&
               base != qg_guard_fingerprint(QG_REASON_INVALID_SEQUENCE, "LATIN1", "x", 1) &&
               base != qg_guard_fingerprint(QG_REASON_INVALID_SEQUENCE, "UTF8", "y", 1) &&
               base == qg_guard_fingerprint(QG_REASON_INVALID_SEQUENCE, "UTF8", "xz", 1),
           "reason, encoding and query bytes all count, and only len bytes");
}

static bool other_thread_entered;
static const char reentry_sql[] = "SELECT 1";

static void *enter_elsewhere(void *arg)
{
    other_thread_entered = qg_guard_enter(arg, reentry_sql, sizeof reentry_sql - 1);
    if (other_thread_entered)
        qg_guard_leave();
    return NULL;
}

static void test_reentrancy(void)
{
    int conn_a, conn_b;
    const char *same = reentry_sql;
    size_t len = sizeof reentry_sql - 1;
    char copy[sizeof reentry_sql];
    memcpy(copy, reentry_sql, sizeof copy);
    tap_ok(qg_guard_enter(&conn_a, same, len), "first enter succeeds");
    tap_ok(!qg_guard_enter(&conn_a, same, len),
           "the library's inner call (same connection, same text) is refused");
    tap_ok(qg_guard_enter(&conn_b, same, len), "the same text on another connection is checked");
    qg_guard_leave();
    tap_ok(qg_guard_inside(&conn_a, same, len) && !qg_guard_inside(&conn_a, copy, len) &&
               !qg_guard_inside(&conn_b, same, len),
           "inside: only the recorded call on its connection, by pointer");
    tap_ok(!qg_guard_inside(&conn_b, same, len), "inside records nothing");
    tap_ok(qg_guard_enter(&conn_a, copy, len),
           "another text on the same connection (a signal handler's query) is checked");
    qg_guard_leave();
    tap_ok(qg_guard_enter(&conn_a, same, len - 1), "the same pointer with another length is checked");
    qg_guard_leave();
    pthread_t t;
    pthread_create(&t, NULL, enter_elsewhere, &conn_a);
    pthread_join(t, NULL);
    tap_ok(other_thread_entered, "another thread may enter the same call meanwhile");
    qg_guard_leave();
    tap_ok(qg_guard_enter(&conn_a, same, len), "after leave, enter succeeds again");
    qg_guard_leave();
    qg_guard_leave();
    tap_ok(qg_guard_enter(&conn_a, same, len), "an extra leave does not unbalance the guard");
    tap_ok(!qg_guard_enter(&conn_a, same, len), "still one call deep");
    qg_guard_leave();

    tap_ok(qg_guard_enter(&conn_a, NULL, 0), "a call whose queries are the library's own");
    tap_ok(!qg_guard_enter(&conn_a, copy, len), "its queries on that connection pass through");
    tap_ok(qg_guard_enter(&conn_b, copy, len), "queries on another connection are checked");
    qg_guard_leave();
    qg_guard_leave();

    /* Deeper than recorded: the library's inner calls are checked again,
     * never skipped wrongly, and the depth stays balanced. */
    char texts[12][16];
    for (int i = 0; i < 12; i++) {
        snprintf(texts[i], sizeof texts[i], "q%d", i);
        qg_guard_enter(&conn_a, texts[i], 2);
    }
    tap_ok(!qg_guard_enter(&conn_a, texts[0], 2), "deep: the outermost call is still recorded");
    tap_ok(qg_guard_enter(&conn_a, texts[11], 2), "deep: past the record, checked again");
    qg_guard_leave();
    for (int i = 0; i < 12; i++)
        qg_guard_leave();
    tap_ok(qg_guard_enter(&conn_a, texts[0], 2), "deep: balanced after every leave");
    qg_guard_leave();

    /* libmariadb's non-blocking calls run in coroutines: one may end after
     * a call that began later, and each leaves its own record. */
    tap_ok(qg_guard_enter(&conn_a, NULL, 0), "out of order: a call on A enters");
    tap_ok(qg_guard_enter(&conn_b, same, len), "out of order: a call on B enters");
    qg_guard_leave_call(&conn_a, NULL, 0);
    tap_ok(qg_guard_enter(&conn_a, copy, len),
           "out of order: once A's call ended, a query on A is checked");
    qg_guard_leave_call(&conn_a, copy, len);
    tap_ok(!qg_guard_enter(&conn_b, same, len), "out of order: B's call is still in flight");
    qg_guard_leave_call(&conn_b, same, len);
    tap_ok(qg_guard_enter(&conn_b, same, len), "out of order: balanced once B's call ended");
    qg_guard_leave();
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    char conf[256], env_log[256];
    snprintf(conf, sizeof conf, "%s/quoteguard.conf", tmpdir);
    snprintf(env_log, sizeof env_log, "%s/process.log", tmpdir);
    static const char *const env_keys[] = {
        "QUOTEGUARD_MODE",          "QUOTEGUARD_VERBOSE",      "QUOTEGUARD_LOG_FULL_QUERY",
        "QUOTEGUARD_ALLOW",         "QUOTEGUARD_ONLY_PROGRAMS", "QUOTEGUARD_SKIP_PROGRAMS",
        "QUOTEGUARD_MYSQL_ILLFORMED_QUOTE", "QUOTEGUARD_MYSQL_ILLFORMED",
        "QUOTEGUARD_SYSLOG_FACILITY"};
    for (size_t i = 0; i < sizeof env_keys / sizeof env_keys[0]; i++)
        unsetenv(env_keys[i]);
    FILE *f = fopen(conf, "w");
    fputs("mode = audit\n", f);
    fclose(f);
    setenv("QUOTEGUARD_CONFIG", conf, 1);
    setenv("QUOTEGUARD_LOG", env_log, 1);

    test_clean_query_costs_nothing(env_log);
    test_in_line(env_log);
    test_modes();
    test_sqlstates();
    test_allow_list();
    test_many_findings();
    test_unknown_encoding();
    test_mysql_policy();
    test_fingerprint();
    test_reentrancy();

    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        tap_diag("could not remove %s", tmpdir);
    return tap_done();
}
