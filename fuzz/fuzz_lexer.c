/*
 * The lexer in both dialects, every encoding, every flag combination, both
 * readings.  Input: encoding selector byte, flags byte, then the query.
 * Invariants: tokens come in order, never overlap, lie inside the query, are
 * never empty, have the delimiters their kind promises; the token stream does
 * not depend on whether findings are collected; in both readings an
 * ASCII-safe encoding lexes valid text like a single-byte one (except where
 * the server rejects the text, see number_junk_before_dollar, and where
 * MySQL's sets differ on what a space is, see dash_space_differs).  Query
 * shapes, which split the code between the tokens into words: the same
 * shape whether a sample is asked for or not, the sample a string that fits.
 */
#include "fuzz_common.h"

#include "encoding_tables.h"
#include "shape.h"

#define MAX_TOKENS 4096

typedef struct token_list {
    qg_token tok[MAX_TOKENS];
    size_t count;     /* tokens kept (at most MAX_TOKENS) */
    size_t total;     /* tokens seen */
    qg_result result; /* findings collected while lexing */
} token_list;

static bool starts_with(const unsigned char *s, size_t len, size_t at, const char *want)
{
    size_t n = strlen(want);
    return at + n <= len && memcmp(s + at, want, n) == 0;
}

static void check_token(const qg_context *ctx, const unsigned char *s, size_t len,
                        const qg_token *t, size_t prev_end, qg_reading reading)
{
    const char *enc = qg_encoding_name(ctx->encoding);
    FUZZ_CHECK(t->start >= prev_end, "%s/%u/%d: token at %zu overlaps the previous (end %zu)",
               enc, ctx->flags, reading, t->start, prev_end);
    FUZZ_CHECK(t->start < t->end, "%s: empty token [%zu,%zu)", enc, t->start, t->end);
    FUZZ_CHECK(t->end <= len, "%s: token end %zu past the query (%zu)", enc, t->end, len);
    if (t->unterminated)
        FUZZ_CHECK(t->end == len, "%s: unterminated token ends at %zu of %zu", enc, t->end, len);
    unsigned char first = s[t->start], last = s[t->end - 1];
    switch (t->kind) {
    case QG_TOK_STRING:
        FUZZ_CHECK(first == '\'' || first == '"' || strchr("eEnNbBxXuU", first) != NULL,
                   "%s: string starts with %02x at %zu", enc, first, t->start);
        if (!t->unterminated)
            FUZZ_CHECK(t->end - t->start >= 2 && last == (t->form == QG_FORM_DOUBLE ? '"' : '\''),
                       "%s: string [%zu,%zu) ends with %02x", enc, t->start, t->end, last);
        break;
    case QG_TOK_IDENT:
        FUZZ_CHECK(first == '"' || first == '`' || first == 'u' || first == 'U',
                   "%s: identifier starts with %02x", enc, first);
        if (!t->unterminated)
            FUZZ_CHECK(t->end - t->start >= 2 && (last == '"' || last == '`'),
                       "%s: identifier [%zu,%zu) ends with %02x", enc, t->start, t->end, last);
        break;
    case QG_TOK_DOLLAR:
        FUZZ_CHECK(ctx->dialect == QG_DIALECT_POSTGRES, "dollar quote in MySQL");
        FUZZ_CHECK(first == '$', "%s: dollar quote starts with %02x", enc, first);
        if (!t->unterminated)
            FUZZ_CHECK(t->end - t->start >= 4 && last == '$', "%s: dollar quote [%zu,%zu)", enc,
                       t->start, t->end);
        break;
    case QG_TOK_COMMENT:
        if (starts_with(s, len, t->start, "/*")) {
            if (!t->unterminated)
                FUZZ_CHECK(t->end - t->start >= 4 && s[t->end - 2] == '*' && last == '/',
                           "%s: block comment [%zu,%zu) does not end with */", enc, t->start,
                           t->end);
        } else {
            FUZZ_CHECK(starts_with(s, len, t->start, "--") || first == '#',
                       "%s: comment starts with %02x", enc, first);
            FUZZ_CHECK(!t->unterminated, "%s: line comment marked unterminated", enc);
            FUZZ_CHECK(t->end == len || s[t->end] == '\n' || s[t->end] == '\r',
                       "%s: line comment ends at %zu before %02x", enc, t->end, s[t->end]);
        }
        break;
    default:
        FUZZ_CHECK(0, "%s: token kind %d", enc, (int)t->kind);
    }
}

