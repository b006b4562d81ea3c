/*
 * qg_rewrite_query on queries that pass qg_check: no crash; measuring first
 * and then rewriting into buffers of exactly the measured sizes succeeds with
 * the same sizes, one byte less says NO_ROOM; the text is terminated, keeps
 * its newlines where they were (single-byte encodings: byte for byte) and
 * passes qg_check itself; every value is terminated, lies inside `values`
 * and is valid in the client encoding; the reference implementation writes
 * the same.
 * Input: encoding selector (PostgreSQL encodings), flags byte, options byte,
 * then the query.
 */
#include "fuzz_common.h"
#include "lexer_internal.h"
#include "rewriter.h"

static bool valid_in(const qg_encoding *enc, const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t len = qg_encoding_char_len(enc, (const unsigned char *)s + i, n - i);
        if (len == 0)
            return false;
        i += len;
    }
    return true;
}

static qg_rewrite_status rewrite_into(const qg_context *ctx, unsigned options, const char *sql,
                                      size_t len, size_t text_cap, size_t values_cap,
                                      size_t params_cap, qg_rewrite *rw, char **text,
                                      char **values, const char ***params)
{
    *text = text_cap ? malloc(text_cap) : NULL;
    *values = values_cap ? malloc(values_cap) : NULL;
    *params = params_cap ? malloc(params_cap * sizeof **params) : NULL;
    memset(rw, 0, sizeof *rw);
    rw->text = *text;
    rw->text_cap = text_cap;
    rw->values = *values;
    rw->values_cap = values_cap;
    rw->params = *params;
    rw->params_cap = params_cap;
    return qg_rewrite_query(ctx, options, sql, len, rw);
}

