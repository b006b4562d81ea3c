/* The states a libpq connection's pipeline may leave (src/policy/pg_pipeline.c)
 * and the client encoding as the libpq front checks it
 * (src/core/pg_encoding.c). */
#include <string.h>

#include "encoding_tables.h"
#include "pg_encoding.h"
#include "pg_pipeline.h"
#include "tap.h"

static void pipeline(void)
{
    static int conn, other;
    qg_pg_pipeline *p = qg_pg_pipeline_of(&conn);
    tap_ok(p && p->pending.encoding_count == 0 && !p->prepared_sets_state,
           "a connection's entry starts empty");
    qg_pg_pending_add_reported(&p->pending, "UTF8", false);
    tap_ok(qg_pg_pipeline_of(&conn) == p && p->pending.encoding_count == 1,
           "the same connection finds its entry");
    qg_pg_pipeline_executes_prepared(&conn);
    tap_ok(!p->pending.encoding_unknown,
           "a prepared statement that sets nothing adds no state");
    qg_pg_pipeline_prepared(&other, "SELECT 1", 8);
    qg_pg_pipeline_prepared(&conn, "SET client_encoding TO 'SJIS'", 29);
    tap_ok(p->prepared_sets_state, "a prepared SET client_encoding is noted");
    qg_pg_pipeline_executes_prepared(&conn);
    tap_ok(p->pending.encoding_unknown && p->pending.scs_on && p->pending.scs_off,
           "executing it in the pipeline may set any state");
    qg_pg_pipeline_ended(&conn);
    p = qg_pg_pipeline_of(&conn);
    tap_ok(p && p->prepared_sets_state && p->pending.encoding_count == 0 &&
               !p->pending.encoding_unknown,
           "the pipeline's end forgets the states but keeps the prepared statement's note");
    qg_pg_pipeline_forget(&conn);
    p = qg_pg_pipeline_of(&conn);
    tap_ok(p && !p->prepared_sets_state, "a finished connection's note goes");
    qg_pg_pipeline_ended(&conn);
    qg_pg_pipeline_executes_prepared(&conn);
    tap_ok(qg_pg_pipeline_of(&conn)->pending.encoding_count == 0 &&
               !qg_pg_pipeline_of(&conn)->pending.encoding_unknown,
           "without a note the entry goes at the pipeline's end");
    qg_pg_pipeline_forget(&conn);
}

static unsigned names_asked;

static char *name_of(int id)
{
    static char sjis[] = "SJIS", utf8[] = "UTF8", euc_jp[] = "EUC_JP", odd[] = "NOT_AN_ENCODING";
    names_asked++;
    return id == 6 ? utf8 : id == 35 ? sjis : id == 39 ? euc_jp : odd;
}

static void checked(const char *client, const char *server, const char *want)
{
    qg_pg_client_encoding c = qg_pg_client_encoding_named(client);
    const char *got = c.server_decides ? qg_pg_checked_encoding(&c, server) : c.name;
    tap_ok(strcmp(got, want) == 0, "client %s, server %s: checked as %s (%s)", client, server,
           want, got);
}

static void encoding(void)
{
    checked("UTF8", "SQL_ASCII", "UTF8");
    checked("SJIS", "UTF8", "SJIS");
    checked("SJIS", "SQL_ASCII", QG_PG_ASCII_ONLY);
    checked("SQL_ASCII", "EUC_JP", "EUC_JP");
    checked("SQL_ASCII", "SQL_ASCII", "SQL_ASCII");
    checked("SQL_ASCII", "", "");
    qg_pg_client_encoding unknown = qg_pg_client_encoding_named("NOT_AN_ENCODING");
    tap_ok(!unknown.enc && !unknown.server_decides, "an unknown name has no encoding");

    qg_pg_client_encoding c;
    bool found = qg_pg_client_encoding_by_id(35, 1, name_of, &c);
    tap_ok(found && c.enc && strcmp(qg_encoding_name(c.enc), "SJIS") == 0 && c.server_decides,
           "libpq's number is looked up by its name");
    unsigned asked = names_asked;
    found = qg_pg_client_encoding_by_id(35, 1, name_of, &c);
    tap_ok(found && strcmp(c.name, "SJIS") == 0 && c.server_decides && names_asked == asked,
           "then kept: the name is not asked again");
    found = qg_pg_client_encoding_by_id(35, 2, name_of, &c);
    tap_ok(found && names_asked == asked + 1, "a new generation asks again");
    found = qg_pg_client_encoding_by_id(6, 2, name_of, &c);
    tap_ok(found && !c.server_decides && !c.converts_to_ascii && strcmp(c.name, "UTF8") == 0,
           "UTF8 is checked as itself");
    asked = names_asked;
    found = qg_pg_client_encoding_by_id(35, 2, name_of, &c);
    tap_ok(found && strcmp(c.name, "SJIS") == 0 && c.server_decides && names_asked == asked,
           "an earlier number is still kept after another one");
    found = qg_pg_client_encoding_by_id(39, 2, name_of, &c);
    tap_ok(found && strcmp(c.name, "EUC_JP") == 0 && !c.server_decides,
           "a number in the place of an earlier one's is its own");
    found = qg_pg_client_encoding_by_id(35, 2, name_of, &c);
    tap_ok(found && strcmp(c.name, "SJIS") == 0 && c.server_decides && names_asked == asked + 1,
           "and the earlier one is read from the table again, not from that place");
    tap_ok(!qg_pg_client_encoding_by_id(0, 2, name_of, &c) &&
               !qg_pg_client_encoding_by_id(64, 2, name_of, &c) &&
               !qg_pg_client_encoding_by_id(7, 2, name_of, &c),
           "SQL_ASCII's number, one out of range and an unknown name are not kept");
    qg_pg_client_encoding sjis2004 = qg_pg_client_encoding_named("SHIFT_JIS_2004");
    tap_ok(sjis2004.converts_to_ascii && sjis2004.server_decides,
           "SHIFT_JIS_2004's conversion may make ASCII");
}

int main(void)
{
    pipeline();
    encoding();
    return tap_done();
}
