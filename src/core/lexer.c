/*
 * One lexer for both dialects.  It finds where string literals, delimited
 * identifiers, comments and dollar quotes begin and end, in one of two
 * readings (see include/quoteguard.h):
 *   S — the server's: characters of the client encoding, the connection's
 *       quoting flags;
 *   N — a byte-wise escaper's: inside string literals every byte is a
 *       character and '\' escapes the next byte; the program's own code
 *       around them (identifiers, comments) is read as in S, since its
 *       author wrote it in the client encoding.
 * Everything between structural tokens is plain code and is skipped with a
 * table lookup per byte; nothing is allocated.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "encoding_tables.h"
#include "hot.h"
#include "lexer_internal.h"
#include "skip_plain.h"
#include "quoteguard.h"
#include "sql_words.h"

static bool is_pg(const qg_lexer *lx)
{
    return lx->ctx->dialect == QG_DIALECT_POSTGRES;
}

static bool is_naive(const qg_lexer *lx)
{
    return lx->reading != QG_READ_SERVER;
}

/* Whether N reads the inside of string literals byte by byte. */
static bool naive_bytewise(const qg_lexer *lx)
{
    return lx->reading == QG_READ_NAIVE || lx->reading == QG_READ_NAIVE_DOUBLING;
}

/* Whether characters of a multibyte client encoding are read whole; N
 * reads the inside of string literals byte by byte. */
static bool reads_multibyte(const qg_lexer *lx)
{
    return lx->multibyte;
}

static bool is_ident_cont(unsigned char c)
{
    return qg_char_in(c, QG_WORD_CONT);
}

static bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static void add_finding(qg_lexer *lx, qg_reason reason, size_t offset, size_t span_start,
                        size_t span_end)
{
    qg_result *res = lx->findings;
    if (!res)
        return;
    qg_action action = lx->ctx->action[reason];
    if (action == QG_ACTION_IGNORE)
        return;
    if (res->count < QG_MAX_FINDINGS) {
        qg_finding *f = &res->findings[res->count];
        f->reason = reason;
        f->action = action;
        f->offset = offset;
        f->span_start = span_start;
        f->span_end = span_end;
    }
    res->count++;
    if (action == QG_ACTION_BLOCK)
        res->verdict = QG_VERDICT_BLOCK;
    else if (res->verdict == QG_VERDICT_CLEAN)
        res->verdict = QG_VERDICT_LOG;
}


/* Advances over bytes that cannot change the state `mask` (one STOP_ bit);
 * stops at a high byte when reading multibyte characters. */
static inline __attribute__((always_inline)) void skip_plain(qg_lexer *lx, unsigned mask,
                                                             bool stop_high)
{
#ifdef __SSE2__
    if (lx->vectors != QG_VECTORS_REFERENCE) {
        lx->pos = skip_plain_sse2(lx->sql, lx->pos, lx->len, mask, stop_high);
        return;
    }
#endif
    lx->pos = skip_plain_scalar(lx->sql, lx->pos, lx->len, mask, stop_high);
}

/* Whether a reader that trusts the first byte's length would take the next
 * byte into the same character. */
static bool looks_like_lead(const qg_encoding *enc, unsigned char b)
{
    if (enc->utf8)
        return b >= 0xc0 && b <= 0xf7; /* 110xxxxx, 1110xxxx, 11110xxx */
    return enc->lead[b] >= L_FORM;
}

/* The length a byte that looks like a lead byte declares, to a reader
 * that trusts it: UTF-8's by its high bits, elsewhere that of the first
 * form it starts (at most `avail`, at least 1). */
static size_t declared_length(const qg_encoding *enc, const unsigned char *p, size_t avail)
{
    size_t n = 1;
    if (looks_like_lead(enc, p[0]))
        n = enc->utf8 ? (p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : 2)
                      : enc->forms[enc->lead[p[0]] - L_FORM].len;
    return n < avail ? n : avail;
}

/* A byte a reader's idea of where a character ends may move a literal's
 * end with: a quote, backtick or backslash. */
static bool quote_like(unsigned char c)
{
    return c == '\'' || c == '"' || c == '`' || c == '\\';
}

/* Steps the two readings below are followed apart before they are taken to
 * part for good. */
enum { TRUSTING_STEPS = 16 };

/* MySQL: where the server, which takes the ill-formed byte at `at` alone,
 * and a reader that trusts lead bytes, which takes a byte that looks like
 * one and the bytes it declares for one character, part: the first quote
 * or backslash that one of them reads at a character's start while the
 * other reads it inside a character.  `len` when their characters meet
 * again before any (or the text ends): then no escaper's idea of the
 * bytes moves a quote. */
