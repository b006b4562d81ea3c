/* The JSON-lines log: escaping, line contents, verbosity, sinks, and whole
 * lines under concurrent writers. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "ascii.h"
#include "log.h"
#include "tap.h"
#include "test_files.h"

/* ------------------------------------------------ a small JSON validator */

typedef struct json {
    const char *p;
    const char *end;
} json;

static void skip_ws(json *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

/* A string; decoded bytes go to out (\u00XX as one byte) when out != NULL. */
static bool parse_string(json *j, char *out, size_t cap, size_t *len)
{
    size_t n = 0;
    if (j->p >= j->end || *j->p != '"')
        return false;
    j->p++;
    while (j->p < j->end && *j->p != '"') {
        unsigned char c = (unsigned char)*j->p++;
        if (c < 0x20)
            return false;
        if (c == '\\') {
            if (j->p >= j->end)
                return false;
            char e = *j->p++;
            if (e == 'u') {
                if (j->end - j->p < 4)
                    return false;
                int v = 0;
                for (int i = 0; i < 4; i++) {
                    int d = qg_hex_digit((unsigned char)j->p[i]);
                    if (d < 0)
                        return false;
                    v = v * 16 + d;
                }
                j->p += 4;
                c = v > 0xff ? '?' : (unsigned char)v;
            } else if (strchr("\"\\/", e)) {
                c = (unsigned char)e;
            } else if (e == 'n') {
                c = '\n';
            } else if (e == 't') {
                c = '\t';
            } else if (e == 'r') {
                c = '\r';
            } else if (e == 'b') {
                c = '\b';
            } else if (e == 'f') {
                c = '\f';
            } else {
                return false;
            }
        }
        if (out && n < cap)
            out[n] = (char)c;
        n++;
    }
    if (j->p >= j->end)
        return false;
    j->p++;
    if (len)
        *len = n;
    return true;
}

static bool parse_value(json *j, int depth);

static bool parse_number(json *j)
{
    const char *start = j->p;
    if (j->p < j->end && *j->p == '-')
        j->p++;
    while (j->p < j->end && ((*j->p >= '0' && *j->p <= '9') || strchr(".eE+-", *j->p)))
        j->p++;
    return j->p > start;
}

static bool parse_container(json *j, int depth, char open, char close, bool keys)
{
    if (depth > 16 || *j->p != open)
        return false;
    j->p++;
    skip_ws(j);
    if (j->p < j->end && *j->p == close) {
        j->p++;
        return true;
    }
    for (;;) {
        skip_ws(j);
        if (keys) {
            if (!parse_string(j, NULL, 0, NULL))
                return false;
            skip_ws(j);
            if (j->p >= j->end || *j->p++ != ':')
                return false;
        }
        if (!parse_value(j, depth + 1))
            return false;
        skip_ws(j);
        if (j->p >= j->end)
            return false;
        char c = *j->p++;
        if (c == close)
            return true;
        if (c != ',')
            return false;
    }
}

static bool parse_value(json *j, int depth)
{
    skip_ws(j);
    if (j->p >= j->end)
        return false;
    switch (*j->p) {
    case '{':
        return parse_container(j, depth, '{', '}', true);
    case '[':
        return parse_container(j, depth, '[', ']', false);
    case '"':
        return parse_string(j, NULL, 0, NULL);
    case 't':
        if (j->end - j->p >= 4 && memcmp(j->p, "true", 4) == 0) {
            j->p += 4;
            return true;
        }
        return false;
    case 'f':
        if (j->end - j->p >= 5 && memcmp(j->p, "false", 5) == 0) {
            j->p += 5;
            return true;
        }
        return false;
    default:
        return parse_number(j);
    }
}

/* One log line: valid JSON object, printable ASCII only, ends in "}\n",
 * no longer than QG_LOG_LINE_MAX. */
static bool line_well_formed(const char *line, size_t len)
{
    if (len < 3 || len > QG_LOG_LINE_MAX || line[0] != '{' || line[len - 1] != '\n' ||
        line[len - 2] != '}')
        return false;
    for (size_t i = 0; i + 1 < len; i++)
        if ((unsigned char)line[i] < 0x20 || (unsigned char)line[i] > 0x7e)
            return false;
    json j = {line, line + len - 1};
    return parse_value(&j, 0) && j.p == j.end;
}

/* The value of a top-level key: a decoded string, or the raw JSON text of
 * anything else.  False when the key is absent. */
static bool json_field(const char *line, const char *key, char *out, size_t cap, size_t *len)
{
    json j = {line, line + strlen(line)};
    skip_ws(&j);
    if (j.p >= j.end || *j.p++ != '{')
        return false;
    for (;;) {
        skip_ws(&j);
        char name[64];
        size_t name_len;
        if (!parse_string(&j, name, sizeof name - 1, &name_len))
            return false;
        name[name_len < sizeof name ? name_len : sizeof name - 1] = '\0';
        skip_ws(&j);
        if (j.p >= j.end || *j.p++ != ':')
            return false;
        skip_ws(&j);
        bool wanted = strcmp(name, key) == 0;
        if (wanted && !out)
            return true;
        const char *value_start = j.p;
        if (*j.p == '"') {
            size_t n;
            if (!parse_string(&j, wanted ? out : NULL, cap - 1, &n))
                return false;
            if (wanted) {
                size_t kept = n < cap - 1 ? n : cap - 1;
                out[kept] = '\0';
                if (len)
                    *len = n;
                return true;
            }
        } else {
            if (!parse_value(&j, 1))
                return false;
            if (wanted) {
                size_t n = (size_t)(j.p - value_start);
                if (n >= cap)
                    n = cap - 1;
                memcpy(out, value_start, n);
                out[n] = '\0';
                if (len)
                    *len = n;
                return true;
            }
        }
        skip_ws(&j);
        if (j.p >= j.end || *j.p++ != ',')
            return false;
    }
}

static bool field_is(const char *line, const char *key, const char *expect)
{
    char value[QG_LOG_LINE_MAX];
    return json_field(line, key, value, sizeof value, NULL) && strcmp(value, expect) == 0;
}

/* --------------------------------------------------------------- helpers */

/* getpid may be named by an alias (__getpid) of the same address. */
static bool caller_is_getpid_plus_4(const char *line)
{
    char caller[256];
    if (!json_field(line, "caller", caller, sizeof caller, NULL))
        return false;
    const char *tail = "getpid+0x4";
    size_t n = strlen(caller);
    return strncmp(caller, "libc.so.6!", 10) == 0 && n >= strlen(tail) &&
           strcmp(caller + n - strlen(tail), tail) == 0;
}

static char tmpdir[] = "/tmp/qg-test-log-XXXXXX";

/* Splits the file into lines; each must be whole. */
typedef struct line_check {
    size_t lines;
    size_t malformed;
} line_check;

static line_check check_lines(const char *text, size_t len)
{
    line_check r = {0, 0};
    size_t start = 0;
    while (start < len) {
        const char *nl = memchr(text + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - text) + 1 : len;
        r.lines++;
        if (!line_well_formed(text + start, end - start))
            r.malformed++;
        start = end;
    }
    return r;
}

static void path_in_tmp(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", tmpdir, name);
}

static void file_settings(qg_settings *s, const char *name)
{
    qg_settings_defaults(s);
    qg_settings_set_program(s, "test_log");
    s->log_sink = QG_LOG_FILE;
    path_in_tmp(s->log_path, sizeof s->log_path, name);
}

/* The single line a test wrote, NUL-terminated (empty when not one line). */
static const char *only_line(const qg_settings *s)
{
    size_t len;
    const char *text = read_whole_file(s->log_path, &len);
    if (check_lines(text, len).lines != 1)
        return "";
    return text;
}

static qg_log_finding sample_finding(const char *sql, size_t len, size_t offset)
{
    return (qg_log_finding){
        .api = "PQexec",
        .dialect = QG_DIALECT_POSTGRES,
        .encoding = "SJIS",
        .conn = (const void *)0x5a5a10,
        .action = "blocked",
        .reason = QG_REASON_STRUCTURE_MISMATCH,
        .offset = offset,
        .span_start = offset > 2 ? offset - 2 : 0,
        .span_end = offset + 3,
        .sql = sql,
        .sql_len = len,
        .fingerprint = 0x0123456789abcdefULL,
    };
}

/* ----------------------------------------------------------------- tests */

static void test_escape(void)
{
    char out[64];
    size_t n = qg_json_escape(out, sizeof out, (const unsigned char *)"plain text", 10);
    tap_ok(n == 10 && strcmp(out, "plain text") == 0, "printable ASCII kept");
    n = qg_json_escape(out, sizeof out, (const unsigned char *)"a\"b\\c", 5);
    tap_ok(strcmp(out, "a\\\"b\\\\c") == 0 && n == 7, "quote and backslash escaped: %s", out);
    n = qg_json_escape(out, sizeof out, (const unsigned char *)"\n\x1b\x7f\x95\x5c\0", 6);
    tap_ok(strcmp(out, "\\u000a\\u001b\\u007f\\u0095\\\\\\u0000") == 0,
           "control, DEL, high and NUL bytes as \\u00XX: %s", out);
    n = qg_json_escape(out, 9, (const unsigned char *)"ab\ncd", 5);
    tap_ok(n == 8 && strcmp(out, "ab\\u000a") == 0, "cap respected, NUL written: %s", out);
    n = qg_json_escape(out, 7, (const unsigned char *)"ab\ncd", 5);
    tap_ok(n == 2 && strcmp(out, "ab") == 0, "an escape is never cut in half: %s", out);
    n = qg_json_escape(out, 3, (const unsigned char *)"a\"", 2);
    tap_ok(n == 1 && strcmp(out, "a") == 0, "nor a two-byte escape");
    tap_ok(qg_json_escape(out, 0, (const unsigned char *)"a", 1) == 0, "cap 0 writes nothing");
}

static void test_finding_line(void)
{
    qg_settings s;
    file_settings(&s, "finding.log");
    const char sql[] = "SELECT * FROM t WHERE name = '\x95\x5c' OR 1=1 --'\n\x1b[31m\"x\"";
    qg_log_finding f = sample_finding(sql, sizeof sql - 1, 31);
    f.caller = (const char *)&getpid + 4;
    f.detail = "a detail";
    qg_log_write_finding(&s, &f);
    const char *line = only_line(&s);
    tap_ok(line_well_formed(line, strlen(line)), "finding: one well-formed JSON line: %.*s",
           (int)strcspn(line, "\n"), line);

    static const char *const order[] = {"time",   "pid",     "program", "mode",   "action",
                                        "api",    "dialect", "encoding", "conn",  "reason",
                                        "offset", "span",    "excerpt", "fingerprint",
                                        "caller", "detail"};
    const char *at = line;
    bool in_order = true;
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        char key[40];
        snprintf(key, sizeof key, "\"%s\":", order[i]);
        const char *found = strstr(at, key);
        if (!found)
            in_order = false;
        else
            at = found;
    }
    tap_ok(in_order, "every finding field present, in the documented order");

    char pid[24];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    tap_ok(field_is(line, "pid", pid), "pid");
    tap_ok(field_is(line, "program", "test_log") && field_is(line, "mode", "enforce") &&
               field_is(line, "action", "blocked") && field_is(line, "api", "PQexec") &&
               field_is(line, "dialect", "postgres") && field_is(line, "encoding", "SJIS"),
           "program, mode, action, api, dialect, encoding");
    tap_ok(field_is(line, "conn", "0x5a5a10"), "conn as a hex id");
    tap_ok(field_is(line, "reason", "structure_mismatch"), "reason by name");
    tap_ok(field_is(line, "offset", "31") && field_is(line, "span", "[29,34]"), "offset and span");
    tap_ok(field_is(line, "fingerprint", "0123456789abcdef"), "fingerprint: 16 hex digits");
    tap_ok(caller_is_getpid_plus_4(line), "caller as object!symbol+0xoff");
    tap_ok(field_is(line, "detail", "a detail"), "detail");

    char excerpt[256];
    size_t excerpt_len = 0;
    json_field(line, "excerpt", excerpt, sizeof excerpt, &excerpt_len);
    size_t from = 31 - 16;
    size_t expect_len = sizeof sql - 1 - from;
    if (expect_len > 64)
        expect_len = 64;
    tap_ok(excerpt_len == expect_len && memcmp(excerpt, sql + from, expect_len) == 0,
           "excerpt: 64 bytes from 16 before the offset, decoding to the query bytes");
    tap_ok(strstr(line, "\\u000a\\u001b[31m\\\"x\\\"") != NULL,
           "newline, escape and quotes in the query appear escaped");

    char time_text[64];
    json_field(line, "time", time_text, sizeof time_text, NULL);
    struct tm tm = {0};
    int ms = -1;
    int fields = sscanf(time_text, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &tm.tm_year, &tm.tm_mon,
                        &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms);
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    time_t logged = timegm(&tm);
    /* the log's clock: time() reads a coarser one, which may still show
     * the second before */
    struct timespec clock_now;
    clock_gettime(CLOCK_REALTIME, &clock_now);
    time_t now = clock_now.tv_sec;
    tap_ok(fields == 7 && strlen(time_text) == 24 && ms >= 0 && ms < 1000 &&
               logged <= now && now - logged <= 2,
           "time: ISO-8601 UTC with milliseconds, now: %s", time_text);
}

