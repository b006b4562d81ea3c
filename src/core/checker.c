/*
 * The detection rule (docs/DETECTION.md).  Pass 1 reads the query as the
 * server will (S) and collects encoding findings and unterminated tokens;
 * where S meets a byte a byte-wise reader could take differently (a
 * multibyte character with an ASCII trail byte, a backslash that S does not
 * treat as an escape), the lexer reads that literal as N too.  Only when N
 * ends some literal elsewhere does pass 2 run S and N side by side over the
 * whole query: if N is well formed and some of what it takes as literal data
 * is code for the server, a byte-wise escaper was fooled into letting input
 * run as SQL.
 */
#include <stdint.h>
#include <string.h>

#include "ascii.h"
#include "context.h"
#include "hot.h"
#include "lexer_internal.h"
#include "pass_count.h"
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

QG_HOT void qg_context_init(qg_context *ctx, qg_dialect dialect, const qg_encoding *enc,
                            unsigned flags)
{
    qg_context_fill(ctx, dialect, enc, flags);
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

/* Literal data: what an escaper puts user input into. */
static bool is_data(const qg_token *tok)
{
    return tok->kind == QG_TOK_STRING || tok->kind == QG_TOK_DOLLAR;
}

/* Where byte `at` of the converted view is in the client's text. */
static size_t client_offset(const qg_server_view *view, size_t at)
{
    size_t lo = 0, hi = view->count; /* the converted characters at or before `at`: [0, lo) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (view->chars[mid].view <= at)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return at;
    const qg_converted_char *c = &view->chars[lo - 1];
    return at == c->view ? c->start : c->end + (at - c->view - 1);
}

/* The server's next data token, in the client's offsets. */
static bool next_data(qg_lexer *server, qg_token *tok)
{
    while (qg_lexer_next(server, tok)) {
        if (is_data(tok)) {
            const qg_server_view *view = server->ctx->view;
            if (view) {
                tok->start = client_offset(view, tok->start);
                tok->end = client_offset(view, tok->end);
            }
            return true;
        }
    }
    return false;
}

/* S: the server's reading, of the view where the server converts the text. */
static void server_lexer_init(qg_lexer *lx, const qg_context *ctx, const char *sql, size_t len,
                              qg_result *findings)
{
    if (ctx->view)
        qg_lexer_init(lx, ctx, ctx->view->text, ctx->view->len, QG_READ_SERVER, findings);
    else
        qg_lexer_init(lx, ctx, sql, len, QG_READ_SERVER, findings);
}

/* A backslash in N's code: outside every literal, where a program's own
 * SQL has none, so N has lost step with the program's text. */
static bool backslash_in_code(const char *sql, size_t from, size_t to)
{
    return to > from && memchr(sql + from, '\\', to - from) != NULL;
}

/* Whether the byte at `at` continues a word: a letter, digit, underscore
 * or a byte of a multibyte character.  A program's own SQL writes none
 * directly after a literal's closing quote; prose does after an
 * apostrophe (it's, don't, l'été) or an opening quote ('name'). */
static bool word_after(const unsigned char *sql, size_t len, size_t at)
{
    return at < len && (qg_ascii_is_alnum(sql[at]) || sql[at] == '_' || sql[at] >= 0x80);
}

/* Whether N's comment `tn` hides the closing quote of the server's data
 * token `ts` (the first that does not end before it), one a program may
 * have written: the server's literal begins before the comment, ends in
 * it, and no word follows its closing quote.  The comment then is no
 * comment of the program's, and N has lost step with the text.  (A
 * quote of prose in a comment the program wrote, an apostrophe or a
 * quoted word, is no such quote.) */
static bool comment_hides_delimiter(const char *sql, size_t len, const qg_token *tn,
                                    const qg_token *ts, bool has_s)
{
    return has_s && ts->start < tn->start && ts->end > tn->start && ts->end <= tn->end &&
           !word_after((const unsigned char *)sql, len, ts->end);
}

/* Where an injection was found: the first byte of input the server runs
 * as SQL, and N's literal around it. */
typedef struct injection {
    size_t offset, span_start, span_end;
} injection;

/* One way of reading the text as an escaper wrote it, token by token: N's
 * lexer where it stands, and the server's data token that walks along. */
typedef struct naive_path {
    qg_lexer naive;
    qg_lexer server;
    qg_token ts;
    bool has_s, found;
    size_t code_from;
    injection at;
} naive_path;

/* A reading N may take for a literal: the escaper's idea of the encoding
 * (`believed`) and of the rules. */
typedef struct naive_variant {
    const qg_context *believed;
    qg_reading reading;
} naive_variant;

/* Readings followed at once.  More than that in step with the text at
 * one token is itself taken as blame: correctly escaped text leaves at
 * most a few (make measure), and giving up would let a literal with enough
 * step quotes pass. */
enum { MAX_PATHS = 16 };

/* Whether byte `at` lies in one of the server's data tokens (walking
 * them up to it). */
static bool in_server_data(naive_path *p, size_t at)
{
    while (p->has_s && p->ts.end <= at)
        p->has_s = next_data(&p->server, &p->ts);
    return p->has_s && p->ts.start <= at;
}

/* Takes N's next token into the path.  False when it shows N out of step
 * with the text: a quote left open, a backslash in code (a program's own
 * SQL has none outside its literals), a comment holding a quote the
 * server reads as a literal's end, or a literal ending where the server
 * reads no literal, before a word (prose's apostrophe in the server's
 * comment or quoted name, taken for a closing quote).  Otherwise notes
 * the first byte N takes as literal data that is, for the server, outside
 * every literal: code, a comment or an identifier. */
static bool path_take(naive_path *p, const char *sql, const qg_token *tn)
{
    if (tn->unterminated || backslash_in_code(sql, p->code_from, tn->start))
        return false;
    p->code_from = tn->end;
    /* S's data tokens are sorted and disjoint: walk them over N's. */
    while (p->has_s && p->ts.end <= tn->start)
        p->has_s = next_data(&p->server, &p->ts);
    if (tn->kind == QG_TOK_COMMENT &&
        comment_hides_delimiter(sql, p->naive.len, tn, &p->ts, p->has_s))
        return false;
    if (!is_data(tn))
        return true;
    for (size_t at = tn->start; !p->found && at < tn->end; at = p->ts.end) {
        while (p->has_s && p->ts.end <= at)
            p->has_s = next_data(&p->server, &p->ts);
        if (!p->has_s || p->ts.start > at) {
            p->found = true;
            p->at = (injection){at, tn->start, tn->end};
        }
    }
    return !(tn->kind == QG_TOK_STRING && word_after(p->naive.sql, p->naive.len, tn->end) &&
             !in_server_data(p, tn->end - 1));
}

/* Whether N, having ended a literal at a step quote (QG_READ_NAIVE_AWARE),
 * finds a backslash in the code after it: the path would end at its next
 * token, which is looked at now, so that the dead ends of a literal full
 * of step quotes do not fill the paths. */
static bool dies_after_step(const naive_path *p, const qg_token *tn, const char *sql, size_t len)
{
    if (p->naive.step_after != tn->end)
        return false;
    qg_lexer peek = p->naive;
    qg_token next;
    return backslash_in_code(sql, p->code_from, qg_lexer_next(&peek, &next) ? next.start : len);
}

/* Pass 2, for one escaper family: whether the text reads, literal by
 * literal, as that escaper's output (each literal by one of `variants`)
 * in which some byte the escaper put in a literal is, for the server,
 * outside every literal.  That is injection: input the escaper meant as
 * data runs as SQL.  Readings that agree on where a literal ends are
 * followed as one. */
QG_COLD static bool escaper_injects(const qg_context *ctx, const naive_variant *variants,
                                    int count, const char *sql, size_t len, injection *where)
{
    naive_path paths[MAX_PATHS], next[MAX_PATHS];
    int live = 1;
    memset(&paths[0], 0, sizeof paths[0]);
    qg_lexer_init(&paths[0].naive, variants[0].believed, sql, len, variants[0].reading, NULL);
    server_lexer_init(&paths[0].server, ctx, sql, len, NULL);
    paths[0].has_s = next_data(&paths[0].server, &paths[0].ts);
    while (live > 0) {
        int kept = 0;
        for (int i = 0; i < live; i++) {
            /* S's data token that reaches past where N stands, read once
             * for all the readings of N's next token below. */
            while (paths[i].has_s && paths[i].ts.end <= paths[i].naive.pos)
                paths[i].has_s = next_data(&paths[i].server, &paths[i].ts);
            /* A literal with step quotes (QG_READ_NAIVE_AWARE): one path
             * ending at each, the ones before it escaped, and one past them
             * all. */
            size_t steps_until = 0;
            for (int v = 0; v < count; v += steps_until == 0) {
                naive_path p = paths[i];
                qg_lexer_init(&p.naive, variants[v].believed, sql, len, variants[v].reading, NULL);
                p.naive.pos = paths[i].naive.pos;
                p.naive.last_mb_end = paths[i].naive.last_mb_end;
                p.naive.exec_comment_depth = paths[i].naive.exec_comment_depth;
                p.naive.steps_until = steps_until;
                qg_token tn;
                bool more = qg_lexer_next(&p.naive, &tn);
                steps_until = p.naive.step_after;
                if (!more) {
                    if (p.found && !backslash_in_code(sql, p.code_from, len)) {
                        *where = p.at;
                        return true;
                    }
                    continue;
                }
                if (!path_take(&p, sql, &tn) || dies_after_step(&p, &tn, sql, len))
                    continue;
                bool seen = false;
                for (int k = 0; k < kept && !seen; k++)
                    seen = next[k].naive.pos == p.naive.pos && next[k].found == p.found;
                if (seen)
                    continue;
                if (kept == MAX_PATHS) {
                    *where = (injection){tn.start, tn.start, tn.end};
                    return true;
                }
                next[kept++] = p;
            }
        }
        /* cppcheck-suppress uninitvar ; next[0, kept) were written above */
        memcpy(paths, next, (size_t)kept * sizeof paths[0]);
        live = kept;
    }
    return false;
}

/* One reading for every literal: escaper_injects with one variant, in one
 * pass. */
static bool reading_injects(const qg_context *ctx, qg_reading reading, const char *sql, size_t len,
                            injection *where)
{
    naive_path p;
    memset(&p, 0, sizeof p);
    qg_lexer_init(&p.naive, ctx, sql, len, reading, NULL);
    server_lexer_init(&p.server, ctx, sql, len, NULL);
    p.has_s = next_data(&p.server, &p.ts);
    qg_token tn;
    while (qg_lexer_next(&p.naive, &tn))
        if (!path_take(&p, sql, &tn))
            return false;
    *where = p.at;
    return p.found && !backslash_in_code(sql, p.code_from, len);
}

/* A backslash escaper that knows the encoding `believed`: each literal as
 * it reads a valid character, or byte by byte (where the escaper took the
 * input for invalid), and, for the connection's own encoding, as an
 * escaper that trusts lead bytes reads it. */
static bool aware_escaper_injects(const qg_context *ctx, const qg_context *believed,
                                  const char *sql, size_t len, injection *where)
{
    naive_variant variants[3] = {{believed, QG_READ_NAIVE},
                                 {believed, QG_READ_NAIVE_AWARE},
                                 {believed, QG_READ_NAIVE_TRUSTING}};
    /* The lead-trusting reading is the attack an ill-formed sequence before
     * a quote stands for: on MySQL it applies where those findings block
     * (mysql_illformed_quote = log lets binary dumps through). */
    bool trusting = believed == ctx && (ctx->dialect == QG_DIALECT_POSTGRES ||
                                        ctx->action[QG_REASON_ILLFORMED_QUOTE] == QG_ACTION_BLOCK);
    return escaper_injects(ctx, variants, trusting ? 3 : 2, sql, len, where);
}

/* The encodings whose characters may end in a byte 0x5c: an escaper that
 * believes the connection uses one of them copies such a character whole
 * and does not escape its last byte. */
static const char *const ascii_trail_names[2][6] = {
    [QG_DIALECT_POSTGRES] = {"SJIS", "SHIFT_JIS_2004", "BIG5", "GBK", "GB18030", NULL},
    [QG_DIALECT_MYSQL] = {"sjis", "cp932", "big5", "gbk", "gb18030", NULL},
};

/* Whether some backslash in the text follows a byte that, with it, makes a
 * character of `enc`. */
static bool backslash_trails(const qg_encoding *enc, const char *sql, size_t len)
{
    const unsigned char *s = (const unsigned char *)sql;
    for (const unsigned char *b = memchr(s, '\\', len); b; b = memchr(b + 1, '\\', len - (size_t)(b + 1 - s)))
        if (b > s && b[-1] >= 0x80 && qg_encoding_char_len(enc, b - 1, 2) == 2)
            return true;
    return false;
}

/* Where an encoding-aware escaper's reading may part from S without the
 * lexer seeing it (the block skip reads backslashes as S and a byte-wise
 * N do): a backslash after a byte >= 0x80. */
typedef struct backslash_pairs {
    bool foreign; /* the two make no character of the connection's encoding:
                     an escaper believing another may have taken them for one
                     and left the backslash unescaped */
    bool trail;   /* they make one, and a backslash or quote follows: the
                     escaper's reading escapes it, S's may not */
} backslash_pairs;

static backslash_pairs backslash_after_high(const qg_encoding *enc, const char *sql, size_t len)
{
    const unsigned char *s = (const unsigned char *)sql, *end = s + len;
    /* p: where the walk over the server's characters got, at a boundary;
     * last: the start of the character before it. */
    const unsigned char *p = s, *last = s;
    backslash_pairs found = {false, false};
    if (len < 2)
        return found;
    for (const unsigned char *b = s + qg_next_backslash_pair(s, 0, len, len); b < end;
         b = s + qg_next_backslash_pair(s, (size_t)(b + 1 - s), len, len)) {
        if (b > p) {
            /* No byte below 0x30 is part of a multibyte character in any
             * encoding: the server's characters begin after the last one. */
            const unsigned char *from = b - 1;
            while (from > p && from[-1] >= 0x30)
                from--;
            if (from > p) {
                p = from;
                last = from - 1;
            }
            while (p < b) {
                size_t n = p[0] < 0x80 ? 1 : qg_encoding_char_len(enc, p, (size_t)(end - p));
                last = p;
                p += n ? n : 1;
            }
        }
        if (p == b && last[0] >= 0x80)
            found.foreign = true; /* the server's backslash, after a byte >= 0x80 */
        else if (p > b)
            found.trail = true; /* a trail byte 0x5c before a backslash or quote */
    }
    return found;
}

/* Pass 2 for an escaper that knows an encoding other than the
 * connection's: where it takes a byte and a backslash for one of its
 * characters that the server does not, the backslash is not escaped. */
QG_COLD static bool foreign_escaper_injects(const qg_context *ctx, const char *sql, size_t len,
                                            injection *where)
{
    for (const char *const *name = ascii_trail_names[ctx->dialect]; *name; name++) {
        const qg_encoding *other = qg_encoding_find(ctx->dialect, *name);
        if (!other || other == ctx->encoding || !backslash_trails(other, sql, len))
            continue;
        qg_context believed = *ctx;
        believed.encoding = other;
        if (aware_escaper_injects(ctx, &believed, sql, len, where))
            return true;
    }
    return false;
}

/* What pass 1 saw that calls for pass 2 (all of it where the reference
 * runs, or the server converts the text). */
typedef struct parting {
    bool naive;     /* N ended some literal elsewhere than S */
    bool doubler;   /* a comment after an odd number of escaped quotes */
    bool illformed; /* an ill-formed sequence (MySQL, logged) where they block
                       before a quote: where a lead-trusting escaper reads
                       otherwise (mysql_illformed_quote = log: binary dumps) */
} parting;

/* Pass 2 for every escaper family the rule knows; records a
 * structure_mismatch for the first one fooled.  `backslash_pair`: the
 * text holds a backslash that qg_next_backslash_pair finds. */
static void record_fooled_escaper(const qg_context *ctx, const char *sql, size_t len, parting why,
                                  bool backslash_pair, qg_result *res)
{
    injection at = {0, 0, 0};
    bool found = false;
    backslash_pairs pairs = {false, false};
    if (backslash_pair)
        pairs = backslash_after_high(ctx->encoding, sql, len);
    if (why.naive || why.illformed)
        found = reading_injects(ctx, QG_READ_NAIVE, sql, len, &at);
    if (!found && why.doubler)
        found = reading_injects(ctx, QG_READ_NAIVE_DOUBLING, sql, len, &at);
    /* An encoding-aware escaper reads otherwise than a byte-wise one only
     * at a trail byte 0x5c or an invalid sequence (in a comment of the
     * server's too, where the lexer does not look). */
    bool aware = (why.naive || why.illformed ||
                  (pairs.trail && qg_encoding_has_ascii_trail(ctx->encoding))) &&
                 !qg_encoding_is_single_byte(ctx->encoding);
    if (!found && aware)
        found = aware_escaper_injects(ctx, ctx, sql, len, &at);
    if (!found && pairs.foreign)
        found = foreign_escaper_injects(ctx, sql, len, &at);
    if (found)
        record(res, ctx, QG_REASON_STRUCTURE_MISMATCH, at.offset, at.span_start, at.span_end);
}

/* qg_pg_doubler_code_after_escaped_quote (lexer_internal.h): out of line,
 * so that other texts do not pay for its registers in qg_check. */
__attribute__((noinline)) bool qg_pg_doubler_code_after_escaped_quote(const unsigned char *s,
                                                                      size_t len)
{
    const unsigned char *end = s + len, *b = memchr(s, '\\', len);
    /* Without such a byte after the first backslash the answer is no: a
     * pass for each kind, where the backslashes of a Shift_JIS text (its
     * trail bytes 0x5c) would take a call of memchr apiece. */
    if (!b || !qg_doubler_code_in(s, (size_t)(b - s) + 1, len))
        return false;
    for (; b; b = b + 1 < end ? memchr(b + 1, '\\', (size_t)(end - b - 1)) : NULL)
        if (b + 1 < end && b[1] == '\'')
            return qg_doubler_code_in(s, (size_t)(b - s) + 2, len);
    return false;
}

/* MySQL, where backslashes escape: whether a quote escaped by a backslash
 * comes before something that may open a comment.  A quote doubler's
 * literal ends at that quote, and the comment may be one of the program's
 * (prose with an apostrophe, `-- it's fine`) that the doubler reads as such
 * and the server, one quote off, as a literal: the readings are compared. */
static __attribute__((noinline)) bool escaped_quote_before_comment(const unsigned char *s,
                                                                   size_t len)
{
    const unsigned char *end = s + len, *b = memchr(s, '\\', len);
    /* As above: no comment opener after the first backslash, no answer. */
    if (!b || b + 2 >= end ||
        (!memchr(b + 2, '#', (size_t)(end - b - 2)) &&
         !qg_comment_opener_in(s, (size_t)(b - s) + 2, len)))
        return false;
    for (; b && b + 1 < end; b = memchr(b + 2, '\\', (size_t)(end - b - 2)))
        if (b[1] == '\'' || b[1] == '"')
            return memchr(b + 2, '#', (size_t)(end - b - 2)) ||
                   qg_comment_opener_in(s, (size_t)(b - s) + 2, len);
    return false;
}

/* The lexer's reading of a text the quick scan did not settle.
 * `doubler_comment`: escaped_quote_before_comment. */
static qg_verdict check_lexed(const qg_context *ctx, const char *sql, size_t len, bool every_byte,
                              bool doubler_comment, bool by_reference, qg_result *res)
{
    qg_lexer lx;
    qg_token tok;
    qg_lexer_init(&lx, ctx, sql, len, QG_READ_SERVER, res);
    if (by_reference)
        qg_lexer_read_by_reference(&lx);
    lx.watch_escaped_quotes = true;
    if (every_byte)
        lx.quiet_from = SIZE_MAX; /* the block skip does not look */
    bool open_at_end = false;
    for (;;) {
        qg_lexer_skip_quiet(&lx);
        if (lx.pos >= len || !qg_lexer_next(&lx, &tok))
            break;
        if (tok.unterminated) {
            record(res, ctx, QG_REASON_UNTERMINATED, tok.start, tok.start, tok.end);
            open_at_end = true;
        }
    }

    /* An ill-formed byte S does not check tells no literal whether N read
     * past it; the reference, which compares the readings wherever the text
     * holds an ambiguous byte, decides such a text (escaped binary data in
     * _binary'', mostly): only its byte by byte reading sees every
     * ambiguous byte. */
    if (lx.unchecked_illformed && lx.vectors != QG_VECTORS_REFERENCE) {
        res->verdict = QG_VERDICT_CLEAN;
        res->count = 0;
        return check_lexed(ctx, sql, len, every_byte, doubler_comment, true, res);
    }

    /* The reference compares the readings whenever N might read otherwise;
     * the lexer already knows whether it does, literal by literal, and
     * whether a quote doubler's reading may part from S. */
    bool everything = lx.vectors == QG_VECTORS_REFERENCE && lx.ambiguous;
    /* A token S leaves open (where that is not blocked) may hold the
     * quote that ends a quote doubler's literal, as a comment may; and
     * (PG) past a quote escaped by a backslash the doubler reads code, in
     * S's later literals too, where a dollar quote, a quoted name or a
     * comment may open.  Where plain strings do not read backslash
     * escapes, only an E'' string escapes a quote, and the block skip
     * leaves every one holding a backslash to the lexer. */
    bool doubler = lx.doubler_parts || open_at_end || doubler_comment ||
                   (ctx->dialect == QG_DIALECT_POSTGRES &&
                    (qg_plain_strings_escape(ctx)
                         ? every_byte /* qg_check looked already */
                         : lx.first_escaped_quote &&
                               qg_doubler_code_in(lx.sql, lx.first_escaped_quote + 1, len)));
    parting why = {lx.diverges || everything, doubler || everything,
                   res->verdict == QG_VERDICT_LOG &&
                       ctx->action[QG_REASON_ILLFORMED_QUOTE] == QG_ACTION_BLOCK};
    if (res->verdict != QG_VERDICT_BLOCK) {
        /* The block skip looked for backslash pairs in the blocks it read;
         * the rest of the text (all of it in the reference) is looked at
         * here. */
        bool backslash_pair = lx.backslash_pair ||
                              qg_next_backslash_pair(lx.sql, lx.pairs_to, len, len) < len;
        if (why.naive || why.doubler || why.illformed || backslash_pair)
            record_fooled_escaper(ctx, sql, len, why, backslash_pair, res);
    }
    return res->verdict;
}

/* Where the server converts a character to ASCII (ctx->view), the client's
 * bytes are checked as they are (the conversion rejects what is not a
 * character), and the tokens, read in the view, are compared with N's of
 * the client's bytes, always: N reads the converted characters otherwise. */
QG_COLD static qg_verdict check_converted(const qg_context *ctx, const char *sql, size_t len,
                                          qg_result *res)
{
    qg_lexer lx;
    qg_token tok;
    qg_lexer_init(&lx, ctx, sql, len, QG_READ_SERVER, res);
    while (qg_lexer_next(&lx, &tok))
        continue;
    server_lexer_init(&lx, ctx, sql, len, NULL);
    while (qg_lexer_next(&lx, &tok))
        if (tok.unterminated)
            record(res, ctx, QG_REASON_UNTERMINATED, client_offset(ctx->view, tok.start),
                   client_offset(ctx->view, tok.start), len);
    if (res->verdict != QG_VERDICT_BLOCK)
        record_fooled_escaper(ctx, sql, len, (parting){true, true, true}, true, res);
    return res->verdict;
}

/* Where a check records its findings: `result`, or, where no one reads
 * them, `scratch` (its findings not cleared). */
static inline qg_result *findings_in(qg_result *result, qg_result *scratch)
{
    if (result)
        return result;
    scratch->verdict = QG_VERDICT_CLEAN;
    scratch->count = 0;
    return scratch;
}

/* A text the quick scan did not settle, or that the server converts, with
 * its findings in `result` or, where no one reads them, in a scratch copy:
 * out of line, so that a settled query does not set up its frame. */
static QG_HOT __attribute__((noinline)) qg_verdict check_read(const qg_context *ctx, const char *sql,
                                                       size_t len, bool every_byte,
                                                       bool doubler_comment, qg_result *result)
{
    qg_result scratch;
    result = findings_in(result, &scratch);
    if (ctx->view)
        return check_converted(ctx, sql, len, result);
    return check_lexed(ctx, sql, len, every_byte, doubler_comment, false, result);
}

/* A text the quick scan settled as the server reads it, where a quote
 * escaped by a backslash comes before something that may open a comment
 * (QG_QUICK_DOUBLER): all that check_lexed would do beyond the server's
 * reading is a quote doubler's, compared here. */
static __attribute__((noinline)) qg_verdict check_doubler(const qg_context *ctx, const char *sql,
                                                          size_t len, qg_result *result)
{
    qg_result scratch;
    result = findings_in(result, &scratch);
    injection at;
    if (reading_injects(ctx, QG_READ_NAIVE_DOUBLING, sql, len, &at))
        record(result, ctx, QG_REASON_STRUCTURE_MISMATCH, at.offset, at.span_start, at.span_end);
    return result->verdict;
}

/* Multibyte text in a literal, in a name or in a comment: settled alike
 * where each character reads as a letter (qg_only_plain_strings_as_letters).
 * Out of line, so that the copy a pair encoding's text is read from takes
 * no stack in the other queries' calls; a longer text is the lexer's. */
enum { LETTERS_COPY = 1024 };
static __attribute__((noinline)) qg_quick_reading quick_as_letters(const qg_context *ctx,
                                                                   const char *sql, size_t len)
{
    char copy[LETTERS_COPY + QG_LETTERS_SLACK];
    return qg_only_plain_strings_as_letters(ctx, sql, len, len <= LETTERS_COPY ? copy : NULL);
}

QG_HOT qg_verdict qg_check(const qg_context *ctx, const char *sql, size_t len, qg_result *result)
{
    QG_COUNT_PASS(QG_PASS_CHECK);
    QG_COUNT_PASSES_OF(QG_PASS_CHECKED_BYTES, len);
    if (result) {
        result->verdict = QG_VERDICT_CLEAN;
        result->count = 0;
    }
    /* A text of code, plain strings and comments is settled by one small
     * scan before the lexer's larger code runs: between two round trips,
     * what costs is code and data the caches have lost; in a long text, the
     * lexer's work per byte.  One that stops late (a dollar quote deep in
     * a script) is read twice (make bench: the regression corpora). */
    /* PG with backslash escapes in plain strings: code a quote doubler may
     * read past a quote escaped by a backslash is for the lexer to see,
     * byte by byte. */
    bool every_byte = qg_pg_every_byte(ctx, sql, len);
    if (!ctx->view && !every_byte) {
        qg_quick_reading quick = qg_only_plain_strings(ctx, sql, len);
        if (quick == QG_QUICK_MULTIBYTE)
            quick = quick_as_letters(ctx, sql, len);
        if (quick == QG_QUICK_CLEAN)
            return QG_VERDICT_CLEAN;
        if (quick == QG_QUICK_DOUBLER)
            return check_doubler(ctx, sql, len, result);
    }
    bool doubler_comment = ctx->dialect == QG_DIALECT_MYSQL && qg_plain_strings_escape(ctx) &&
                           escaped_quote_before_comment((const unsigned char *)sql, len);
    return check_read(ctx, sql, len, every_byte, doubler_comment, result);
}