static size_t trusting_parts_at(const qg_encoding *enc, const unsigned char *s, size_t at,
                                size_t len)
{
    size_t server = at + 1, trusting = at + declared_length(enc, s + at, len - at);
    for (unsigned steps = 0; server != trusting; steps++) {
        bool server_behind = server < trusting;
        size_t p = server_behind ? server : trusting;
        if (p >= len)
            return len;
        if (quote_like(s[p]) || steps == TRUSTING_STEPS)
            return p;
        size_t n = s[p] < 0x80 ? 1 : encoding_char_len(enc, s + p, len - p);
        if (n == 0)
            n = server_behind ? 1 : declared_length(enc, s + p, len - p);
        if (server_behind)
            server += n;
        else
            trusting += n;
    }
    return len;
}

/* MySQL: what the ill-formed sequence at `at` is.  Where a reader that
 * trusts the lead byte takes into its character a quote or backslash the
 * server reads (UTF-8 e8 a1 ', gbk bf '): illformed_before_quote, the
 * historical attack.  Where the two readings part further on:
 * illformed_sequence, and the checker compares them.  Where they meet
 * again first (a byte that starts no character, gbk 0x80 or 0xff, a UTF-8
 * continuation byte; a lead before bytes that hold no quote): no escaper
 * reads the bytes otherwise in a way that moves a quote, and it is no
 * finding.  `*parts_at`: where the readings part, or len. */
static qg_reason illformed_reason_at(const qg_encoding *enc, const unsigned char *s, size_t at,
                                     size_t len, size_t *parts_at)
{
    *parts_at = trusting_parts_at(enc, s, at, len);
    if (*parts_at == len)
        return QG_REASON_NONE;
    if (*parts_at < at + declared_length(enc, s + at, len - at))
        return QG_REASON_ILLFORMED_QUOTE;
    return QG_REASON_ILLFORMED;
}

static qg_reason illformed_reason(const qg_encoding *enc, const unsigned char *s, size_t at,
                                  size_t len)
{
    size_t parts_at;
    return illformed_reason_at(enc, s, at, len, &parts_at);
}

/* MySQL, S: whether the ill-formed byte at `at` is one an escaper that
 * escapes a byte it takes for an invalid lead leaves where the server
 * reads it alone: in the bytes >= 0x80 that follow such an escaped byte
 * (euckr 5c c8 9d 8e 96, where the escaper's tables lack the characters
 * c8 9d and 96 xx, and the server reads 9d 8e and 96 alone), or before
 * one, within the length `at` declares (eucjpms 8f ab 5c b1, where the
 * escaper takes 8f ab for a character).  An escaper that trusts lead bytes
 * writes a backslash before ASCII only (its reading is out of step past
 * one before a high byte, scan_quoted): the checker compares the readings
 * instead of blocking on the finding. */
static bool beside_escaped_lead(const qg_lexer *lx, size_t at, size_t parts_at)
{
    const unsigned char *s = lx->sql;
    if (!qg_plain_strings_escape(lx->ctx))
        return false;
    size_t run = at; /* where the bytes >= 0x80 before `at` begin */
    while (run > 0 && s[run - 1] >= 0x80)
        run--;
    return (lx->escaped_high_end && lx->escaped_high_end == run + 1) ||
           (s[parts_at] == '\\' && parts_at + 1 < lx->len && s[parts_at + 1] >= 0x80);
}

/* MySQL, S: the ill-formed sequence at `at` as a finding, or (next to an
 * escaped lead) as a reason to compare the readings. */
static void illformed_finding(qg_lexer *lx, size_t at, size_t span_start, size_t span_end)
{
    size_t parts_at;
    qg_reason reason = illformed_reason_at(lx->ctx->encoding, lx->sql, at, lx->len, &parts_at);
    if (reason == QG_REASON_NONE)
        return;
    if (beside_escaped_lead(lx, at, parts_at))
        lx->diverges = lx->diverges || lx->findings;
    else
        add_finding(lx, reason, at, span_start, span_end);
}

/* MySQL reads the bytes of b'' and x'' alone and leaves them unchecked (the
 * server rejects what is not a digit), but a reader that trusts a lead
 * byte there may run past the closing quote: the readings are compared. */
static bool bare_body_hides_quote(const qg_lexer *lx, size_t from, size_t to)
{
    const qg_encoding *enc = lx->ctx->encoding;
    for (size_t at = from; at < to; at++) {
        if (lx->sql[at] < 0x80)
            continue;
        size_t n = encoding_char_len(enc, lx->sql + at, lx->len - at);
        if (n == 0 && illformed_reason(enc, lx->sql, at, lx->len) == QG_REASON_ILLFORMED_QUOTE)
            return true;
        if (n > 1)
            at += n - 1;
    }
    return false;
}

/* ASCII bytes read one by one before handing back to the vector scan. */
#define MIXED_ASCII_RUN 16