static void release(char *text, char *values, const char **params)
{
    free(text);
    free(values);
    free(params);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    /* The table lists the PostgreSQL encodings first. */
    size_t pg_encodings = 0;
    while (pg_encodings < FUZZ_ENCODING_COUNT &&
           fuzz_encodings[pg_encodings].dialect == QG_DIALECT_POSTGRES)
        pg_encodings++;
    qg_dialect dialect;
    const qg_encoding *enc = fuzz_pick_encoding((uint8_t)(data[0] % pg_encodings), &dialect);
    const char *name = qg_encoding_name(enc);
    qg_context ctx;
    qg_context_init(&ctx, dialect, enc, data[1] & QG_STD_STRINGS);
    unsigned options = data[2] & (QG_REWRITE_SERVER_UTF8 | QG_REWRITE_PLAIN_AS_IS);
    size_t len = size - 3;
    char *sql = (char *)fuzz_exact_copy(data + 3, len);
    /* libpq sends C strings, so no NUL reaches the rewriter (fuzz_checker
     * checks that qg_check finds every NUL). */
    if (memchr(sql, 0, len) || qg_check(&ctx, sql, len, NULL) != QG_VERDICT_CLEAN) {
        free(sql);
        return 0;
    }

    qg_rewrite measure, rw;
    char *text, *values;
    const char **params;
    qg_rewrite_status first =
        rewrite_into(&ctx, options, sql, len, 0, 0, 0, &measure, &text, &values, &params);
    release(text, values, params);
    FUZZ_CHECK(first <= QG_REWRITE_NO_ROOM, "%s: status %d", name, first);
    if (first == QG_REWRITE_UNCHANGED) {
        FUZZ_CHECK(measure.why != NULL, "%s: unchanged without a reason", name);
        free(sql);
        return 0;
    }
    FUZZ_CHECK(measure.nparams <= QG_REWRITE_MAX_PARAMS, "%s: %zu parameters", name,
               measure.nparams);
    size_t text_cap = measure.text_len + 1, values_cap = measure.values_len;
    size_t params_cap = measure.nparams;

    qg_rewrite_status st = rewrite_into(&ctx, options, sql, len, text_cap, values_cap, params_cap,
                                        &rw, &text, &values, &params);
    FUZZ_CHECK(st == QG_REWRITE_DONE, "%s: measured buffers give status %d", name, st);
    FUZZ_CHECK(rw.text_len == measure.text_len && rw.values_len == measure.values_len &&
                   rw.nparams == measure.nparams,
               "%s: sizes change between measuring and rewriting", name);
    FUZZ_CHECK(text[rw.text_len] == '\0' && strlen(text) == rw.text_len,
               "%s: text not terminated at %zu", name, rw.text_len);
    size_t at = 0;
    for (size_t i = 0; i < rw.nparams; i++) {
        const char *v = params[i];
        FUZZ_CHECK(v >= values + at && v < values + rw.values_len,
                   "%s: parameter %zu outside the values buffer", name, i);
        size_t n = strnlen(v, (size_t)(values + rw.values_len - v));
        FUZZ_CHECK(v + n < values + rw.values_len, "%s: parameter %zu not terminated", name, i);
        FUZZ_CHECK(valid_in(enc, v, n), "%s: parameter %zu is not valid in the encoding", name, i);
        at = (size_t)(v - values) + n + 1;
    }
    if (qg_encoding_is_single_byte(enc)) {
        FUZZ_CHECK(rw.text_len == len, "%s: %zu bytes rewritten to %zu", name, len, rw.text_len);
        for (size_t i = 0; i < len; i++)
            FUZZ_CHECK((sql[i] == '\n') == (text[i] == '\n'), "%s: newline moved at %zu", name, i);
    }
    /* The reference implementation (the automaton counts every character
     * of the padding) writes the same. */
    qg_rewrite ref;
    char *ref_text, *ref_values;
    const char **ref_params;
    qg_allow_vectors(QG_VECTORS_REFERENCE);
    st = rewrite_into(&ctx, options, sql, len, text_cap, values_cap, params_cap, &ref, &ref_text,
                      &ref_values, &ref_params);
    qg_allow_vectors(QG_VECTORS_WIDEST);
    FUZZ_CHECK(st == QG_REWRITE_DONE && ref.text_len == rw.text_len &&
                   memcmp(ref_text, text, rw.text_len) == 0 && ref.values_len == rw.values_len &&
                   memcmp(ref_values, values, rw.values_len) == 0,
               "%s: the reference implementation rewrites otherwise", name);
    release(ref_text, ref_values, ref_params);
    /* The server's reading of the rewritten text is the original's minus the
     * literals; only the escaper's reading (structure_mismatch) may change,
     * since literals that kept it out of step are gone. */
    qg_result after;
    qg_check(&ctx, text, rw.text_len, &after);
    for (unsigned i = 0; i < after.count && i < QG_MAX_FINDINGS; i++)
        FUZZ_CHECK(after.findings[i].reason == QG_REASON_STRUCTURE_MISMATCH,
                   "%s: the rewritten text has a %s finding", name,
                   qg_reason_name(after.findings[i].reason));
    release(text, values, params);

    /* One byte (or entry) less anywhere is not enough room. */
    if (text_cap > 0) {
        st = rewrite_into(&ctx, options, sql, len, text_cap - 1, values_cap, params_cap, &rw,
                          &text, &values, &params);
        release(text, values, params);
        FUZZ_CHECK(st == QG_REWRITE_NO_ROOM, "%s: short text buffer gives %d", name, st);
    }
    if (values_cap > 0) {
        st = rewrite_into(&ctx, options, sql, len, text_cap, values_cap - 1, params_cap, &rw,
                          &text, &values, &params);
        release(text, values, params);
        FUZZ_CHECK(st == QG_REWRITE_NO_ROOM, "%s: short values buffer gives %d", name, st);
    }
    if (params_cap > 0) {
        st = rewrite_into(&ctx, options, sql, len, text_cap, values_cap, params_cap - 1, &rw,
                          &text, &values, &params);
        release(text, values, params);
        FUZZ_CHECK(st == QG_REWRITE_NO_ROOM, "%s: short params array gives %d", name, st);
    }
    free(sql);
    return 0;
}
