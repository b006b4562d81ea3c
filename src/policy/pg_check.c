/* The libpq front's check of one query (pg_check.h). */
#include "pg_check.h"

#include <stdlib.h>

#include "encoding_tables.h"
#include "hot.h"
#include "pg_pipeline.h"

bool qg_pg_set_server_decided_encoding(qg_query *q, const qg_pg_client_encoding *c,
                                       qg_pg_server_encoding_fn server_encoding)
{
    q->encoding_name = qg_pg_checked_encoding(c, server_encoding(q->conn));
    if (q->encoding_name == c->name) {
        q->encoding = c->enc;
        return c->converts_to_ascii;
    }
    q->encoding = qg_encoding_find(QG_DIALECT_POSTGRES, q->encoding_name); /* NULL: unknown */
    return q->encoding && qg_encoding_converts_to_ascii(q->encoding);
}

bool qg_pg_check_conversion(qg_query *q, qg_pg_server_encoding_fn server_encoding,
                            qg_decision *d)
{
    const char *server = server_encoding(q->conn);
    if (!*server) {
        /* Which conversion the server runs is not known: not guessed. */
        q->encoding = NULL;
        q->encoding_name = "(no server_encoding reported to read the conversion by)";
        return qg_guard_query(q, d);
    }
    const qg_encoding *enc =
        q->encoding ? q->encoding : qg_encoding_find(QG_DIALECT_POSTGRES, q->encoding_name);
    const qg_ascii_conversion *table = qg_conversion_to_ascii(enc, server);
    size_t count = table ? qg_server_view_count(enc, table, q->sql, q->len) : 0;
    if (count == 0)
        return qg_guard_query(q, d);
    char *text = malloc(q->len + 1);
    qg_converted_char *chars = malloc(count * sizeof *chars);
    bool allowed = false;
    if (text && chars) {
        qg_server_view view;
        qg_server_view_build(enc, table, q->sql, q->len, text, chars, &view);
        q->view = &view;
        allowed = qg_guard_query(q, d);
        q->view = NULL;
    } else {
        /* Not read as the server reads it, so not sent. */
        q->encoding = NULL;
        q->encoding_name = "(no memory for the converted text)";
        allowed = qg_guard_query(q, d);
    }
    free(text);
    free(chars);
    return allowed;
}

/* The name a query is checked under when its client encoding is not known
 * when it is written (a statement queued before it sets a value not known
 * in advance, or the server has not named it yet): the guard blocks it as
 * an unknown encoding. */
static const char unknown_pipeline_encoding[] = "not yet known: set in the pipeline or not reported yet";

bool qg_pg_check_states(const qg_query *described, qg_pg_server_encoding_fn server_encoding,
                        const qg_pg_pending *states, qg_decision *d)
{
    const qg_settings *s = qg_settings_get();
    qg_query q = *described;
    bool allowed = true;
    for (unsigned scs = 0; allowed && scs < 2; scs++) {
        if (!(scs ? states->scs_on : states->scs_off))
            continue;
        q.flags = scs ? QG_STD_STRINGS : 0;
        for (unsigned i = 0; allowed && i < states->encoding_count; i++) {
            qg_pg_client_encoding queued = qg_pg_client_encoding_named(states->encodings[i]);
            bool queued_converts = qg_pg_set_checked_encoding(&q, &queued, server_encoding);
            allowed = qg_pg_check_converted(s, &q, queued_converts, server_encoding, d);
        }
        if (allowed && states->encoding_unknown) {
            q.encoding = NULL;
            q.encoding_name = unknown_pipeline_encoding;
            allowed = qg_pg_check_converted(s, &q, false, server_encoding, d);
        }
    }
    return allowed;
}

bool qg_pg_check_in_pipeline(const qg_query *described, bool converts,
                             qg_pg_server_encoding_fn server_encoding, qg_decision *d)
{
    qg_query q = *described;
    qg_pg_pipeline *p = qg_pg_pipeline_of(q.conn);
    if (!p) {
        q.encoding = NULL;
        q.encoding_name = "(no memory for the pipeline's states)";
        return qg_pg_check_converted(qg_settings_get(), &q, converts, server_encoding, d);
    }
    qg_pg_pending_add_reported(&p->pending, described->encoding_name,
                               described->flags & QG_STD_STRINGS);
    bool allowed = qg_pg_check_states(&q, server_encoding, &p->pending, d);
    if (allowed) {
        qg_pg_effect effect = qg_pg_statement_effect(q.sql, q.len);
        qg_pg_pending_add_effect(&p->pending, &effect);
    }
    return allowed;
}

QG_HOT void qg_pg_note_unread(const qg_query *q, qg_pg_quoting_fn quoting)
{
    qg_pg_effect effect = qg_pg_statement_effect(q->sql, q->len);
    if (effect.encoding == QG_PG_KEEPS && effect.scs == QG_PG_KEEPS)
        return;
    qg_pg_pipeline *p = qg_pg_pipeline_of(q->conn);
    if (!p)
        return; /* no memory: the next check with results unread refuses */
    qg_pg_pending_add_reported(&p->pending, q->encoding_name, quoting(q->conn) & QG_STD_STRINGS);
    qg_pg_pending_add_effect(&p->pending, &effect);
}