/* Reads characters from the high byte at lx->pos: multibyte ones whole and,
 * when `mask` is not 0, the ASCII bytes between them that do not matter for
 * that state, up to a byte that does (or a long run of ASCII, left to the
 * vector scan).  Text mixing the two goes on in this one loop.  In S an
 * invalid sequence is a finding (PG: the server rejects the whole query;
 * MySQL: the server takes the lead byte alone, and in `code` rejects the
 * statement).  `span_*` name the token the bytes are in. */
static inline __attribute__((always_inline)) void
consume_high(qg_lexer *lx, size_t span_start, size_t span_end, bool check, bool code,
             unsigned mask)
{
    const qg_encoding *enc = lx->ctx->encoding;
    const unsigned char *s = lx->sql;
    size_t pos = lx->pos, len = lx->len;
    unsigned ascii_run = 0;
    while (pos < len) {
        unsigned char c = s[pos];
        if (c < 0x80) {
            if (!mask || (stop_table[c] & mask) || ++ascii_run > MIXED_ASCII_RUN)
                break;
            pos++;
            continue;
        }
        ascii_run = 0;
        size_t n = encoding_char_len(enc, s + pos, len - pos);
        if (n > 1) {
            /* Inside a literal N reads bytes: a trail byte it takes for an
             * escape or a quote can move its literal's end. */
            if (enc->ascii_trail)
                for (size_t i = 1; i < n; i++)
                    if (s[pos + i] == '\\' || s[pos + i] == '\'' || s[pos + i] == '"')
                        lx->ambiguous = true;
            pos += n;
        } else if (n == 0 && lx->reading == QG_READ_NAIVE_TRUSTING) {
            pos += declared_length(enc, s + pos, len - pos);
        } else {
            /* Only S's lexer, which has findings, looks at why. */
            if (n == 0 && lx->findings) {
                if (!check)
                    lx->unchecked_illformed = true;
                else if (is_pg(lx) || code) {
                    /* PG rejects the whole query, and MySQL's lexer takes
                     * an ill-formed byte in code for a syntax error: the
                     * statement never runs */
                    add_finding(lx, QG_REASON_INVALID_SEQUENCE, pos, span_start, span_end);
                    /* An escaper that trusts the lead byte reads on past
                     * the bytes it declares: the checker compares the
                     * readings even where the finding is not acted on. */
                    lx->diverges = true;
                } else
                    illformed_finding(lx, pos, span_start, span_end);
            }
            pos++;
        }
        lx->last_mb_end = pos;
    }
    lx->pos = pos;
}

/* True when a token can start at `at`: not inside an identifier or number. */
static bool at_token_start(const qg_lexer *lx, size_t at)
{
    if (at == 0)
        return true;
    if (at == lx->last_mb_end)
        return false; /* right after a multibyte letter */
    return !is_ident_cont(lx->sql[at - 1]);
}

/* PG '$': a dollar quote may start where a new token starts, or right after
 * an integer ("1$a$" is 1 then $a$), never inside an identifier ("a$b$"). */
static bool dollar_can_start(const qg_lexer *lx, size_t at)
{
    size_t word = at;
    bool digits = true;
    while (word > 0 && word != lx->last_mb_end && is_ident_cont(lx->sql[word - 1])) {
        word--;
        digits = digits && is_digit(lx->sql[word]);
    }
    if (word == at)
        return at_token_start(lx, at);
    if (word == lx->last_mb_end && word > 0)
        return false;
    return digits;
}

/* Length of a dollar-quote delimiter "$tag$" at lx->pos, or 0. */
static size_t dollar_delimiter(qg_lexer *lx)
{
    const unsigned char *s = lx->sql;
    size_t p = lx->pos + 1;
    bool mb = reads_multibyte(lx);
    while (p < lx->len && s[p] != '$') {
        unsigned char c = s[p];
        bool first = p == lx->pos + 1;
        if (c >= 0x80) {
            size_t n = mb ? encoding_char_len(lx->ctx->encoding, s + p, lx->len - p) : 1;
            if (n == 0)
                return 0; /* the invalid-sequence finding comes from the body scan */
            p += n;
            continue;
        }
        if (!(is_ident_cont(c) && c != '$' && !(first && is_digit(c))))
            return 0;
        p++;
    }
    if (p >= lx->len)
        return 0;
    return p + 1 - lx->pos;
}

/* Quoted text from the high byte at lx->pos, by the encoding's automaton
 * (one table step per byte, no branch per character), up to a byte that
 * ends it between characters; notes a trail byte N takes for a quote or an
 * escape.  False, with nothing consumed, when the bytes are not all valid:
 * consume_high then finds and reports them. */
static inline __attribute__((always_inline)) bool run_quoted_dfa(qg_lexer *lx)
{
    uint64_t state = 0, before = 0;
    size_t pos = dfa_run(lx->dfa->rows, lx->sql, lx->pos, lx->len, &state, &before);
    if (state == DFA_ERROR)
        return false;
    if (state == DFA_STOP)
        state = before; /* between characters */
    else if (state != 0 && state != lx->dfa->ambiguous)
        return false; /* a character cut by the end */
    if (state != 0)
        lx->ambiguous = true;
    lx->pos = pos;
    lx->last_mb_end = pos;
    return true;
}

