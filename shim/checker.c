/*
 * The detection rule (docs/DETECTION.md).  Pass 1 reads the query as the
 * server will (S) and collects encoding findings and unterminated tokens.
 * Only when S saw something a byte-wise reader could take differently (a
 * multibyte character with an ASCII trail byte, a backslash that S does not
 * treat as an escape) does pass 2 run S and N side by side: if N is well
 * formed but parts where S does not, a byte-wise escaper was fooled.
 */
#include <string.h>

#include "quoteguard.h"

static const char *const reason_names[QG_REASON_COUNT] = {
    [QG_REASON_NONE] = "none",
    [QG_REASON_INVALID_SEQUENCE] = "invalid_sequence",
    [QG_REASON_STRUCTURE_MISMATCH] = "structure_mismatch",
    [QG_REASON_UNTERMINATED] = "unterminated",
    [QG_REASON_NUL_BYTE] = "nul_byte",
    [QG_REASON_ILLFORMED_QUOTE] = "illformed_before_quote",
    [QG_REASON_ILLFORMED] = "illformed_sequence",
};

const char *qg_reason_name(qg_reason reason)
{
    return (unsigned)reason < QG_REASON_COUNT ? reason_names[reason] : "unknown";
}

void qg_context_init(qg_context *ctx, qg_dialect dialect, const qg_encoding *enc, unsigned flags)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->dialect = dialect;
    ctx->encoding = enc;
    ctx->flags = flags;
    for (int r = 1; r < QG_REASON_COUNT; r++)
        ctx->action[r] = QG_ACTION_BLOCK;
    ctx->action[QG_REASON_ILLFORMED] = QG_ACTION_LOG;
}

static void record(qg_result *res, const qg_context *ctx, qg_reason reason, size_t offset,
                   size_t span_start, size_t span_end)
{
    qg_action action = ctx->action[reason];
    if (action == QG_ACTION_IGNORE)
        return;
    if (res->count < QG_MAX_FINDINGS)
        res->findings[res->count] = (qg_finding){reason, action, offset, span_start, span_end};
    res->count++;
    if (action == QG_ACTION_BLOCK)
        res->verdict = QG_VERDICT_BLOCK;
    else if (res->verdict == QG_VERDICT_CLEAN)
        res->verdict = QG_VERDICT_LOG;
}

static bool same_token(const qg_token *a, const qg_token *b)
{
    return a->kind == b->kind && a->start == b->start && a->end == b->end &&
           a->unterminated == b->unterminated;
}

/* Pass 2.  Returns true when N is well formed and its token boundaries
 * differ from S's; *offset is the first byte the readings take differently
 * (e.g. the quote that one of them takes as closing). */
static bool naive_reading_parts(const qg_context *ctx, const char *sql, size_t len,
                                size_t *offset, size_t *span_start, size_t *span_end)
{
    qg_lexer server, naive;
    qg_token ts, tn;
    bool parted = false;
    qg_lexer_init(&server, ctx, sql, len, QG_READ_SERVER, NULL);
    qg_lexer_init(&naive, ctx, sql, len, QG_READ_NAIVE, NULL);
    for (;;) {
        bool has_s = !parted && qg_lexer_next(&server, &ts);
        bool has_n = qg_lexer_next(&naive, &tn);
        if (has_n && tn.unterminated)
            return false; /* the escaper's own reading is broken: not its output */
        if (!parted && (has_s != has_n || (has_s && !same_token(&ts, &tn)))) {
            parted = true;
            if (!has_s) {
                *offset = tn.start;
                *span_start = *span_end = tn.start;
            } else {
                bool starts_differ = !has_n || ts.start != tn.start;
                *offset = starts_differ ? (has_n && tn.start < ts.start ? tn.start : ts.start)
                                        : (ts.end < tn.end ? ts.end : tn.end) - 1;
                *span_start = ts.start;
                *span_end = ts.end;
            }
        }
        if (!has_n && (parted || !has_s))
            return parted;
    }
}

qg_verdict qg_check(const qg_context *ctx, const char *sql, size_t len, qg_result *result)
{
    qg_result local = {.verdict = QG_VERDICT_CLEAN};
    qg_result *res = result ? result : &local;
    res->verdict = QG_VERDICT_CLEAN;
    res->count = 0;

    qg_lexer lx;
    qg_token tok;
    qg_lexer_init(&lx, ctx, sql, len, QG_READ_SERVER, res);
    while (qg_lexer_next(&lx, &tok))
        if (tok.unterminated)
            record(res, ctx, QG_REASON_UNTERMINATED, tok.start, tok.start, tok.end);

    if (lx.diverges && res->verdict != QG_VERDICT_BLOCK) {
        size_t offset = 0, span_start = 0, span_end = 0;
        if (naive_reading_parts(ctx, sql, len, &offset, &span_start, &span_end))
            record(res, ctx, QG_REASON_STRUCTURE_MISMATCH, offset, span_start, span_end);
    }
    return res->verdict;
}