static void test_excerpt_bounds(void)
{
    char sql[300];
    for (size_t i = 0; i < sizeof sql; i++)
        sql[i] = (char)('a' + i % 26);
    struct {
        size_t offset;
        size_t from, len;
        const char *what;
    } cases[] = {
        {200, 184, 64, "middle: 16 bytes before the offset"},
        {5, 0, 64, "near the start: from byte 0"},
        {295, 279, 21, "near the end: to the last byte"},
        {5000, 284, 16, "offset past the end: clamped"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        qg_settings s;
        char name[32];
        snprintf(name, sizeof name, "excerpt%zu.log", i);
        file_settings(&s, name);
        qg_log_finding f = sample_finding(sql, sizeof sql, cases[i].offset);
        qg_log_write_finding(&s, &f);
        const char *line = only_line(&s);
        char excerpt[512];
        size_t len = 0;
        bool found = json_field(line, "excerpt", excerpt, sizeof excerpt, &len);
        tap_ok(found && len == cases[i].len && memcmp(excerpt, sql + cases[i].from, len) == 0,
               "excerpt %s (%zu bytes)", cases[i].what, len);
    }

    qg_settings s;
    file_settings(&s, "full.log");
    s.log_full_query = true;
    qg_log_finding f = sample_finding(sql, sizeof sql, 200);
    qg_log_write_finding(&s, &f);
    const char *line = only_line(&s);
    char excerpt[512];
    size_t len = 0;
    json_field(line, "excerpt", excerpt, sizeof excerpt, &len);
    tap_ok(len == sizeof sql && memcmp(excerpt, sql, len) == 0 && !strstr(line, "truncated"),
           "log_full_query: the whole query");

    /* A query far longer than a line: cut between escapes, still valid. */
    static char big[20000];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (char)(i % 3 ? 'x' : '\n');
    file_settings(&s, "big.log");
    s.log_full_query = true;
    f = sample_finding(big, sizeof big, 10);
    f.caller = (const char *)&getpid + 4;
    f.detail = "after the excerpt";
    qg_log_write_finding(&s, &f);
    size_t file_len;
    const char *text = read_whole_file(s.log_path, &file_len);
    line_check c = check_lines(text, file_len);
    tap_ok(c.lines == 1 && c.malformed == 0 && file_len <= QG_LOG_LINE_MAX,
           "oversized full query: one valid line of at most %d bytes (%zu)", QG_LOG_LINE_MAX,
           file_len);
    tap_ok(field_is(text, "truncated", "true") && field_is(text, "fingerprint", "0123456789abcdef") &&
               field_is(text, "detail", "after the excerpt") &&
               caller_is_getpid_plus_4(text),
           "marked truncated; the fields after the excerpt survive");

    /* A huge detail: the line ends cleanly too. */
    static char long_detail[10000];
    memset(long_detail, '"', sizeof long_detail - 1);
    file_settings(&s, "detail.log");
    f = sample_finding(sql, sizeof sql, 10);
    f.detail = long_detail;
    qg_log_write_finding(&s, &f);
    text = read_whole_file(s.log_path, &file_len);
    c = check_lines(text, file_len);
    tap_ok(c.lines == 1 && c.malformed == 0 && field_is(text, "truncated", "true"),
           "oversized detail of quotes: valid, truncated line");
}

static void test_caller_forms(void)
{
    qg_settings s;
    file_settings(&s, "caller.log");
    qg_log_finding f = sample_finding("SELECT 1", 8, 0);
    f.caller = (const void *)0x10;
    qg_log_write_finding(&s, &f);
    tap_ok(field_is(only_line(&s), "caller", "0x10"), "unknown address: bare hex");

    file_settings(&s, "caller2.log");
    f.caller = (const char *)&tmpdir[3];
    qg_log_write_finding(&s, &f);
    char caller[256];
    json_field(only_line(&s), "caller", caller, sizeof caller, NULL);
    tap_ok(strncmp(caller, "test_log", 8) == 0 && strstr(caller, "+0x") && !strchr(caller, '!'),
           "address in the program without a dynamic symbol: object+0xoff (%s)", caller);

    file_settings(&s, "caller3.log");
    f.caller = NULL;
    f.detail = NULL;
    qg_log_write_finding(&s, &f);
    const char *line = only_line(&s);
    tap_ok(line_well_formed(line, strlen(line)) && !strstr(line, "\"caller\"") &&
               !strstr(line, "\"detail\""),
           "no caller and no detail: fields left out");
}

static void test_events_and_verbosity(void)
{
    qg_settings s;
    size_t len;

    file_settings(&s, "event.log");
    qg_log_write_event(&s, "error", "config_error", "x=\"1\"\n{\"forged\":true}");
    const char *line = only_line(&s);
    tap_ok(line_well_formed(line, strlen(line)) && field_is(line, "level", "error") &&
               field_is(line, "event", "config_error") &&
               field_is(line, "detail", "x=\"1\"\n{\"forged\":true}") &&
               field_is(line, "program", "test_log") && json_field(line, "time", NULL, 0, NULL),
           "event line: time, pid, program, level, event, detail; a forged line stays inside");

    static const struct {
        int verbosity;
        const char *level;
        bool written;
    } gates[] = {
        {1, "debug", false}, {2, "debug", true}, {0, "info", false},
        {1, "info", true},   {0, "error", true}, {0, "warning", true},
    };
    for (size_t i = 0; i < sizeof gates / sizeof gates[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "gate%zu.log", i);
        file_settings(&s, name);
        s.verbosity = gates[i].verbosity;
        qg_log_write_event(&s, gates[i].level, "test_event", NULL);
        read_whole_file(s.log_path, &len);
        tap_ok((len > 0) == gates[i].written, "%s event at verbosity %d: %s", gates[i].level,
               gates[i].verbosity, gates[i].written ? "written" : "not written");
    }

    file_settings(&s, "startup.log");
    s.mode = QG_MODE_AUDIT;
    qg_log_write_startup(&s, "libpq.so.5,libmariadb.so.3");
    line = only_line(&s);
    char pid[24];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    tap_ok(line_well_formed(line, strlen(line)) && field_is(line, "event", "attached") &&
               field_is(line, "pid", pid) && field_is(line, "program", "test_log") &&
               field_is(line, "mode", "audit") &&
               field_is(line, "libraries", "libpq.so.5,libmariadb.so.3"),
           "startup line: attached, pid, program, mode, libraries");
    tap_ok(!strstr(line, "\"rewrite\""), "startup line: no rewrite choice outside rewrite mode");
    file_settings(&s, "startup_rewrite.log");
    s.mode = QG_MODE_REWRITE;
    qg_log_write_startup(&s, "libpq.so.5");
    line = only_line(&s);
    tap_ok(line_well_formed(line, strlen(line)) && field_is(line, "mode", "rewrite") &&
               field_is(line, "rewrite", "needed"),
           "startup line in rewrite mode: which literals it replaces (needed)");
    file_settings(&s, "startup0.log");
    s.verbosity = 0;
    qg_log_write_startup(&s, "libpq.so.5");
    read_whole_file(s.log_path, &len);
    tap_ok(len == 0, "no startup line at verbosity 0");

    file_settings(&s, "quiet.log");
    s.verbosity = 0;
    qg_log_finding f = sample_finding("SELECT 1", 8, 0);
    qg_log_write_finding(&s, &f);
    read_whole_file(s.log_path, &len);
    tap_ok(len > 0, "findings are written at verbosity 0");
    file_settings(&s, "off.log");
    s.mode = QG_MODE_OFF;
    qg_log_write_finding(&s, &f);
    read_whole_file(s.log_path, &len);
    tap_ok(len == 0, "no findings in mode off");

    file_settings(&s, "program.log");
    qg_settings_set_program(&s, "evil\"}\n\x1b");
    qg_log_write_event(&s, "error", "e", NULL);
    line = only_line(&s);
    tap_ok(line_well_formed(line, strlen(line)) && field_is(line, "program", "evil\"}\n\x1b"),
           "a hostile program name is escaped");
}

#define THREADS 8
#define LINES_PER_THREAD 500

static qg_settings shared_settings;

static void *write_lines(void *arg)
{
    size_t id = (size_t)arg;
    for (int i = 0; i < LINES_PER_THREAD; i++) {
        char detail[64];
        snprintf(detail, sizeof detail, "writer %zu line %d", id, i);
        qg_log_write_event(&shared_settings, "error", "concurrency", detail);
    }
    return NULL;
}

static void test_concurrent_threads(void)
{
    file_settings(&shared_settings, "threads.log");
    pthread_t threads[THREADS];
    for (size_t i = 0; i < THREADS; i++)
        pthread_create(&threads[i], NULL, write_lines, (void *)i);
    for (size_t i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    size_t len;
    const char *text = read_whole_file(shared_settings.log_path, &len);
    line_check c = check_lines(text, len);
    tap_ok(c.lines == THREADS * LINES_PER_THREAD && c.malformed == 0,
           "%d threads x %d lines: %zu lines, %zu malformed", THREADS, LINES_PER_THREAD, c.lines,
           c.malformed);
    char needle[64];
    snprintf(needle, sizeof needle, "\"writer %d line %d\"", THREADS - 1, LINES_PER_THREAD - 1);
    tap_ok(strstr(text, needle) != NULL, "the last line of the last writer is there");
}

static void test_concurrent_processes(void)
{
    /* The parent opens the file first: the children inherit the descriptor. */
    file_settings(&shared_settings, "procs.log");
    qg_log_write_event(&shared_settings, "error", "before_fork", NULL);
    enum { CHILDREN = 4 };
    pid_t pids[CHILDREN];
    for (int i = 0; i < CHILDREN; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            write_lines((void *)(size_t)i);
            _exit(0);
        }
    }
    write_lines((void *)(size_t)CHILDREN);
    for (int i = 0; i < CHILDREN; i++)
        waitpid(pids[i], NULL, 0);
    size_t len;
    const char *text = read_whole_file(shared_settings.log_path, &len);
    line_check c = check_lines(text, len);
    tap_ok(c.lines == 1 + (CHILDREN + 1) * LINES_PER_THREAD && c.malformed == 0,
           "%d processes appending: %zu lines, %zu malformed", CHILDREN + 1, c.lines, c.malformed);
}

/* The descriptor number the log holds for path, or -1. */
static int fd_of(const char *path)
{
    DIR *d = opendir("/proc/self/fd");
    int found = -1;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char link[300], target[4096];
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        if (strcmp(target, path) == 0)
            found = atoi(e->d_name);
    }
    if (d)
        closedir(d);
    return found;
}