/* Inside a token: advances to the next byte that matters for the state
 * `mask` (one STOP_ bit), consuming multibyte characters and NUL bytes on
 * the way, with their findings.  Returns that byte, or -1 at the end. */
static inline __attribute__((always_inline)) int next_in_token(qg_lexer *lx, const qg_token *tok,
                                                                unsigned mask, bool mb, bool check)
{
    for (;;) {
        skip_plain(lx, mask, mb);
        if (lx->pos >= lx->len)
            return -1;
        unsigned char c = lx->sql[lx->pos];
        if (c >= 0x80) {
            if (mask == STOP_QUOTED && lx->dfa && run_quoted_dfa(lx))
                continue;
            consume_high(lx, tok->start, lx->len, check, false, mask);
        } else if (c == '\0')
            add_finding(lx, QG_REASON_NUL_BYTE, lx->pos++, tok->start, lx->len);
        else
            return c;
    }
}

/* The gap of a continuation holds whitespace and -- comments; the server
 * converts those bytes with the rest, so they are checked like the rest. */
static void check_gap(qg_lexer *lx, size_t to, size_t span_start, bool mb)
{
    while (lx->pos < to) {
        unsigned char c = lx->sql[lx->pos];
        if (c == '\0')
            add_finding(lx, QG_REASON_NUL_BYTE, lx->pos++, span_start, lx->len);
        else if (c >= 0x80 && mb)
            consume_high(lx, span_start, lx->len, true, false, 0); /* never crosses the newline */
        else
            lx->pos++;
    }
}

typedef enum quote_rules {
    RULES_DOUBLING,  /* '' doubles; '\' is an ordinary byte */
    RULES_BACKSLASH, /* '' doubles and '\' escapes */
    RULES_BARE       /* the first quote ends it (B'', X'') */
} quote_rules;

/* Whether quoted text of these rules ends at its first quote byte that is
 * not doubled, found with memchr: where no character of the encoding holds
 * that byte (S reads a byte of an invalid sequence alone), every such byte
 * is a quote.  Only for a lexer whose findings no one reads (the
 * rewriter's, the checker's second pass): reading character by character
 * is what finds invalid sequences and NUL bytes. */
static bool ends_at_quote_byte(const qg_lexer *lx, unsigned char quote, quote_rules rules)
{
    const uint8_t *trail = lx->ctx->encoding->trail;
    return !lx->findings && rules == RULES_DOUBLING && !(trail && trail[quote]);
}

/* QG_READ_NAIVE_AWARE: whether the quote at lx->pos is a step quote (the
 * bytes `lead 5c q`, the first two read as one character, `lead q` none).
 * An escaper that believes the encoding copies the character `lead 5c`
 * whole, and writes `lead \ q` for an input `lead q`, stepping over the
 * lead alone: the quote may end the literal or be escaped, and nothing
 * else in the bytes tells which. */
static bool at_step_quote(const qg_lexer *lx, unsigned char quote)
{
    const unsigned char *s = lx->sql;
    size_t at = lx->pos;
    if (at < 2 || lx->last_mb_end != at || s[at - 1] != '\\' || s[at - 2] < 0x80)
        return false;
    const qg_encoding *enc = lx->ctx->encoding;
    const unsigned char lead_quote[2] = {s[at - 2], quote};
    return encoding_char_len(enc, s + at - 2, 2) == 2 && encoding_char_len(enc, lead_quote, 2) != 2;
}

/* At a quote of the literal: whether the reading takes it as escaped (a
 * step quote before steps_until); notes the first step quote from there on
 * (step_after), read as the literal's quote. */
static bool steps_over_lead(qg_lexer *lx, unsigned char quote)
{
    if (lx->reading != QG_READ_NAIVE_AWARE || lx->step_after || !at_step_quote(lx, quote))
        return false;
    if (lx->pos < lx->steps_until)
        return true;
    lx->step_after = lx->pos + 1;
    return false;
}

