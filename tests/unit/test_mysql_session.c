/* The MySQL session's state machine (mysql_session.c) against a scripted
 * server: when the state is taken from a report, when it is asked for, and
 * what a failed question leaves. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn_map.h"
#include "mysql_session.h"
#include "quoteguard.h"
#include "tap.h"

/* What the scripted server answers. */
typedef struct fake {
    qg_my_state state;    /* what a state query reads */
    bool ask_fails;
    bool covered;         /* the tracked variables include charset and sql_mode */
    unsigned long thread; /* server thread id */
    unsigned status;      /* status flags of the last answer */
    bool result_set;
    const char *report[8]; /* name, value, … of the last OK packet */
    unsigned asked, tracking_requests;
} fake;

static fake server_state;
static qg_conn_map map = QG_CONN_MAP_INIT(qg_conn_head);

static bool ask(void *conn, qg_my_state *st, bool *covered)
{
    (void)conn;
    server_state.asked++;
    if (server_state.ask_fails)
        return false;
    *st = server_state.state;
    *covered = server_state.covered;
    return true;
}

static bool request_tracking(void *conn)
{
    (void)conn;
    server_state.tracking_requests++;
    server_state.covered = true;
    return true;
}

static unsigned long thread_id(void *conn)
{
    (void)conn;
    return server_state.thread;
}

static unsigned status(void *conn)
{
    (void)conn;
    return server_state.status;
}

static bool result_set(void *conn)
{
    (void)conn;
    return server_state.result_set;
}

static size_t report_at;

static bool report_item(void *conn, bool first, const char **data, size_t *len)
{
    (void)conn;
    if (first)
        report_at = 0;
    const char *item = report_at < 8 ? server_state.report[report_at] : NULL;
    if (!item)
        return false;
    report_at++;
    *data = item;
    *len = strlen(item);
    return true;
}

static const qg_my_server srv = {&map, ask, request_tracking, thread_id, status, result_set,
                                 report_item};

/* A text's plan, read where the session needs it. */
static qg_my_plan *plan_of(qg_my_plan *plan, const char *sql, size_t len)
{
    qg_my_plan_init(plan, sql, len);
    return plan;
}

static bool check(const qg_my_session *s, const char *sql, size_t len, qg_decision *d)
{
    qg_my_plan plan;
    return qg_my_session_check(s, NULL, NULL, "test", plan_of(&plan, sql, len), NULL, NULL, d);
}

static void queue(qg_my_session *s, const char *sql)
{
    qg_my_plan plan;
    qg_my_session_queued(s, plan_of(&plan, sql, strlen(sql)));
}

static void answer_ok(qg_my_session *s, unsigned flags, const char *sql)
{
    server_state.result_set = false;
    server_state.status = flags;
    qg_my_plan plan;
    qg_my_session_answered(s, &srv, NULL, plan_of(&plan, sql, strlen(sql)));
}

/* Texts sent before the answers to earlier ones are read. */
static void queued_texts(void)
{
    qg_my_session s = {0};
    server_state = (fake){.state = {.charset = "latin1"}, .thread = 9, .covered = true};
    qg_my_session_prepare(&s, &srv, NULL, NULL);
    static const char set_names[] = "SET NAMES gbk";
    queue(&s, set_names);
    tap_ok(s.unread == 1 && s.pending.count == 1 && strcmp(s.pending.states[0].charset, "gbk") == 0,
           "a queued SET NAMES gbk: gbk is among the states the next text may meet");
    /* bf 27 escaped byte-wise: gbk reads [bf 5c] and a quote that ends the literal */
    static const char attack[] = "SELECT 1 FROM t WHERE a = '\xbf\x5c' OR 1=1 -- '";
    size_t n = sizeof attack - 1;
    qg_decision d;
    tap_ok(!check(&s, attack, n, &d) && d.block &&
               strstr(d.message, "(gbk)"),
           "a text sent meanwhile is blocked under gbk, though the state is still latin1");
    unsigned asked = server_state.asked;
    s.stale = true;
    qg_my_session_prepare(&s, &srv, NULL, NULL);
    tap_ok(server_state.asked == asked,
           "while answers are unread the server is not asked (its answer would come after them)");
    s.stale = false;
    static const char immediate[] = "EXECUTE IMMEDIATE 'SET NAMES gbk'";
    queue(&s, immediate);
    tap_ok(s.unread == 2 && s.pending.unknown, "a queued EXECUTE IMMEDIATE: a state only the server knows");
    tap_ok(check(&s, "SELECT 1", 8, &d),
           "then text that reads alike in every state passes");
    tap_ok(!check(&s, attack, n, &d) &&
               strstr(d.message, "state_unknown"),
           "and other text is blocked with state_unknown");
    qg_my_session_read_done(&s, false);
    tap_ok(s.unread == 2, "an answer with more results to come ends no text");
    qg_my_session_read_done(&s, true);
    qg_my_session_read_done(&s, true);
    tap_ok(s.unread == 0 && s.pending.count == 0 && !s.pending.unknown,
           "once every text's last answer is read, the states go");
}