static void test_descriptor_reuse_and_rotation(void)
{
    qg_settings s;
    file_settings(&s, "reuse.log");
    qg_log_write_event(&s, "error", "first", NULL);
    int fd = fd_of(s.log_path);
    tap_ok(fd >= 0, "the log file is open (fd %d)", fd);

    /* The program closes "its" descriptors and the number gets reused. */
    char other[256];
    path_in_tmp(other, sizeof other, "other.txt");
    int other_fd = open(other, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(other_fd, fd);
    close(other_fd);
    qg_log_write_event(&s, "error", "second", NULL);
    size_t len;
    read_whole_file(other, &len);
    tap_ok(len == 0, "a reused descriptor number is not written to");
    const char *text = read_whole_file(s.log_path, &len);
    tap_ok(check_lines(text, len).lines == 2 && strstr(text, "\"second\""),
           "the log file was reopened and got the line");
    close(fd);

    /* Rotation: the file is renamed away; the next line starts a new file. */
    char rotated[256];
    path_in_tmp(rotated, sizeof rotated, "reuse.log.1");
    rename(s.log_path, rotated);
    qg_log_write_event(&s, "error", "third", NULL);
    text = read_whole_file(s.log_path, &len);
    tap_ok(check_lines(text, len).lines == 1 && strstr(text, "\"third\""),
           "after rotation the line goes to a new file at the path");
}

/* ------------------------------------------- stderr checks, in a child
 *
 * The log writes to descriptor 2 only while it is what the program started
 * with, so these run in a fresh image of this program (exec) whose
 * descriptor 2 is set up before it starts. */

static char self_path[4096];

/* Runs this program as `--child MODE` with stderr_fd as its descriptor 2;
 * returns its exit status. */
static int run_child(const char *mode, int stderr_fd)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(stderr_fd, STDERR_FILENO);
        execl(self_path, self_path, "--child", mode, tmpdir, (char *)NULL);
        _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static void stderr_settings(qg_settings *s)
{
    qg_settings_defaults(s);
    qg_settings_set_program(s, "test_log");
    s->log_sink = QG_LOG_STDERR;
}

/* What the children do; exit status 0 = as expected. */
static int child_main(const char *mode)
{
    qg_settings s;
    if (strcmp(mode, "open-failure") == 0) {
        file_settings(&s, "missing-dir/x.log");
        qg_log_write_event(&s, "error", "lost_line", NULL);
        qg_log_write_event(&s, "error", "lost_line", NULL);
        return 0; /* the total is told at exit */
    }
    stderr_settings(&s);
    if (strcmp(mode, "db-socket") == 0) {
        qg_log_write_event(&s, "error", "before_note", NULL);
        qg_log_note_db_socket(STDERR_FILENO);
        qg_log_write_event(&s, "error", "after_note", NULL);
        return 0;
    }
    if (strcmp(mode, "fd2-reused") == 0) {
        close(STDERR_FILENO);
        int pair[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0 || pair[0] != STDERR_FILENO)
            return 2;
        qg_log_write_event(&s, "error", "into_the_socket", NULL);
        char buf[64];
        return recv(pair[1], buf, sizeof buf, MSG_DONTWAIT) < 0 && errno == EAGAIN ? 0 : 1;
    }
    return 2;
}

static void test_open_failure(void)
{
    char capture[256];
    path_in_tmp(capture, sizeof capture, "stderr.txt");
    int cap_fd = open(capture, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int status = run_child("open-failure", cap_fd);
    close(cap_fd);
    size_t len;
    const char *text = read_whole_file(capture, &len);
    line_check c = check_lines(text, len);
    const char *first = strstr(text, "\"log_lines_lost\"");
    const char *second = first ? strstr(first + 1, "\"log_lines_lost\"") : NULL;
    tap_ok(status == 0 && c.lines == 2 && c.malformed == 0 && first && second &&
               strstr(text, "cannot open log file") && strstr(text, "1 log line lost so far") &&
               strstr(second, "2 log lines lost in all") && !strstr(text, "\"lost_line\""),
           "unopenable log file: lines lost, the first loss told once on stderr, the total at "
           "exit");
    if (!first || !second)
        tap_diag("stderr was: %s", text);
}

static void test_stderr_checks(void)
{
    int pair[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, pair);
    int status = run_child("db-socket", pair[1]);
    close(pair[1]);
    char got[2 * QG_LOG_LINE_MAX] = "";
    ssize_t n = recv(pair[0], got, sizeof got - 1, MSG_DONTWAIT);
    got[n > 0 ? n : 0] = '\0';
    close(pair[0]);
    tap_ok(status == 0 && strstr(got, "\"before_note\""),
           "stderr that is a socket from the start gets lines");
    tap_ok(!strstr(got, "\"after_note\"") && !strstr(got, "log_lines_lost"),
           "once noted as carrying database traffic, it gets none, not even the report");

    char capture[256];
    path_in_tmp(capture, sizeof capture, "stderr-reused.txt");
    int cap_fd = open(capture, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    status = run_child("fd2-reused", cap_fd);
    close(cap_fd);
    tap_ok(status == 0, "descriptor 2 closed and reused by a socket: no byte is written into it");
}

static void test_syslog(void)
{
    if (geteuid() != 0 || access("/dev/log", F_OK) == 0) {
        tap_ok(1, "# SKIP needs root and no /dev/log to stand in for syslog");
        return;
    }
    int sock = socket(AF_UNIX, SOCK_DGRAM, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX, .sun_path = "/dev/log"};
    if (bind(sock, (struct sockaddr *)&addr, sizeof addr) != 0) {
        tap_ok(1, "# SKIP cannot bind /dev/log: %s", strerror(errno));
        close(sock);
        return;
    }
    qg_settings s;
    qg_settings_defaults(&s);
    qg_settings_set_program(&s, "test_log");
    s.log_sink = QG_LOG_SYSLOG;
    s.syslog_facility = LOG_LOCAL2;
    qg_log_write_event(&s, "error", "to_syslog", "d");
    char msg[QG_LOG_LINE_MAX + 128];
    ssize_t n = recv(sock, msg, sizeof msg - 1, MSG_DONTWAIT);
    unlink("/dev/log");
    close(sock);
    msg[n > 0 ? n : 0] = '\0';
    char head[64];
    snprintf(head, sizeof head, "<%d>quoteguard[%d]: {", LOG_LOCAL2 | LOG_ERR, (int)getpid());
    const char *body = strchr(msg, '{');
    tap_ok(strncmp(msg, head, strlen(head)) == 0 && body &&
               field_is(body, "event", "to_syslog") && msg[n - 1] == '}',
           "syslog: one datagram, configured facility, ident quoteguard, the JSON: %s", msg);
}

/* journald's native protocol: each JSON field is also a KEY=value line, the
 * value as the JSON has it (escapes kept, quotes gone), a cut line too. */
static void test_journal_fields(void)
{
    char sock_path[256];
    path_in_tmp(sock_path, sizeof sock_path, "journal.sock");
    int sock = socket(AF_UNIX, SOCK_DGRAM, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    memcpy(addr.sun_path, sock_path, strlen(sock_path) + 1); /* tmpdir is short */
    if (bind(sock, (struct sockaddr *)&addr, sizeof addr) != 0) {
        tap_ok(0, "bind %s: %s", sock_path, strerror(errno));
        return;
    }
    qg_settings s;
    qg_settings_defaults(&s);
    qg_settings_set_program(&s, "test_log");
    s.log_sink = QG_LOG_JOURNAL;
    snprintf(s.log_path, sizeof s.log_path, "%s", sock_path);
    s.log_full_query = true;
    const char sql[] = "SELECT 'a\\\"b', \"x,y\" FROM t";
    qg_log_finding f = sample_finding(sql, sizeof sql - 1, 8);
    qg_log_write_finding(&s, &f);
    char msg[3 * QG_LOG_LINE_MAX];
    ssize_t n = recv(sock, msg, sizeof msg - 1, MSG_DONTWAIT);
    msg[n > 0 ? n : 0] = '\0';
    tap_ok(strncmp(msg, "PRIORITY=4\nSYSLOG_FACILITY=10\nSYSLOG_IDENTIFIER=quoteguard\n", 57) == 0 &&
               strstr(msg, "\nMESSAGE={\"time\":") != NULL,
           "journal: priority, facility, identifier, the JSON line as MESSAGE");
    tap_ok(strstr(msg, "\nQUOTEGUARD_EXCERPT=SELECT 'a\\\\\\\"b', \\\"x,y\\\" FROM t\n") != NULL &&
               strstr(msg, "\nQUOTEGUARD_SPAN=[6,11]\nQUOTEGUARD_EXCERPT=") != NULL &&
               strstr(msg, "\nQUOTEGUARD_REASON=structure_mismatch\n") != NULL &&
               msg[n - 1] == '\n',
           "journal: escaped quotes, commas and arrays stay inside their field");

    /* A line cut at the limit: its "truncated" field is a field too. */
    char big[3 * QG_LOG_LINE_MAX];
    memset(big, 'A', sizeof big);
    f = sample_finding(big, sizeof big, 8);
    qg_log_write_finding(&s, &f);
    n = recv(sock, msg, sizeof msg - 1, MSG_DONTWAIT);
    msg[n > 0 ? n : 0] = '\0';
    tap_ok(n > 0 && strstr(msg, "\nQUOTEGUARD_TRUNCATED=true\n") != NULL,
           "journal: a cut line says QUOTEGUARD_TRUNCATED=true");
    close(sock);
    unlink(sock_path);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--child") == 0) {
        snprintf(tmpdir, sizeof tmpdir, "%s", argv[3]);
        return child_main(argv[2]);
    }
    ssize_t self_len = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
    if (self_len <= 0)
        return 1;
    self_path[self_len] = '\0';
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_escape();
    test_finding_line();
    test_excerpt_bounds();
    test_caller_forms();
    test_events_and_verbosity();
    test_concurrent_threads();
    test_concurrent_processes();
    test_descriptor_reuse_and_rotation();
    test_open_failure();
    test_stderr_checks();
    test_journal_fields();
    test_syslog();

    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        tap_diag("could not remove %s", tmpdir);
    return tap_done();
}