/* Scans a quoted string or identifier whose opening quote is at lx->pos. */
static void scan_quoted(qg_lexer *lx, qg_token *tok, unsigned char quote, quote_rules rules,
                        bool check_encoding)
{
    const unsigned char *s = lx->sql;
    bool mb = reads_multibyte(lx) && !(naive_bytewise(lx) && tok->kind == QG_TOK_STRING);
    bool pg = is_pg(lx);
    bool by_byte = ends_at_quote_byte(lx, quote, rules);
    lx->step_after = 0;
    lx->pos++;
    /* The checker's reading before this one read the literal up to there
     * alike: each reading of a literal with step quotes costs only its own
     * stretch. */
    if (lx->steps_until > lx->pos)
        lx->pos = lx->steps_until;
    for (;;) {
        int c;
        if (by_byte) {
            const unsigned char *q = memchr(s + lx->pos, quote, lx->len - lx->pos);
            lx->pos = q ? (size_t)(q - s) : lx->len;
            c = q ? quote : -1;
        } else {
            c = next_in_token(lx, tok, STOP_QUOTED, mb, check_encoding);
        }
        if (c < 0) {
            tok->unterminated = true;
            break;
        }
        if (c == '\\') {
            if (rules != RULES_BACKSLASH) {
                if (tok->kind == QG_TOK_STRING && rules == RULES_DOUBLING)
                    lx->ambiguous = true; /* N takes it as an escape */
                lx->pos++;
                continue;
            }
            lx->pos++;
            if (lx->pos >= lx->len) {
                tok->unterminated = true;
                break;
            }
            if (s[lx->pos] == quote && lx->watch_escaped_quotes) {
                lx->escaped_quotes ^= quote == '\'' ? 1u : 2u; /* a doubler's literal ends */
                if (!lx->first_escaped_quote)
                    lx->first_escaped_quote = lx->pos;
            }
            /* An escaper that trusts lead bytes writes '\' only before
             * ASCII (MySQL's escapers): past a high byte there its reading
             * is out of step, as one left open is. */
            if (!pg && lx->reading == QG_READ_NAIVE_TRUSTING && s[lx->pos] >= 0x80) {
                tok->unterminated = true;
                lx->pos = lx->len;
                break;
            }
            /* PG lexes after conversion, so '\' takes a whole character;
             * MySQL's lexer skips exactly one byte. */
            if (pg && mb && s[lx->pos] >= 0x80)
                consume_high(lx, tok->start, lx->len, check_encoding, false, 0);
            else if (s[lx->pos] == '\0')
                add_finding(lx, QG_REASON_NUL_BYTE, lx->pos++, tok->start, lx->len);
            else if (s[lx->pos++] >= 0x80)
                lx->escaped_high_end = lx->pos;
        } else if (c != quote || (rules == RULES_BACKSLASH && steps_over_lead(lx, quote))) {
            /* another kind of quote, or one escaped by a backslash after a
             * lead the escaper stepped over alone */
            lx->pos++;
        } else if (rules != RULES_BARE && lx->pos + 1 < lx->len && s[lx->pos + 1] == quote) {
            lx->pos += 2;
        } else {
            lx->pos++;
            size_t next = (pg && quote == '\'') ? qg_pg_continuation(lx->sql, lx->len, lx->pos) : 0;
            if (!next)
                break;
            check_gap(lx, next, tok->start, mb);
            lx->pos = next + 1;
        }
    }
    tok->end = lx->pos;
}

/* Whether a reading that takes a backslash as an escape (N's) may end the
 * literal s[from, to) elsewhere than S, which takes it as one only when
 * `s_escapes`.  A quote byte is never part of a character, so the readings
 * part only where one takes a quote as escaped and the other does not: at
 * a quote right after a backslash; and where both escape, only when that
 * run of backslashes follows a high byte, which S may read with the first
 * of them as one character. */
static bool readings_may_part(const unsigned char *s, size_t from, size_t to, unsigned char quote,
                              bool s_escapes)
{
    for (size_t at = from + 1; at < to; at++) {
        const unsigned char *q = memchr(s + at, quote, to - at);
        if (!q)
            return false;
        at = (size_t)(q - s);
        if (s[at - 1] != '\\')
            continue;
        if (!s_escapes)
            return true;
        size_t run = at - 1;
        while (s[run - 1] == '\\')
            run--; /* stops at the opening quote at the latest */
        if (s[run - 1] >= 0x80)
            return true;
    }
    return false;
}

/* Scans a string literal whose opening quote is at lx->pos with S's rules
 * `rules`; when S met a byte N may read otherwise, reads the same literal
 * as N does (`naive_rules`, byte by byte) and sets lx->diverges if N ends it
 * elsewhere.  Up to the first such literal both readings agree token by
 * token, so the checker compares them in full only then.  A lexer without
 * findings (the rewriter's, the checker's second pass) has no use for
 * that. */