static void check_findings(const qg_result *r, size_t len)
{
    size_t kept = r->count < QG_MAX_FINDINGS ? r->count : QG_MAX_FINDINGS;
    bool block = false;
    for (size_t i = 0; i < kept; i++) {
        const qg_finding *f = &r->findings[i];
        FUZZ_CHECK(f->reason > QG_REASON_NONE && f->reason < QG_REASON_COUNT, "reason %d",
                   (int)f->reason);
        FUZZ_CHECK(f->offset < len, "finding offset %zu of %zu", f->offset, len);
        FUZZ_CHECK(f->span_start <= f->span_end && f->span_end <= len, "span [%zu,%zu) of %zu",
                   f->span_start, f->span_end, len);
        block |= f->action == QG_ACTION_BLOCK;
    }
    FUZZ_CHECK((r->count == 0) == (r->verdict == QG_VERDICT_CLEAN), "count %u, verdict %d",
               r->count, (int)r->verdict);
    if (block)
        FUZZ_CHECK(r->verdict == QG_VERDICT_BLOCK, "blocking finding, verdict %d", (int)r->verdict);
}

static void lex_all(const qg_context *ctx, const unsigned char *s, size_t len,
                    qg_reading reading, bool collect, token_list *out)
{
    qg_token tok;
    memset(&out->result, 0, sizeof out->result);
    out->count = out->total = 0;
    qg_lexer *lx = qg_lexer_new(ctx, (const char *)s, len, reading, collect ? &out->result : NULL);
    FUZZ_CHECK(lx != NULL, "no memory for a lexer");
    size_t prev_end = 0;
    while (qg_lexer_next(lx, &tok)) {
        check_token(ctx, s, len, &tok, prev_end, reading);
        prev_end = tok.end;
        if (out->count < MAX_TOKENS)
            out->tok[out->count++] = tok;
        out->total++;
        FUZZ_CHECK(out->total <= len, "%zu tokens in %zu bytes", out->total, len);
    }
    FUZZ_CHECK(!qg_lexer_next(lx, &tok), "lexer restarted after the end");
    qg_lexer_free(lx);
    if (collect)
        check_findings(&out->result, len);
    else
        FUZZ_CHECK(out->result.count == 0, "findings written with findings == NULL");
}

static bool same_tokens(const token_list *a, const token_list *b)
{
    if (a->total != b->total || a->count != b->count)
        return false;
    for (size_t i = 0; i < a->count; i++) {
        const qg_token *x = &a->tok[i], *y = &b->tok[i];
        if (x->kind != y->kind || x->form != y->form || x->start != y->start ||
            x->end != y->end || x->unterminated != y->unterminated)
            return false;
    }
    return true;
}

static bool has_encoding_finding(const qg_result *r)
{
    size_t kept = r->count < QG_MAX_FINDINGS ? r->count : QG_MAX_FINDINGS;
    for (size_t i = 0; i < kept; i++) {
        qg_reason why = r->findings[i].reason;
        if (why == QG_REASON_INVALID_SEQUENCE || why == QG_REASON_ILLFORMED_QUOTE ||
            why == QG_REASON_ILLFORMED)
            return true;
    }
    return r->count > QG_MAX_FINDINGS; /* unknown: do not compare */
}

