/* How often the MySQL paths read one text: texts of 1, 3 and 10 statements
 * go through what the libmariadb front calls for mysql_real_query (the
 * session's check, what the text may change, the answer) and through what
 * the wire front calls for a COM_QUERY (the check under each state, the
 * effect the answer is read with), in a build that counts the passes
 * (pass_count.h), with shapes learned.  Each text is read by one walk over
 * its statements; the other readings are those the rule needs: the
 * checker's, once over the text in the pieces it is checked in, and once
 * more over the rest after a piece that may read otherwise in another
 * state (a backslash or a byte of 0x80 or more: an escaper may have been
 * fooled in it); a search for those bytes where the state changes before
 * the end, and the searches for what may change the state unreported; one
 * shape a piece.  The server is scripted, as in test_mysql_session.c. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conn_map.h"
#include "mysql_session.h"
#include "pass_count.h"
#include "quoteguard.h"
#include "tap.h"
#include "wire_mysql.h"
#include "wire_stream.h"

static qg_my_state server_state = {.charset = "utf8mb4"};

static bool ask(void *conn, qg_my_state *st, bool *covered)
{
    (void)conn;
    *st = server_state;
    *covered = true;
    return true;
}

static bool request_tracking(void *conn)
{
    (void)conn;
    return true;
}

static unsigned long thread_id(void *conn)
{
    (void)conn;
    return 7;
}

static unsigned status(void *conn)
{
    (void)conn;
    return 0;
}

static bool result_set(void *conn)
{
    (void)conn;
    return false;
}

static bool report_item(void *conn, bool first, const char **data, size_t *len)
{
    (void)conn, (void)first, (void)data, (void)len;
    return false;
}

static qg_conn_map map = QG_CONN_MAP_INIT(qg_conn_head);
static const qg_my_server srv = {&map, ask, request_tracking, thread_id, status, result_set,
                                 report_item};

typedef struct text {
    const char *name;
    const char *sql;
    unsigned statements;
    unsigned changes; /* statements that change the state, before the last */
    /* where the piece starts whose rest the rule reads again, NULL: none */
    const char *reread;
} text;

static const text texts[] = {
    {"1 statement", "SELECT c FROM qg_bench WHERE id = 7", 1, 0, NULL},
    {"3 statements", "SET NAMES gbk; SELECT 'it''s \xc4\xe3'; UPDATE t SET c = 'x' WHERE id = 2", 3, 1, NULL},
    {"10 statements",
     "SELECT 1; INSERT INTO t VALUES (1, 'a'); SET sql_mode = 'ANSI_QUOTES'; "
     "SELECT \"c\" FROM t; UPDATE t SET c = 'b'; DELETE FROM t WHERE id = 3; "
     "SET NAMES latin1; SELECT 'x'; SELECT c FROM t WHERE c = 'y'; SELECT 2",
     10, 2, NULL},
    {"10 statements, 5 changes",
     "SET NAMES utf8mb4; SELECT 'a'; SET sql_mode = 'NO_BACKSLASH_ESCAPES'; SELECT 'b', 'c'; "
     "SET sql_mode = 'ANSI_QUOTES'; SELECT \"c\" FROM t; SET NAMES eucjpms; "
     /* an ill-formed sequence, logged: the piece may read otherwise */
     "SELECT '\x8f\x41\xa1\xa1'; SET NAMES latin1; SELECT 'd'",
     10, 5, " SELECT '\x8f"},
};

/* The shapes profile learns the pieces' shapes: a new one is computed
 * once more, for the normalized text the profile keeps. */
static bool learning;

static unsigned long counted(qg_pass_kind kind)
{
    return qg_pass_counts[kind];
}

/* The counts a path took for one text: statements read, text scans,
 * checker readings, shapes.  `scans_allowed`: the searches for unreported
 * changes. */