static void scan_string(qg_lexer *lx, qg_token *tok, unsigned char quote, quote_rules rules,
                        quote_rules naive_rules, bool check_encoding)
{
    size_t q = lx->pos;
    bool ambiguous_before = lx->ambiguous;
    lx->ambiguous = false;
    scan_quoted(lx, tok, quote, rules, check_encoding);
    if (lx->ambiguous && !is_naive(lx) && lx->findings &&
        (naive_rules != RULES_BACKSLASH ||
         readings_may_part(lx->sql, q, tok->end, quote, rules == RULES_BACKSLASH))) {
        /* The byte-wise backslash escaper's reading and, where S does not
         * read backslash escapes, the encoding-aware one's (which only a
         * trail byte 0x5c tells from the byte-wise one).  A quote
         * doubler's reading parts from S at every escaped quote; the
         * lexer counts those instead (doubler_sees_literal). */
        static const qg_reading naive[2] = {QG_READ_NAIVE, QG_READ_NAIVE_AWARE};
        bool wanted[2] = {true, rules == RULES_DOUBLING && lx->ctx->encoding->ascii_trail};
        for (int i = 0; i < 2 && !lx->diverges; i++) {
            if (!wanted[i])
                continue;
            qg_lexer reread = *lx;
            qg_token naive_tok = *tok;
            reread.reading = naive[i];
            reread.findings = NULL;
            reread.pos = q;
            naive_tok.unterminated = false;
            scan_quoted(&reread, &naive_tok, quote, naive_rules, false);
            if (naive_tok.end != tok->end || naive_tok.unterminated != tok->unterminated)
                lx->diverges = true;
        }
    }
    lx->ambiguous = lx->ambiguous || ambiguous_before;
}

/* Body of a PG dollar quote: opaque up to the same delimiter. */
static void scan_dollar(qg_lexer *lx, qg_token *tok, size_t delim_len)
{
    const unsigned char *s = lx->sql;
    const unsigned char *delim = s + lx->pos;
    bool mb = reads_multibyte(lx);
    lx->pos += delim_len;
    for (;;) {
        if (next_in_token(lx, tok, STOP_DOLLAR, mb, true) < 0) {
            tok->unterminated = true;
            break;
        }
        if (lx->len - lx->pos >= delim_len && memcmp(s + lx->pos, delim, delim_len) == 0) {
            lx->pos += delim_len;
            break;
        } else {
            lx->pos++;
        }
    }
    tok->end = lx->pos;
}

/* A comment: "--"/"#" to the end of the line, or a block comment. */
static void scan_comment(qg_lexer *lx, qg_token *tok, bool block)
{
    const unsigned char *s = lx->sql;
    bool pg = is_pg(lx);
    /* PG converts the whole query, comments included: check them there. */
    bool mb = pg && reads_multibyte(lx);
    size_t depth = 1;
    lx->pos += block ? 2 : 1;
    for (;;) {
        int c = block ? next_in_token(lx, tok, STOP_BLOCK, mb, true)
                : pg  ? next_in_token(lx, tok, STOP_LINE, mb, true)
                      : next_in_token(lx, tok, STOP_MY_LINE, mb, true);
        if (c < 0) {
            tok->unterminated = block;
            break;
        }
        if (!block) {
            break; /* the newline is not part of the comment */
        } else if (c == '*' && lx->pos + 1 < lx->len && s[lx->pos + 1] == '/') {
            lx->pos += 2;
            if (!pg || --depth == 0)
                break;
        } else if (pg && c == '/' && lx->pos + 1 < lx->len && s[lx->pos + 1] == '*') {
            lx->pos += 2;
            depth++;
        } else {
            lx->pos++;
        }
    }
    tok->end = lx->pos;
}

static bool is_mysql_dash_comment(const qg_lexer *lx)
{
    size_t p = lx->pos + 2;
    if (p >= lx->len)
        return true;
    unsigned char c = lx->sql[p];
    return qg_is_space_or_control(c) || qg_encoding_dash_space(lx->ctx->encoding, c);
}

static bool lower_is(unsigned char c, char want)
{
    return (c | 0x20) == (unsigned char)want;
}

/* MySQL introducers (`_latin1'…'`, `_binary 'x'`): the character set the
 * word before the quote at `q` names, or NULL.  The literal is still lexed
 * in the connection's character set, but its bytes are meant for this one. */
static const qg_encoding *mysql_introducer(const qg_lexer *lx, size_t q)
{
    const unsigned char *s = lx->sql;
    while (q > 0 && qg_is_space(s[q - 1]))
        q--;
    size_t start = q;
    while (start > 0 && start != lx->last_mb_end && is_ident_cont(s[start - 1]) && q - start < 32)
        start--;
    if (start == q || s[start] != '_' || !at_token_start(lx, start))
        return NULL;
    char name[32];
    size_t n = q - start - 1;
    if (n == 0 || n >= sizeof name)
        return NULL;
    memcpy(name, s + start + 1, n);
    name[n] = '\0';
    return qg_encoding_find(QG_DIALECT_MYSQL, name);
}

/* Well-formedness of an introduced literal's body, in its own character
 * set, with the same findings as for the connection's. */