static bool is_alnum(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* A word that starts with a digit and holds a high byte, then a '$': the
 * server rejects it ("trailing junk after numeric literal"), and whether a
 * dollar quote follows depends on whether the high bytes form a character. */
static bool number_junk_before_dollar(const unsigned char *s, size_t len)
{
    for (size_t i = 0; i < len;) {
        size_t j = i;
        bool high = false, dollar = false;
        while (j < len && (s[j] >= 0x80 || s[j] == '_' || s[j] == '$' || is_alnum(s[j]))) {
            high |= s[j] >= 0x80;
            dollar |= s[j] == '$';
            j++;
        }
        if (j > i && s[i] >= '0' && s[i] <= '9' && high && dollar)
            return true;
        i = j > i ? j : i + 1;
    }
    return false;
}

/* MySQL: "--" before a high byte that one of the sets calls a space (its
 * ctype table) and the other does not: a comment in that set only. */
static bool dash_space_differs(const qg_encoding *a, const qg_encoding *b, const unsigned char *s,
                               size_t len)
{
    for (size_t i = 0; i + 2 < len; i++)
        if (s[i] == '-' && s[i + 1] == '-' &&
            qg_encoding_dash_space(a, s[i + 2]) != qg_encoding_dash_space(b, s[i + 2]))
            return true;
    return false;
}

static token_list lists[4];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    qg_dialect dialect;
    const qg_encoding *enc = fuzz_pick_encoding(data[0], &dialect);
    unsigned flags = data[1] & (QG_STD_STRINGS | QG_NO_BACKSLASH_ESCAPES | QG_ANSI_QUOTES);
    size_t len = size - 2;
    unsigned char *sql = fuzz_exact_copy(data + 2, len);
    const qg_encoding *single =
        qg_encoding_find(dialect, dialect == QG_DIALECT_POSTGRES ? "LATIN1" : "latin1");
    FUZZ_CHECK(single != NULL, "no latin1");

    qg_context ctx, single_ctx;
    qg_context_init(&ctx, dialect, enc, flags);
    qg_context_init(&single_ctx, dialect, single, flags);

    bool comparable = !qg_encoding_has_ascii_trail(enc) && !number_junk_before_dollar(sql, len) &&
                      !dash_space_differs(enc, single, sql, len);
    for (int r = QG_READ_SERVER; r <= QG_READ_NAIVE; r++) {
        qg_reading reading = (qg_reading)r;
        token_list *with = &lists[0], *without = &lists[1], *base = &lists[2];
        lex_all(&ctx, sql, len, reading, true, with);
        lex_all(&ctx, sql, len, reading, false, without);
        FUZZ_CHECK(same_tokens(with, without), "%s/%d: tokens depend on collecting findings",
                   qg_encoding_name(enc), r);
        lex_all(&single_ctx, sql, len, reading, true, base);
        /* N reads the program's code like S, so only encodings whose
         * characters are all high bytes must lex N like a single-byte one. */
        if (comparable && !has_encoding_finding(&with->result))
            FUZZ_CHECK(same_tokens(with, base),
                       "%s flags %u, %s: valid text lexes differently from a single-byte encoding",
                       qg_encoding_name(enc), flags, reading == QG_READ_NAIVE ? "N" : "S");
    }

    char sample[QG_SHAPE_SAMPLE_MAX];
    memset(sample, 'x', sizeof sample);
    uint64_t shape = qg_shape_compute(&ctx, (const char *)sql, len, sample, sizeof sample);
    FUZZ_CHECK(memchr(sample, '\0', sizeof sample) != NULL, "%s: shape sample not terminated",
               qg_encoding_name(enc));
    FUZZ_CHECK(shape == qg_shape_compute(&ctx, (const char *)sql, len, NULL, 0),
               "%s flags %u: the shape depends on whether a sample is asked for",
               qg_encoding_name(enc), flags);
    free(sql);
    return 0;
}