/* A check reads a text with the charset the last report gave: the same
 * bytes pass under latin1 and are blocked under gbk, in either order. */
static void reported_charset_read(void)
{
    /* bf 27 escaped byte-wise: gbk reads [bf 5c] and a quote that ends the literal */
    static const char attack[] = "SELECT 1 FROM t WHERE a = '\xbf\x5c' OR 1=1 -- '";
    static const char *const charsets[] = {"latin1", "gbk", "latin1"};
    qg_my_session s = {0};
    server_state = (fake){.state = {.charset = "latin1"}, .thread = 5, .covered = true};
    qg_my_session_prepare(&s, &srv, NULL, NULL);
    for (unsigned i = 0; i < sizeof charsets / sizeof charsets[0]; i++) {
        server_state.report[0] = "character_set_client";
        server_state.report[1] = charsets[i];
        answer_ok(&s, QG_MY_STATUS_SESSION_STATE_CHANGED, "SET NAMES x");
        qg_decision d;
        bool gbk = strcmp(charsets[i], "gbk") == 0;
        bool passed = check(&s, attack, sizeof attack - 1, &d);
        tap_ok(!s.stale && (gbk ? !passed && strstr(d.message, "(gbk)") : passed),
               "a reported change to %s: the text is read as %s reads it", charsets[i],
               charsets[i]);
    }
    memset(server_state.report, 0, sizeof server_state.report);
}

/* The plan the check is given goes on to the answer: a text of one
 * statement, which the check takes as one piece without reading it, is
 * read there; a text of several is read by the check, piece by piece. */
static void plan_from_check_to_answer(void)
{
    qg_my_session s = {0};
    server_state = (fake){.state = {.charset = "latin1"}, .thread = 11, .covered = true};
    qg_my_session_prepare(&s, &srv, NULL, NULL);
    static const char set_unscoped[] = "SET @@character_set_client = sjis";
    qg_my_plan plan;
    qg_decision d;
    bool passed = qg_my_session_check(&s, NULL, NULL, "test",
                                      plan_of(&plan, set_unscoped, sizeof set_unscoped - 1),
                                      NULL, NULL, &d);
    server_state.result_set = false;
    server_state.status = 0;
    qg_my_session_answered(&s, &srv, NULL, &plan);
    tap_ok(passed && s.stale && !qg_my_plan_inert(&plan),
           "one statement checked, then answered with the same plan: its SET @@name without a "
           "scope is read, stale");
    qg_my_session_prepare(&s, &srv, NULL, NULL);
    /* bf 27 escaped byte-wise: gbk reads [bf 5c] and a quote that ends the literal */
    static const char two[] = "SET NAMES gbk; SELECT 1 FROM t WHERE a = '\xbf\x5c' OR 1=1 -- '";
    size_t n = sizeof two - 1;
    tap_ok(!check(&s, two, n, &d) && d.block && strstr(d.message, "(gbk)"),
           "a text of several statements: the one after SET NAMES gbk is read as gbk");
    static const char lone[] = "SELECT 1 FROM t WHERE a = '\xbf\x5c' OR 1=1 -- '";
    tap_ok(check(&s, lone, sizeof lone - 1, &d), "the same statement alone is read as latin1");
}