static void check_introduced(qg_lexer *lx, const qg_token *tok, const qg_encoding *introduced)
{
    const unsigned char *s = lx->sql;
    size_t end = tok->unterminated ? tok->end : tok->end - 1;
    for (size_t p = tok->start + 1; p < end;) {
        size_t n = s[p] < 0x80 ? 1 : qg_encoding_char_len(introduced, s + p, end - p);
        if (n == 0) {
            qg_reason reason = illformed_reason(introduced, s, p, lx->len);
            if (reason != QG_REASON_NONE)
                add_finding(lx, reason, p, tok->start, tok->end);
            n = 1;
        }
        p += n;
    }
}

/* A string at lx->pos (a quote): finds its prefix and rules. */
static void lex_string(qg_lexer *lx, qg_token *tok)
{
    const unsigned char *s = lx->sql;
    size_t q = lx->pos;
    bool naive = is_naive(lx);
    tok->kind = QG_TOK_STRING;
    tok->form = QG_FORM_PLAIN;
    tok->start = q;
    if (q >= 1 && at_token_start(lx, q - 1)) {
        unsigned char p = s[q - 1] | 0x20;
        if (p == 'e' && is_pg(lx))
            tok->form = QG_FORM_ESCAPE;
        else if (p == 'n')
            tok->form = QG_FORM_NATIONAL;
        else if (p == 'b')
            tok->form = QG_FORM_BIT;
        else if (p == 'x')
            tok->form = QG_FORM_HEX;
        if (tok->form != QG_FORM_PLAIN)
            tok->start = q - 1;
    }
    if (is_pg(lx) && tok->form == QG_FORM_PLAIN && q >= 2 && s[q - 1] == '&' &&
        lower_is(s[q - 2], 'u') && at_token_start(lx, q - 2)) {
        tok->form = QG_FORM_UNICODE;
        tok->start = q - 2;
    }
    if (tok->form == QG_FORM_BIT || tok->form == QG_FORM_HEX) {
        scan_string(lx, tok, '\'', RULES_BARE, RULES_BARE, is_pg(lx)); /* PG converts them too */
        if (!is_pg(lx) && lx->findings && bare_body_hides_quote(lx, q + 1, tok->end))
            lx->diverges = true;
        return;
    }
    const qg_encoding *introduced = is_pg(lx) ? NULL : mysql_introducer(lx, q);
    if (introduced && strcmp(qg_encoding_name(introduced), "binary") == 0)
        tok->form = QG_FORM_BINARY;
    if (introduced && introduced == lx->ctx->encoding)
        introduced = NULL; /* checked as the connection's, below */
    /* A byte-naive escaper knows no string forms: addslashes output is put
     * in U&'' too, a doubler's in E''. */
    bool backslash;
    if (naive)
        backslash = lx->reading != QG_READ_NAIVE_DOUBLING;
    else if (is_pg(lx))
        backslash = tok->form == QG_FORM_ESCAPE ||
                    (tok->form != QG_FORM_UNICODE && !(lx->ctx->flags & QG_STD_STRINGS));
    else
        backslash = !(lx->ctx->flags & QG_NO_BACKSLASH_ESCAPES);
    scan_string(lx, tok, '\'', backslash ? RULES_BACKSLASH : RULES_DOUBLING, RULES_BACKSLASH,
                introduced == NULL);
    /* Every byte is a character of binary: nothing to check there; and
     * only S's lexer has findings to give. */
    if (introduced && tok->form != QG_FORM_BINARY && lx->reading == QG_READ_SERVER &&
        lx->findings)
        check_introduced(lx, tok, introduced);
}

QG_HOT void qg_lexer_init(qg_lexer *lx, const qg_context *ctx, const char *sql, size_t len,
                          qg_reading reading, qg_result *findings)
{
    memset(lx, 0, sizeof *lx);
    lx->ctx = ctx;
    lx->sql = (const unsigned char *)sql;
    lx->len = len;
    lx->reading = reading;
    lx->multibyte = !qg_encoding_is_single_byte(ctx->encoding);
    lx->vectors = qg_vectors_in_use();
    lx->dfa = lx->vectors == QG_VECTORS_REFERENCE ? NULL : encoding_dfa(ctx->encoding);
    lx->findings = findings;
}

void qg_lexer_read_by_reference(qg_lexer *lx)
{
    lx->vectors = QG_VECTORS_REFERENCE;
    lx->dfa = NULL;
}

qg_lexer *qg_lexer_new(const qg_context *ctx, const char *sql, size_t len, qg_reading reading,
                       qg_result *findings)
{
    qg_lexer *lx = malloc(sizeof *lx);
    if (lx)
        qg_lexer_init(lx, ctx, sql, len, reading, findings);
    return lx;
}

void qg_lexer_free(qg_lexer *lx)
{
    free(lx);
}

/* At a token S reads as no literal of the quote `kinds` (bit 0: single,
 * bit 1: double) stand for: a quote doubler's reading is inside such a
 * literal there when an odd number of its quotes before were escaped by a
 * backslash, and the token (a comment, a dollar quote, a quoted identifier,
 * a string of the other quote) may hide the quote that leaves over (one
 * must follow, for the doubler's literal to end), so the checker compares
 * the readings (docs/DETECTION.md). */
