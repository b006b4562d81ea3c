/* The libpq front's check of one query (src/policy/pg_check.c): the encoding the
 * server checks the text against, the text as the server reads it after
 * its conversion, and a pipeline's queued states. */
#include <stdlib.h>
#include <string.h>

#include "pg_check.h"
#include "pg_pipeline.h"
#include "tap.h"

static const char *server = "UTF8";

static const char *server_encoding(const void *conn)
{
    (void)conn;
    return server;
}

static qg_query query(const void *conn, const char *sql, unsigned flags)
{
    return (qg_query){.dialect = QG_DIALECT_POSTGRES, .flags = flags, .conn = conn,
                      .api = "test", .sql = sql, .len = strlen(sql)};
}

static bool allowed(const char *client, const char *server_name, const char *sql,
                    qg_decision *d)
{
    static int conn;
    server = server_name;
    qg_query q = query(&conn, sql, 0);
    qg_pg_client_encoding c = qg_pg_client_encoding_named(client);
    bool converts = qg_pg_set_checked_encoding(&q, &c, server_encoding);
    return qg_pg_check_converted(qg_settings_get(), &q, converts, server_encoding, d);
}

int main(void)
{
    setenv("QUOTEGUARD_CONFIG", "/dev/null", 1);
    setenv("QUOTEGUARD_LOG", "/dev/null", 1);
    setenv("QUOTEGUARD_MODE", "enforce", 1);
    static int conn;
    qg_decision d;

    qg_query q = query(&conn, "SELECT 1", 0);
    qg_pg_client_encoding c = qg_pg_client_encoding_named("SJIS");
    server = "UTF8";
    tap_ok(!qg_pg_set_checked_encoding(&q, &c, server_encoding) &&
               strcmp(q.encoding_name, "SJIS") == 0,
           "SJIS to a UTF8 server is checked as SJIS, without a view");
    c = qg_pg_client_encoding_named("UTF8");
    tap_ok(!qg_pg_set_checked_encoding(&q, &c, server_encoding) && q.encoding == c.enc &&
               strcmp(q.encoding_name, "UTF8") == 0,
           "UTF8 goes to the guard with its table");
    c = qg_pg_client_encoding_named("SQL_ASCII");
    server = "EUC_JP";
    qg_pg_set_checked_encoding(&q, &c, server_encoding);
    tap_ok(q.encoding == qg_encoding_find(QG_DIALECT_POSTGRES, "EUC_JP") && q.encoding &&
               strcmp(q.encoding_name, "EUC_JP") == 0,
           "a SQL_ASCII client's text is checked in the server encoding, with its table");

    /* 81 5f is one SHIFT_JIS_2004 character, before a quote an escaper
     * doubled; a UTF8 server reads a backslash there, which escapes the
     * first quote, and the second closes the string. */
    const char *attack = "SELECT 'a\x81\x5f'' OR 1=1 --'";
    tap_ok(allowed("SHIFT_JIS_2004", "EUC_JP", attack, &d),
           "SHIFT_JIS_2004 text a EUC_JP server reads as sent passes");
    tap_ok(!allowed("SHIFT_JIS_2004", "UTF8", attack, &d) && d.block,
           "the same text is blocked where the UTF8 server's conversion makes a backslash: %s",
           d.message);
    tap_ok(!allowed("SHIFT_JIS_2004", "", attack, &d) &&
               strstr(d.message, "unknown client encoding") != NULL,
           "without a server encoding the conversion is not guessed: %s", d.message);
    tap_ok(allowed("SHIFT_JIS_2004", "UTF8", "SELECT 'a\x81\x40'", &d),
           "a character the conversion keeps passes");

    server = "UTF8";
    c = qg_pg_client_encoding_named("UTF8");
    q = query(&conn, "SET client_encoding TO 'SJIS'", QG_STD_STRINGS);
    qg_pg_set_checked_encoding(&q, &c, server_encoding);
    tap_ok(qg_pg_check_in_pipeline(&q, false, server_encoding, &d),
           "a clean statement in a pipeline passes");
    const qg_pg_pending *pending = &qg_pg_pipeline_of(&conn)->pending;
    tap_ok(pending->encoding_count == 2 && strcmp(pending->encodings[1], "SJIS") == 0,
           "and the encoding it sets is queued for the statements after it");
    q = query(&conn, "SELECT '\x95\x5c' OR 1=1 --'", QG_STD_STRINGS);
    qg_pg_set_checked_encoding(&q, &c, server_encoding);
    tap_ok(!qg_pg_check_in_pipeline(&q, false, server_encoding, &d) && d.block,
           "a text valid in UTF8 but an attack in the queued SJIS is blocked: %s", d.message);
    qg_pg_pipeline_of(&conn)->pending.encoding_unknown = true;
    q = query(&conn, "SELECT 1", QG_STD_STRINGS);
    qg_pg_set_checked_encoding(&q, &c, server_encoding);
    tap_ok(!qg_pg_check_in_pipeline(&q, false, server_encoding, &d) &&
               strstr(d.message, "set in the pipeline") != NULL,
           "after a statement that sets an encoding not known in advance, nothing passes: %s",
           d.message);
    qg_pg_pipeline_forget(&conn);
    return tap_done();
}