/* An OK packet's text of one statement whose first word changes nothing
 * is read from that word alone: it hides nothing itself, and what the
 * texts sent before it whose answers are unread may hide stays. */
static void inert_text_answered(void)
{
    qg_my_session s = {0};
    server_state = (fake){.state = {.charset = "latin1"}, .thread = 13, .covered = true};
    qg_my_session_prepare(&s, &srv, NULL, NULL);
    answer_ok(&s, 0, "  update t SET c = @@character_set_client");
    tap_ok(!s.stale && !s.may_hide, "an UPDATE after spaces, in lower case: nothing hidden");
    answer_ok(&s, 0, "UPDATE t SET c = 1; SET @@character_set_client = sjis");
    tap_ok(s.stale, "an UPDATE with a ';' after it: the statements after are read, stale");
    qg_my_session_prepare(&s, &srv, NULL, NULL);
    answer_ok(&s, 0, "/* UPDATE */ SET @@character_set_client = sjis");
    tap_ok(s.stale, "a text that starts with a comment is read whole, stale");
    qg_my_session_prepare(&s, &srv, NULL, NULL);
    qg_my_plan call;
    qg_my_session_sending(&s, plan_of(&call, "CALL p()", 8));
    queue(&s, "CALL p()");
    answer_ok(&s, 0, "UPDATE t SET c = 1");
    tap_ok(s.may_hide && s.stale,
           "an UPDATE answered while a queued CALL's answer is unread: what the CALL may hide "
           "stays");
    qg_my_session_read_done(&s, true);
    qg_my_session_read_done(&s, true);
    answer_ok(&s, 0, "UPDATE t SET c = 1");
    tap_ok(!s.may_hide, "and goes once its answer is read");
}