static void doubler_sees_literal(qg_lexer *lx, size_t token, unsigned kinds)
{
    unsigned open = lx->escaped_quotes & kinds;
    if (open && lx->findings)
        lx->doubler_parts = lx->doubler_parts || qg_quote_after(lx->sql, lx->len, token, open);
}

enum { DOUBLER_SINGLE = 1u, DOUBLER_DOUBLE = 2u, DOUBLER_BOTH = 3u };

bool qg_lexer_next(qg_lexer *lx, qg_token *tok)
{
    const unsigned char *s = lx->sql;
    bool pg = is_pg(lx);
    bool mb = reads_multibyte(lx);
    memset(tok, 0, sizeof *tok);
    for (;;) {
        if (pg)
            skip_plain(lx, STOP_PG_CODE, mb);
        else
            skip_plain(lx, STOP_MY_CODE, mb);
        if (lx->pos >= lx->len)
            return false;
        size_t at = lx->pos;
        unsigned char c = s[at];
        unsigned char next = at + 1 < lx->len ? s[at + 1] : 0;
        if (c >= 0x80) {
            if (pg)
                consume_high(lx, at, at, true, true, STOP_PG_CODE);
            else
                consume_high(lx, at, at, true, true, STOP_MY_CODE);
        } else if (c == '\0') {
            add_finding(lx, QG_REASON_NUL_BYTE, at, at, at);
            lx->pos++;
        } else if (c == '\'') {
            doubler_sees_literal(lx, at, DOUBLER_DOUBLE);
            lex_string(lx, tok);
            return true;
        } else if (c == '"') {
            bool ident = pg || (lx->ctx->flags & QG_ANSI_QUOTES);
            tok->kind = ident ? QG_TOK_IDENT : QG_TOK_STRING;
            tok->form = ident ? QG_FORM_PLAIN : QG_FORM_DOUBLE;
            tok->start = at;
            if (pg && at >= 2 && s[at - 1] == '&' && lower_is(s[at - 2], 'u') &&
                at_token_start(lx, at - 2)) {
                tok->form = QG_FORM_UNICODE;
                tok->start = at - 2;
            }
            doubler_sees_literal(lx, at, ident ? DOUBLER_BOTH : DOUBLER_SINGLE);
            if (ident) {
                scan_quoted(lx, tok, '"', RULES_DOUBLING, true);
                return true;
            }
            bool backslash = is_naive(lx) ? lx->reading != QG_READ_NAIVE_DOUBLING
                                          : !(lx->ctx->flags & QG_NO_BACKSLASH_ESCAPES);
            scan_string(lx, tok, '"', backslash ? RULES_BACKSLASH : RULES_DOUBLING,
                        RULES_BACKSLASH, true);
            return true;
        } else if (c == '`') {
            doubler_sees_literal(lx, at, DOUBLER_BOTH);
            tok->kind = QG_TOK_IDENT;
            tok->start = at;
            scan_quoted(lx, tok, '`', RULES_DOUBLING, true);
            return true;
        } else if (c == '$') {
            size_t delim = dollar_can_start(lx, at) ? dollar_delimiter(lx) : 0;
            if (!delim) {
                lx->pos++;
                continue;
            }
            doubler_sees_literal(lx, at, DOUBLER_BOTH);
            tok->kind = QG_TOK_DOLLAR;
            tok->start = at;
            scan_dollar(lx, tok, delim);
            return true;
        } else if (c == '-' && next == '-' && (pg || is_mysql_dash_comment(lx))) {
            tok->kind = QG_TOK_COMMENT;
            tok->start = at;
            lx->pos++;
            scan_comment(lx, tok, false);
            doubler_sees_literal(lx, tok->start, DOUBLER_BOTH);
            return true;
        } else if (c == '#') {
            tok->kind = QG_TOK_COMMENT;
            tok->start = at;
            scan_comment(lx, tok, false);
            doubler_sees_literal(lx, tok->start, DOUBLER_BOTH);
            return true;
        } else if (c == '/' && next == '*') {
            qg_exec_comment ec;
            size_t marker = pg ? 0 : qg_my_exec_comment(s, at, lx->len, &ec);
            if (marker) { /* whether it runs is the server's version's say: read as SQL */
                lx->exec_comment_depth = 1;
                lx->pos += marker;
                continue;
            }
            tok->kind = QG_TOK_COMMENT;
            tok->start = at;
            scan_comment(lx, tok, true);
            doubler_sees_literal(lx, tok->start, DOUBLER_BOTH);
            return true;
        } else if (c == '*' && next == '/' && lx->exec_comment_depth) {
            lx->exec_comment_depth = 0;
            lx->pos += 2;
        } else {
            lx->pos++;
        }
    }
}