static void report(const char *path, const text *t, unsigned long scans_allowed)
{
    unsigned long reads = counted(QG_PASS_STATEMENT_READ), scans = counted(QG_PASS_TEXT_SCAN),
                  checks = counted(QG_PASS_CHECK), bytes = counted(QG_PASS_CHECKED_BYTES),
                  shapes = counted(QG_PASS_SHAPE);
    size_t len = strlen(t->sql);
    unsigned long pieces = 1 + t->changes;
    unsigned long checks_allowed = pieces + (t->reread != NULL);
    unsigned long bytes_allowed = len + (t->reread ? strlen(strstr(t->sql, t->reread)) : 0);
    if (t->changes > 0)
        scans_allowed++; /* the bytes that may read otherwise */
    tap_diag("%s, %s: %lu statements read, %lu text scans, %lu checker readings of %lu bytes, "
             "%lu shapes (text: %zu bytes)",
             path, t->name, reads, scans, checks, bytes, shapes, len);
    tap_ok(reads <= t->statements,
           "%s, %s: one walk over the statements (%lu read, %u in the text)", path, t->name, reads,
           t->statements);
    tap_ok(scans <= scans_allowed, "%s, %s: at most %lu searches for unreported changes (%lu)",
           path, t->name, scans_allowed, scans);
    tap_ok(checks <= checks_allowed && bytes <= bytes_allowed,
           "%s, %s: the checker reads it once, and the rest again only after a piece that may "
           "read otherwise (%lu readings of %lu bytes, at most %lu of %lu)",
           path, t->name, checks, bytes, checks_allowed, bytes_allowed);
    unsigned long shapes_allowed = learning ? 2 * pieces : pieces;
    tap_ok(shapes <= shapes_allowed, "%s, %s: one shape a piece%s (%lu, at most %lu)", path,
           t->name, learning ? ", and a new one again for the profile" : "", shapes,
           shapes_allowed);
}

/* mysql_real_query on a libmariadb connection, as front_mysql.c calls the
 * session: prepare, check, what the text may change (a text of several
 * statements before it is sent), the OK answer. */
static void libmariadb_path(const text *t)
{
    qg_my_session s = {0};
    qg_my_session_prepare(&s, &srv, NULL, NULL);
    memset(qg_pass_counts, 0, sizeof qg_pass_counts);
    size_t len = strlen(t->sql);
    qg_decision d;
    qg_my_plan plan;
    qg_my_plan_init(&plan, t->sql, len);
    bool allowed = qg_my_session_check(&s, NULL, NULL, "mysql_real_query", &plan, NULL, NULL, &d);
    tap_ok(allowed, "libmariadb, %s: passes", t->name);
    bool later = memchr(t->sql, ';', len) != NULL;
    if (later)
        qg_my_session_sending(&s, &plan);
    qg_my_session_answered(&s, &srv, NULL, later ? NULL : &plan);
    /* "@@" and "session_track": what may change the state unreported */
    report("libmariadb", t, 2);
}

/* A COM_QUERY at the wire, as front_wire.c checks it: under the state the
 * server reported, then the effect its answer is read with. */
static void wire_path(const text *t)
{
    qg_wire_conn c;
    qg_wire_conn_init(&c, QG_WIRE_MYSQL);
    c.my.known = c.my.flags_known = true;
    qg_wire_my_set_charset(&c.session, server_state.charset, strlen(server_state.charset));
    qg_my_state states[QG_WIRE_MY_STATES];
    size_t count;
    memset(qg_pass_counts, 0, sizeof qg_pass_counts);
    qg_my_plan plan;
    qg_my_plan_init(&plan, t->sql, strlen(t->sql));
    bool allowed = qg_wire_my_states(&c.my, &c.session, states, QG_WIRE_MY_STATES, &count);
    for (size_t i = 0; allowed && i < count; i++) {
        qg_my_session session = {.state = states[i]};
        qg_decision d;
        allowed = qg_my_session_check(&session, NULL, &c, "wire:COM_QUERY", &plan, NULL, NULL, &d);
    }
    tap_ok(allowed && count == 1, "wire, %s: passes under the one state known", t->name);
    qg_wire_my_query_effect(&c.my, &plan, &states[count - 1]);
    /* "@@" in a text of several statements: whether the server reports
     * each one's change */
    report("wire", t, t->statements > 1);
    qg_wire_conn_release(&c);
}

int main(void)
{
    char profile[] = "/tmp/qg-test-passes.XXXXXX";
    int fd = mkstemp(profile);
    if (!tap_ok(fd >= 0, "a temporary shapes profile"))
        return tap_done();
    close(fd);
    setenv("QUOTEGUARD_CONFIG", "/dev/null", 1);
    setenv("QUOTEGUARD_MODE", "enforce", 1);
    setenv("QUOTEGUARD_LOG", "/dev/null", 1);
    setenv("QUOTEGUARD_SHAPES", "learn", 1);
    setenv("QUOTEGUARD_SHAPES_FILE", profile, 1);
    /* twice: the shapes are learned the first time, known the second */
    for (learning = true;; learning = false) {
        for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
            libmariadb_path(&texts[i]);
            wire_path(&texts[i]);
        }
        if (!learning)
            break;
    }
    unlink(profile);
    return tap_done();
}
