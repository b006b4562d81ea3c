/* What a blocked PostgreSQL statement leaves behind (src/policy/pg_blocked.c):
 * the registry the error readers answer from, and the statement sent in a
 * pipeline in place of a blocked one; and the rewrite mode's memory
 * (src/policy/pg_rewrite.c). */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "pg_blocked.h"
#include "pg_rewrite.h"
#include "tap.h"

static qg_decision decision(const char *sqlstate, const char *message)
{
    qg_decision d = {.block = true, .sqlstate = sqlstate};
    strncpy(d.message, message, sizeof d.message - 1);
    return d;
}

static void registry(void)
{
    static qg_pg_registry r = QG_PG_REGISTRY_INIT;
    static int a, b;
    tap_ok(qg_pg_registry_find(&r, &a) == NULL, "an empty registry finds nothing");
    qg_decision d = decision("22021", "quoteguard: blocked invalid_sequence");
    qg_pg_registry_put(&r, &a, &d);
    const qg_pg_blocked *m = qg_pg_registry_find(&r, &a);
    tap_ok(m && strcmp(m->primary, d.message) == 0 && strcmp(m->sqlstate, "22021") == 0,
           "the message and sqlstate are kept for their key");
    tap_ok(m && strcmp(m->text, "ERROR:  quoteguard: blocked invalid_sequence\n") == 0,
           "the text reads as libpq words a server's error: severity, message, newline");
    tap_ok(m && strcmp(m->verbose, "ERROR:  22021: quoteguard: blocked invalid_sequence\n") == 0,
           "the verbose text carries the SQLSTATE after the severity, as libpq's does");
    tap_ok(qg_pg_registry_find(&r, &b) == NULL, "another key finds nothing");
    qg_decision later = decision(NULL, "quoteguard: blocked structure_mismatch");
    qg_pg_registry_put(&r, &a, &later);
    m = qg_pg_registry_find(&r, &a);
    tap_ok(m && strcmp(m->primary, later.message) == 0 && strcmp(m->sqlstate, "42000") == 0,
           "a later block replaces the message; no sqlstate is 42000");
    qg_pg_registry_put(&r, &b, &d);
    qg_pg_registry_drop(&r, &a);
    tap_ok(qg_pg_registry_find(&r, &a) == NULL && qg_pg_registry_find(&r, &b) != NULL,
           "dropping a key leaves the others");
    qg_pg_registry_drop(&r, &b);
    tap_ok(qg_conn_map_empty(&r), "dropping every key empties it");
}

static void failing_statement(void)
{
    char out[QG_PG_FAILING_STATEMENT_MAX];
    qg_decision d = decision("22021", "quoteguard: it's \\ $x% \x81");
    qg_pg_failing_statement(out, sizeof out, &d);
    tap_ok(strcmp(out, "DO $quoteguard$BEGIN RAISE EXCEPTION USING MESSAGE = "
                       "'quoteguard: it\"s \" ?x% ?', ERRCODE = '22021'; END$quoteguard$") == 0,
           "the failing statement carries the message without quotes, backslashes, dollar "
           "signs or non-ASCII bytes: %s", out);
    d = decision("22021", "quoteguard: $quoteguard$; SELECT 1; --");
    qg_pg_failing_statement(out, sizeof out, &d);
    const char *body = strstr(out, "$quoteguard$");
    tap_ok(body && strstr(body + 1, "$quoteguard$") == strstr(out, "END$quoteguard$") + 3,
           "a dollar quote in the message cannot end the DO block's: %s", out);
    d = decision(NULL, "quoteguard: blocked");
    qg_pg_failing_statement(out, sizeof out, &d);
    tap_ok(strstr(out, "ERRCODE = '42000'") != NULL, "no sqlstate fails with 42000");
    memset(d.message, 'a', sizeof d.message - 1);
    d.message[sizeof d.message - 1] = '\0';
    qg_pg_failing_statement(out, sizeof out, &d);
    tap_ok(strlen(out) < sizeof out && strstr(out, "END$quoteguard$") != NULL,
           "the longest message fits");
}

static const char *utf8_server(const void *conn)
{
    (void)conn;
    return "UTF8";
}

static void rewrite(void)
{
    qg_settings s;
    qg_settings_defaults(&s);
    s.mode = QG_MODE_REWRITE;
    s.verbosity = 0;
    qg_query q = {.dialect = QG_DIALECT_POSTGRES, .encoding_name = "UTF8",
                  .flags = QG_STD_STRINGS, .api = "PQexec"};
    q.sql = "SELECT * FROM t WHERE a = 'plain'";
    q.len = strlen(q.sql);
    qg_pg_rewritten rw;
    tap_ok(!qg_pg_rewrite(&s, &q, utf8_server, &rw), "plain text goes as it is by default");
    q.sql = "SELECT * FROM t WHERE a = 'caf\xc3\xa9'";
    q.len = strlen(q.sql);
    bool done = qg_pg_rewrite(&s, &q, utf8_server, &rw);
    tap_ok(done && rw.nparams == 1 && strcmp(rw.params[0], "caf\xc3\xa9") == 0 &&
               strncmp(rw.text, "SELECT * FROM t WHERE a = $1", 28) == 0,
           "a literal that is not plain text becomes a parameter, in the local block");
    tap_ok(done && rw.block == rw.local, "a short query allocates nothing");
    if (done)
        qg_pg_rewritten_release(&rw);
    size_t n = 3000;
    char *long_sql = malloc(n + 40);
    strcpy(long_sql, "SELECT 1 WHERE a = '\xc3\xa9");
    size_t head = strlen(long_sql);
    memset(long_sql + head, 'x', n);
    strcpy(long_sql + head + n, "'");
    q.sql = long_sql;
    q.len = strlen(long_sql);
    done = qg_pg_rewrite(&s, &q, utf8_server, &rw);
    tap_ok(done && rw.block != rw.local && rw.nparams == 1 && strlen(rw.params[0]) == n + 2,
           "a long query takes memory of its own");
    if (done)
        qg_pg_rewritten_release(&rw);
    free(long_sql);
    q.encoding_name = "no such encoding";
    q.sql = "SELECT 'caf\xc3\xa9'";
    q.len = strlen(q.sql);
    tap_ok(!qg_pg_rewrite(&s, &q, utf8_server, &rw), "an unknown encoding is not rewritten");
}

int main(void)
{
    registry();
    failing_statement();
    rewrite();
    return tap_done();
}
