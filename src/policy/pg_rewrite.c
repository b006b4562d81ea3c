/* Rewrite mode's memory and log for the libpq front (pg_rewrite.h). */
#include "pg_rewrite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encoding_tables.h"
#include "log.h"
#include "rewriter.h"

void qg_pg_rewritten_release(qg_pg_rewritten *rw)
{
    if (rw->block != rw->local)
        free(rw->block);
}

/* Rewrites q into one block of the largest possible size: the text keeps
 * its length or shrinks, values are no longer than their literals, and
 * every parameter takes a literal of at least two bytes.  NULL *why: no
 * memory (the query passed the check: it may go as it is). */
static bool rewrite_into(const qg_context *ctx, unsigned options, const qg_query *q,
                         qg_pg_rewritten *rw, qg_rewrite *out, const char **why)
{
    size_t len = q->len;
    size_t max_params = len / 2 + 1 < QG_REWRITE_MAX_PARAMS ? len / 2 + 1 : QG_REWRITE_MAX_PARAMS;
    size_t params_bytes = max_params * sizeof(const char *);
    size_t need = params_bytes + 2 * (len + 1);
    char *block = need <= sizeof rw->local ? rw->local : malloc(need);
    *why = NULL;
    if (!block)
        return false;
    *out = (qg_rewrite){
        .params = (const char **)(void *)block,
        .params_cap = max_params,
        .text = block + params_bytes,
        .text_cap = len + 1,
        .values = block + params_bytes + len + 1,
        .values_cap = len + 1,
    };
    rw->block = block;
    if (qg_rewrite_query(ctx, options, q->sql, len, out) == QG_REWRITE_DONE) {
        rw->text = out->text;
        rw->params = out->params;
        rw->nparams = (int)out->nparams;
        return true;
    }
    qg_pg_rewritten_release(rw);
    *why = out->why ? out->why : "more parameters than fit";
    return false;
}

bool qg_pg_rewrite(const qg_settings *s, const qg_query *q,
                   qg_pg_server_encoding_fn server_encoding, qg_pg_rewritten *rw)
{
    char detail[QG_LOG_LINE_MAX / 2];
    unsigned options = s->rewrite_all ? 0 : QG_REWRITE_PLAIN_AS_IS;
    const char *why = qg_rewrite_skip_reason(q->sql, q->len, options);
    if (!why) {
        const qg_encoding *enc = qg_encoding_find(QG_DIALECT_POSTGRES, q->encoding_name);
        const char *server = enc ? server_encoding(q->conn) : "";
        /* The rewriter decodes literals in the client encoding; where the
         * conversion makes ASCII of some character the server decodes
         * another text. */
        if (!enc || (qg_encoding_converts_to_ascii(enc) && qg_conversion_to_ascii(enc, server)))
            return false;
        qg_context ctx;
        qg_context_init(&ctx, QG_DIALECT_POSTGRES, enc, q->flags);
        if (strcmp(server, "UTF8") == 0)
            options |= QG_REWRITE_SERVER_UTF8;
        qg_rewrite out;
        if (rewrite_into(&ctx, options, q, rw, &out, &why)) {
            if (s->verbosity >= 2) {
                /* The rewritten text holds no literal values, only $n. */
                snprintf(detail, sizeof detail, "%s: %zu parameters: %s", q->api, out.nparams,
                         out.text);
                qg_log_write_event(s, "debug", "rewritten", detail);
            }
            return true;
        }
        if (!why)
            return false;
    }
    if (s->verbosity >= 2) {
        snprintf(detail, sizeof detail, "%s: sent as it is: %s", q->api, why);
        qg_log_write_event(s, "debug", "rewrite_skipped", detail);
    }
    return false;
}