int main(void)
{
    /* the settings the shim reads, whatever the machine has */
    setenv("QUOTEGUARD_CONFIG", "/dev/null", 1);
    setenv("QUOTEGUARD_MODE", "enforce", 1);
    setenv("QUOTEGUARD_LOG", "/dev/null", 1);
    qg_my_session s = {0};
    server_state = (fake){.state = {.charset = "latin1"}, .thread = 7};

    bool seen_new = qg_my_session_prepare(&s, &srv, NULL, NULL);
    tap_ok(seen_new && server_state.asked == 1 && server_state.tracking_requests == 1 &&
               s.tracked && !s.stale && strcmp(s.state.charset, "latin1") == 0,
           "first query: a session new to the shim, the state asked for and tracking requested");
    seen_new = qg_my_session_prepare(&s, &srv, NULL, NULL);
    tap_ok(!seen_new && server_state.asked == 1, "then nothing is asked before a query");
    static const char latin1_of_library[] = "latin1";
    s.lib_charset_alike = latin1_of_library;

    server_state.report[0] = "character_set_client";
    server_state.report[1] = "gbk";
    server_state.report[2] = "sql_mode";
    server_state.report[3] = "MYSQL40,NO_BACKSLASH_ESCAPES";
    answer_ok(&s, QG_MY_STATUS_SESSION_STATE_CHANGED | QG_MY_STATUS_NO_BACKSLASH_ESCAPES, "SET NAMES gbk, sql_mode = 'MYSQL40,NO_BACKSLASH_ESCAPES'");
    tap_ok(strcmp(s.state.charset, "gbk") == 0 && s.state.flags == QG_NO_BACKSLASH_ESCAPES &&
               !s.stale && !s.lib_charset_alike,
           "an OK packet's report is taken as it is, without asking; the library's name found "
           "equal to the old charset is forgotten");
    memset(server_state.report, 0, sizeof server_state.report);

    answer_ok(&s, QG_MY_STATUS_NO_BACKSLASH_ESCAPES, "INSERT INTO t VALUES (1)");
    tap_ok(!s.stale, "an OK packet without a report changes nothing");

    answer_ok(&s, QG_MY_STATUS_NO_BACKSLASH_ESCAPES,
              "UPDATE t SET c = CONCAT(@@character_set_client, @@session_track_system_variables)");
    tap_ok(!s.stale, "an UPDATE that reads @@name and the tracked list: nothing to ask");

    answer_ok(&s, QG_MY_STATUS_NO_BACKSLASH_ESCAPES, "SET @@character_set_client = sjis");
    tap_ok(s.stale, "SET @@name without a scope (never reported): stale");
    server_state.state = (qg_my_state){.charset = "sjis", .flags = QG_NO_BACKSLASH_ESCAPES};
    qg_my_session_prepare(&s, &srv, NULL, NULL);
    tap_ok(server_state.asked == 2 && !s.stale && strcmp(s.state.charset, "sjis") == 0,
           "and asked for before the next check");

    answer_ok(&s, 0, "DO 1");
    tap_ok(s.stale, "quoting status bits that change to other than the state holds: stale");
    server_state.state.flags = 0;
    qg_my_session_prepare(&s, &srv, NULL, NULL);

    server_state.result_set = true;
    server_state.status = 0;
    qg_my_plan select_f;
    qg_my_session_answered(&s, &srv, NULL, plan_of(&select_f, "SELECT f()", 10));
    tap_ok(s.result_open && !s.stale, "a result set: its end is looked at later");
    server_state.status = QG_MY_STATUS_SESSION_STATE_CHANGED;
    qg_my_session_result_read(&s, &srv, NULL);
    tap_ok(s.stale, "a result set's end that says the state changed: stale");
    qg_my_session_prepare(&s, &srv, NULL, NULL);

    answer_ok(&s, 0, "SET session_track_system_variables = ''");
    server_state.covered = false;
    qg_my_session_prepare(&s, &srv, NULL, NULL);
    tap_ok(!s.tracked && server_state.tracking_requests == 1,
           "the program took sql_mode out of the report: untracked, not overridden");
    unsigned before = server_state.asked;
    answer_ok(&s, 0, "SELECT 1 FROM dual WHERE 0");
    qg_my_session_prepare(&s, &srv, NULL, NULL);
    tap_ok(server_state.asked == before + 1, "untracked: asked before every check");
    answer_ok(&s, 0, "SELECT 1 FROM dual WHERE 0");
    qg_my_plan alike;
    qg_my_session_prepare(&s, &srv, NULL, plan_of(&alike, "SELECT ROW_COUNT()", 18));
    qg_decision d;
    tap_ok(server_state.asked == before + 1 && s.stale && check(&s, "SELECT ROW_COUNT()", 18, &d),
           "untracked, a text that reads alike in every state: not asked, passes");
    tap_ok(!check(&s, "SELECT 'a", 9, &d) && strstr(d.message, "unterminated"),
           "and is checked all the same, under the last state known");
    qg_my_plan unalike;
    qg_my_session_prepare(&s, &srv, NULL, plan_of(&unalike, "SELECT 'a\\b'", 12));
    tap_ok(server_state.asked == before + 2 && !s.stale,
           "a text with a backslash: asked for before its check");

    server_state.thread = 8;
    server_state.covered = false;
    seen_new = qg_my_session_prepare(&s, &srv, NULL, NULL);
    tap_ok(seen_new && server_state.tracking_requests == 2 && s.tracked,
           "a new server thread (reconnect): a session new to the shim, tracking requested again");

    server_state.ask_fails = true;
    qg_my_session_renew(&s);
    qg_my_session_prepare(&s, &srv, NULL, NULL);
    tap_ok(s.stale, "a question that fails leaves the state stale");
    tap_ok(!check(&s, "SELECT '\\\\'", 11, &d) && d.block &&
               strstr(d.message, "state_unknown"),
           "and a stale state blocks a text with a backslash with state_unknown (enforce, the "
           "default)");
    queued_texts();
    reported_charset_read();
    plan_from_check_to_answer();
    inert_text_answered();
    return tap_done();
}
