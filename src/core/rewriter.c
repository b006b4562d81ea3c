/*
 * Rewrite mode: which string literals of a PostgreSQL statement can become
 * $n parameters of unknown type (OID 0) without changing what the server
 * does, and their decoded values.
 *
 * Why a literal and an unknown-type parameter can differ (all checked
 * against a PostgreSQL 15 server; the tests in tests/t/60-rewrite.t):
 *  - the server converts an unknown literal with the type's input function
 *    while parsing, and for INTERVAL it passes the column's typmod, so
 *    '1' means 1 hour for an INTERVAL HOUR column but a parameter means
 *    1 second (truncated to 0).  Assignments (INSERT VALUES, UPDATE SET)
 *    therefore only take values without digits, which no interval field
 *    can read as a number;
 *  - typename('literal') is a cast only for a literal (func_get_detail);
 *    arguments of type "any" (concat, format, pg_typeof) stay unknown for a
 *    literal and fail for a parameter: function arguments are replaced only
 *    for built-in functions with fixed argument types (func_names below);
 *  - GROUP BY / DISTINCT / ON CONFLICT inference match expressions by
 *    equality, and $1 never equals $2: in a statement with GROUP BY, HAVING
 *    or DISTINCT only literals under WHERE/FROM/SET/VALUES/LIMIT clauses
 *    are replaced, and never inside an ON CONFLICT target;
 *  - a bare select-list literal, ORDER BY 'x', 'x' COLLATE …, DATE 'x',
 *    ANY('{…}'), N'…', B'…', X'…' are all left alone because a literal is
 *    replaced only in the positions listed in decide_rule();
 *  - decoding: escapes that make a byte >= 0x80 or NUL are read by the
 *    server in the *server* encoding, '\'' depends on backslash_quote, a
 *    backslash in a plain literal with standard_conforming_strings off makes
 *    a warning: all left alone.
 * The operand boundaries are found from the tokens on both sides: the token
 * before the literal names the operator or list it belongs to, and the token
 * after it must bind less tightly than that operator (ends_operand()).
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "quoteguard.h"
#include "ascii.h"
#include "code_tokens.h"
#include "encoding_tables.h"
#include "lexer_internal.h"
#include "rewriter.h"
#include "sql_words.h"

/* ------------------------------------------------------------- characters */

static bool is_space(unsigned char c)
{
    return qg_char_class[c] == QG_CC_SPACE;
}

static bool is_digit(unsigned char c)
{
    return qg_char_class[c] == QG_CC_DIGIT;
}

/* Bytes of the character at p (a bad sequence counts as one byte). */
static size_t char_bytes(const qg_encoding *enc, const unsigned char *p, size_t avail)
{
    if (*p < 0x80 || !enc->forms) /* a single-byte encoding's every byte is a character */
        return 1;
    size_t n = encoding_char_len(enc, p, avail);
    return n ? n : 1;
}

/* Where the character at s[p] ends.  Its length (1 to 4) goes through a
 * branch instead of into the address, so reading the next character need
 * not wait for this one's table lookups (docs/PERFORMANCE.md, "Choices in
 * the code"). */
static size_t next_char(const qg_encoding *enc, const unsigned char *s, size_t p, size_t end)
{
    switch (char_bytes(enc, s + p, end - p)) {
    case 1:
        return p + 1;
    case 2:
        return p + 2;
    case 3:
        return p + 3;
    default:
        return p + 4;
    }
}

/* ----------------------------------------------------------------- tokens */

typedef enum tok_kind {
    T_END = 0,
    T_WORD,      /* identifier or keyword */
    T_NUMBER,
    T_STRING,    /* a string literal of any form (lexer token) */
    T_QIDENT,    /* "delimited identifier" */
    T_DOLLAR,    /* $tag$ … $tag$ */
    T_PARAM,     /* $1 */
    T_OP,        /* operator, PostgreSQL's rules for where it ends */
    T_PUNCT,     /* ( ) [ ] , ; . :: and other single bytes */
    T_BROKEN     /* unterminated literal, identifier or comment */
} tok_kind;

typedef struct sql_tok {
    tok_kind kind;
    qg_string_form form; /* T_STRING */
    size_t start, end;
} sql_tok;

/* Tokens are read in place in a ring: copying one out loaded what was just
 * stored field by field as one wider load, which the store buffer cannot
 * forward.  The walker looks up to LOOKAHEAD tokens ahead and keeps
 * pointers to the two before the current one, which the ring's other
 * slots leave in place. */
#define LOOKAHEAD 8
#define RING 16

/* The first pass's tokens, which the second reads in place, so that a
 * query is split into tokens once.  A query with more tokens than fit is
 * read on past them from where the first pass was after the last. */
#define CACHED_TOKENS 64

typedef struct token_cache {
    sql_tok tokens[CACHED_TOKENS];
    unsigned count;
    qg_code_tokens resume; /* set when count is CACHED_TOKENS */
} token_cache;

/* Tokens of the whole query as code_tokens.h reads them; comments are
 * skipped. */
typedef struct tok_stream {
    const qg_context *ctx;
    const unsigned char *s;
    size_t len;
    qg_code_tokens src;
    token_cache *cache;
    /* Token i is at slot(i): head is the next token, tail the next to
     * produce.  (Each call moves only one of them: a head and a count
     * moved together became one wide load of two separate stores.) */
    unsigned head, tail;
    sql_tok ring[RING];   /* the tokens past the cache; not cleared first */
} tok_stream;

/* The first pass (replay false) fills `cache`; the second (replay true)
 * reads its tokens, then goes on from cache->resume if there are more. */
static void stream_init(tok_stream *ts, const qg_context *ctx, const char *sql, size_t len,
                        token_cache *cache, bool replay)
{
    /* Field by field: a memset of the whole head costs more than these
     * stores (docs/PERFORMANCE.md, "Choices in the code"). */
    ts->ctx = ctx;
    ts->s = (const unsigned char *)sql;
    ts->len = len;
    ts->cache = cache;
    ts->head = 0;
    if (!replay) {
        ts->tail = 0;
        qg_code_tokens_init(&ts->src, ctx, sql, len);
        return;
    }
    ts->tail = cache->count;
    if (cache->count == CACHED_TOKENS) {
        ts->src = cache->resume;
    } else { /* the query ended within the cache: only its end is left */
        ts->src.pos = len;
        ts->src.have_lexed = false;
        ts->src.gap_end = len;
    }
}

/* The next token but comments, in the rewriter's kinds: an unterminated
 * token, and what only MySQL has, is T_BROKEN, which no statement passes. */
static void produce(tok_stream *ts, sql_tok *t)
{
    static const tok_kind kinds[] = {
        [QG_CODE_END] = T_END,       [QG_CODE_WORD] = T_WORD,     [QG_CODE_NUMBER] = T_NUMBER,
        [QG_CODE_PARAM] = T_PARAM,   [QG_CODE_OPERATOR] = T_OP,   [QG_CODE_PUNCT] = T_PUNCT,
        [QG_CODE_STRING] = T_STRING, [QG_CODE_QIDENT] = T_QIDENT, [QG_CODE_DOLLAR] = T_DOLLAR,
        [QG_CODE_COMMENT] = T_BROKEN, [QG_CODE_EXEC_OPEN] = T_BROKEN, [QG_CODE_EXEC_CLOSE] = T_BROKEN};
    qg_code_token ct;
    while (qg_code_next(&ts->src, &ct) && ct.kind == QG_CODE_COMMENT && !ct.unterminated)
        ;
    bool lexed = ct.kind >= QG_CODE_STRING && ct.kind <= QG_CODE_COMMENT;
    t->kind = lexed && ct.unterminated ? T_BROKEN : kinds[ct.kind];
    t->form = lexed ? ct.form : QG_FORM_PLAIN;
    t->start = ct.start;
    t->end = ct.end;
}

static sql_tok *slot(tok_stream *ts, unsigned i)
{
    return i < CACHED_TOKENS ? &ts->cache->tokens[i] : &ts->ring[i % RING];
}

/* Produces tokens up to the k-th from now: out of line, so that a token
 * produced already costs its caller no more than a compare. */
static __attribute__((noinline)) void produce_up_to(tok_stream *ts, unsigned k)
{
    while (ts->tail - ts->head <= k) {
        produce(ts, slot(ts, ts->tail));
        if (++ts->tail == CACHED_TOKENS)
            ts->cache->resume = ts->src;
    }
}

/* The k-th token from now (k < LOOKAHEAD); T_END past the end. */
static inline const sql_tok *peek(tok_stream *ts, unsigned k)
{
    if (ts->tail - ts->head <= k)
        produce_up_to(ts, k);
    return slot(ts, ts->head + k);
}

/* The next token, valid until RING - LOOKAHEAD more are taken. */
static const sql_tok *take(tok_stream *ts)
{
    const sql_tok *t = peek(ts, 0);
    ts->head++;
    return t;
}

static const sql_tok no_token = {.kind = T_END};

/* `word` is lower case.  The first letter decides most calls (a query asks
 * dozens of them), before the length and the whole word. */
static inline __attribute__((always_inline)) bool is_word(const tok_stream *ts, const sql_tok *t,
                                                         const char *word)
{
    if (t->kind != T_WORD || (ts->s[t->start] | 0x20) != word[0])
        return false;
    size_t n = strlen(word);
    return t->end - t->start == n && qg_ascii_ncasecmp((const char *)ts->s + t->start, word, n) == 0;
}

/* A word of a list, with its length: the lists are read for every word
 * token, where a strlen() per entry cost more than the compares. */
typedef struct listed_word {
    const char *text; /* lower case */
    size_t len;
} listed_word;
#define LISTED(word) {(word), sizeof(word) - 1}

/* As is_word for each entry, with the token's bytes read once: a list is
 * read for every word token. */
static bool is_word_in(const tok_stream *ts, const sql_tok *t, const listed_word *words)
{
    if (t->kind != T_WORD)
        return false;
    const char *text = (const char *)ts->s + t->start;
    size_t n = t->end - t->start;
    for (; words->text; words++)
        if (words->len == n && words->text[0] == (text[0] | 0x20) &&
            qg_ascii_ncasecmp(text, words->text, n) == 0)
            return true;
    return false;
}

/* A token of `kind` whose bytes are text[0, n). */
static inline __attribute__((always_inline)) bool is_text(const tok_stream *ts, const sql_tok *t,
                                                         tok_kind kind, const char *text, size_t n)
{
    return t->kind == kind && t->end - t->start == n && memcmp(ts->s + t->start, text, n) == 0;
}

static bool is_punct(const tok_stream *ts, const sql_tok *t, const char *text)
{
    return is_text(ts, t, T_PUNCT, text, strlen(text));
}

static bool is_op(const tok_stream *ts, const sql_tok *t, const char *text)
{
    return is_text(ts, t, T_OP, text, strlen(text));
}

/* ------------------------------------------------------------- word lists */

static const listed_word statement_words[] = {
    LISTED("select"), LISTED("insert"), LISTED("update"), LISTED("delete"), LISTED("values"),
    LISTED("with"), {NULL, 0}};

/* Built-in functions whose arguments all have fixed types (no "any", no
 * polymorphic-only argument) and whose names are not type names, so an
 * unknown argument resolves the same as a literal or as a parameter. */
static const listed_word func_names[] = {
    LISTED("lower"), LISTED("upper"), LISTED("initcap"), LISTED("length"), LISTED("char_length"),
    LISTED("character_length"), LISTED("octet_length"), LISTED("bit_length"), LISTED("md5"),
    LISTED("replace"), LISTED("split_part"), LISTED("strpos"), LISTED("starts_with"),
    LISTED("left"), LISTED("right"), LISTED("lpad"), LISTED("rpad"), LISTED("ltrim"),
    LISTED("rtrim"), LISTED("btrim"), LISTED("repeat"), LISTED("reverse"), LISTED("translate"),
    LISTED("substr"), LISTED("regexp_replace"), LISTED("regexp_match"), LISTED("regexp_matches"),
    LISTED("regexp_split_to_array"), LISTED("regexp_split_to_table"), LISTED("regexp_like"),
    LISTED("to_tsvector"), LISTED("to_tsquery"), LISTED("plainto_tsquery"),
    LISTED("phraseto_tsquery"), LISTED("websearch_to_tsquery"), LISTED("to_char"),
    LISTED("to_date"), LISTED("to_timestamp"), LISTED("to_number"), LISTED("date_trunc"),
    LISTED("date_part"), LISTED("coalesce"), LISTED("nullif"), LISTED("encode"), LISTED("decode"),
    LISTED("convert_to"), LISTED("convert_from"), LISTED("quote_ident"),
    LISTED("string_to_array"), {NULL, 0}};

/* Cast targets that take no typmod and are not INTERVAL: '…'::t and $1::t
 * run the same input function. */
static const listed_word cast_types[] = {
    LISTED("text"), LISTED("varchar"), LISTED("bpchar"), LISTED("name"), LISTED("int2"),
    LISTED("int4"), LISTED("int8"), LISTED("smallint"), LISTED("integer"), LISTED("int"),
    LISTED("bigint"), LISTED("numeric"), LISTED("float4"), LISTED("float8"), LISTED("real"),
    LISTED("bool"), LISTED("boolean"), LISTED("date"), LISTED("time"), LISTED("timestamp"),
    LISTED("timestamptz"), LISTED("json"), LISTED("jsonb"), LISTED("uuid"), LISTED("bytea"),
    LISTED("inet"), LISTED("cidr"), {NULL, 0}};

/* Tokens that end an operand of a comparison, LIKE or IS DISTINCT FROM:
 * they bind less tightly than any of those operators. */
static const listed_word operand_end_words[] = {
    LISTED("and"), LISTED("or"), LISTED("then"), LISTED("else"), LISTED("end"), LISTED("from"),
    LISTED("where"), LISTED("group"), LISTED("having"), LISTED("window"), LISTED("order"),
    LISTED("limit"), LISTED("offset"), LISTED("fetch"), LISTED("for"), LISTED("returning"),
    LISTED("union"), LISTED("intersect"), LISTED("except"), LISTED("on"), LISTED("join"),
    LISTED("inner"), LISTED("left"), LISTED("right"), LISTED("full"), LISTED("cross"),
    LISTED("natural"), LISTED("asc"), LISTED("desc"), LISTED("nulls"), LISTED("as"), LISTED("do"),
    {NULL, 0}};

static const listed_word limit_end_words[] = {
    LISTED("offset"), LISTED("limit"), LISTED("for"), LISTED("fetch"), LISTED("rows"),
    LISTED("row"), {NULL, 0}};

static const listed_word comparison_ops[] = {
    LISTED("="), LISTED("<>"), LISTED("!="), LISTED("<"), LISTED(">"), LISTED("<="), LISTED(">="),
    {NULL, 0}};

static bool is_op_in(const tok_stream *ts, const sql_tok *t, const listed_word *ops)
{
    if (t->kind != T_OP)
        return false;
    for (; ops->text; ops++)
        if (is_text(ts, t, T_OP, ops->text, ops->len))
            return true;
    return false;
}

/* ----------------------------------------------------- statement facts */

#define MAX_DEPTH 64

typedef struct statement_facts {
    bool grouped;    /* GROUP BY, HAVING or a DISTINCT somewhere */
    bool has_insert; /* VALUES rows may be assignments */
    const char *why; /* NULL when the statement may be rewritten */
} statement_facts;

/* DISTINCT right after IS or IS NOT: the operator IS [NOT] DISTINCT FROM. */
static bool distinct_is_operator(const tok_stream *ts, const sql_tok *prev1, const sql_tok *prev2)
{
    return is_word(ts, prev1, "is") || (is_word(ts, prev1, "not") && is_word(ts, prev2, "is"));
}

/* First pass: one SELECT/INSERT/UPDATE/DELETE/VALUES/WITH statement, no
 * $n of its own, balanced, and whether anything matches expressions. */
static void scan_statement(const qg_context *ctx, const char *sql, size_t len,
                           token_cache *cache, statement_facts *f)
{
    tok_stream ts;
    const sql_tok *prev1 = &no_token, *prev2 = &no_token;
    int depth = 0;
    bool started = false, ended = false;
    memset(f, 0, sizeof *f);
    stream_init(&ts, ctx, sql, len, cache, false);
    for (;;) {
        const sql_tok *t = take(&ts);
        if (t->kind == T_END)
            break;
        if (t->kind == T_BROKEN) {
            f->why = "unterminated token";
            return;
        }
        if (ended) {
            f->why = "more than one statement";
            return;
        }
        if (!started && !is_punct(&ts, t, "(")) {
            if (!is_word_in(&ts, t, statement_words)) {
                f->why = "not a SELECT, INSERT, UPDATE, DELETE, VALUES or WITH statement";
                return;
            }
            started = true;
        }
        if (is_punct(&ts, t, "(") || is_punct(&ts, t, "[")) {
            if (++depth > MAX_DEPTH) {
                f->why = "nested too deeply";
                return;
            }
        } else if (is_punct(&ts, t, ")") || is_punct(&ts, t, "]")) {
            if (--depth < 0) {
                f->why = "unbalanced parentheses";
                return;
            }
        } else if (is_punct(&ts, t, ";")) {
            if (depth != 0) {
                f->why = "unbalanced parentheses";
                return;
            }
            ended = true;
        } else if (t->kind == T_PARAM) {
            f->why = "the query has $n parameters of its own";
            return;
        } else if (is_word(&ts, t, "current_query")) {
            f->why = "the query reads its own text";
            return;
        } else if (is_word(&ts, t, "group")) {
            if (is_word(&ts, peek(&ts, 0), "by"))
                f->grouped = true;
        } else if (is_word(&ts, t, "having")) {
            f->grouped = true;
        } else if (is_word(&ts, t, "distinct")) {
            if (!distinct_is_operator(&ts, prev1, prev2))
                f->grouped = true;
        } else if (is_word(&ts, t, "insert")) {
            f->has_insert = true;
        }
        prev2 = prev1;
        prev1 = t;
    }
    cache->count = ts.tail < CACHED_TOKENS ? ts.tail : CACHED_TOKENS;
    if (!started)
        f->why = "empty query";
    else if (depth != 0)
        f->why = "unbalanced parentheses";
}

/* -------------------------------------------------------------- output */

typedef struct writer {
    char *buf;
    size_t cap;
    size_t len;         /* counts on past cap, so the caller learns the size needed */
    bool watch_digits;  /* set `digit`: only a value that may be an assignment needs it */
    bool digit;         /* an ASCII digit was written (whether or not it fit) */
} writer;

static bool has_digit(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (is_digit(p[i]))
            return true;
    return false;
}

static void put(writer *w, const void *p, size_t n)
{
    if (w->buf && w->len <= w->cap && n <= w->cap - w->len)
        memcpy(w->buf + w->len, p, n);
    if (w->watch_digits && !w->digit)
        w->digit = has_digit(p, n);
    w->len += n;
}

/* n spaces: the padding after "$n". */
static void put_spaces(writer *w, size_t n)
{
    if (w->buf && w->len <= w->cap && n <= w->cap - w->len)
        memset(w->buf + w->len, ' ', n);
    w->len += n;
}

static void put_byte(writer *w, unsigned char c)
{
    put(w, &c, 1);
}

static void put_utf8(writer *w, unsigned long cp)
{
    unsigned char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (unsigned char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (unsigned char)(0xC0 | (cp >> 6));
        b[1] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (unsigned char)(0xE0 | (cp >> 12));
        b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (unsigned char)(0xF0 | (cp >> 18));
        b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    put(w, b, n);
}

/* ------------------------------------------------------------ decoding */

enum { C_END = -1, C_BREAK = -2 };

/* The bytes inside a literal's quotes, '' folded, continuation gaps
 * (whitespace with a newline, -- comments) reported as C_BREAK.  The bytes
 * of a multibyte character come back one by one with *raw set after the
 * first, so a trail byte is never taken for a quote or a backslash.
 * Between the bytes a decoder looks at (the quote, NUL and its escape
 * character), content_run() copies whole runs. */
typedef struct content {
    const unsigned char *s;
    const qg_encoding *enc;
    size_t pos, end;
    size_t raw_left;
    unsigned char stops[3];  /* quote, NUL and the escape character, if any */
    int nstops;
    size_t next_stop[3];     /* where stops[i] is next, when by byte (end: nowhere) */
    bool by_character;       /* one of stops[] can be a trail byte */
} content;

static void content_init(content *c, const unsigned char *s, const qg_encoding *enc,
                         size_t start, size_t end, unsigned char escape)
{
    c->s = s;
    c->enc = enc;
    c->pos = start;
    while (c->pos < end && s[c->pos] != '\'')
        c->pos++; /* past the prefix (E, U&) */
    c->pos++;
    c->end = end;
    c->raw_left = 0;
    c->stops[0] = '\'';
    c->stops[1] = '\0';
    c->stops[2] = escape;
    c->nstops = escape == '\'' ? 2 : 3;
    for (int i = 0; i < 3; i++)
        c->next_stop[i] = 0; /* before pos: not looked for yet */
    /* Otherwise every stop byte starts a character, and memchr finds them. */
    const uint8_t *trail = enc->trail;
    c->by_character = trail && (trail['\''] || trail[0] || trail[escape]);
}

/* Where the run from c->pos ends: at the next stop byte that starts a
 * character, or at the end. */
static size_t run_end(content *c)
{
    size_t p = c->pos;
    if (c->by_character) {
        while (p < c->end && c->s[p] != c->stops[0] && c->s[p] != c->stops[1] &&
               c->s[p] != c->stops[2])
            p = next_char(c->enc, c->s, p, c->end);
        return p;
    }
    size_t stop = c->end;
    for (int i = 0; i < c->nstops; i++) {
        if (c->next_stop[i] < p) {
            const unsigned char *hit = memchr(c->s + p, c->stops[i], c->end - p);
            c->next_stop[i] = hit ? (size_t)(hit - c->s) : c->end;
        }
        if (c->next_stop[i] < stop)
            stop = c->next_stop[i];
    }
    return stop;
}

/* Writes the bytes up to the next stop byte as they are, with what is left
 * of a multibyte character begun before: what content_next() would give
 * one by one, for the decoder to write unchanged.  (No encoding takes NUL
 * for a trail byte, so a run holds no NUL for decode_plain to refuse.) */
static void content_run(content *c, writer *w)
{
    size_t start = c->pos;
    c->pos += c->raw_left;
    c->raw_left = 0;
    c->pos = run_end(c);
    put(w, c->s + start, c->pos - start);
}

static int content_next(content *c, bool *raw)
{
    *raw = false;
    if (c->raw_left) {
        c->raw_left--;
        *raw = true;
        return c->s[c->pos++];
    }
    if (c->pos >= c->end)
        return C_END;
    unsigned char b = c->s[c->pos];
    if (b == '\'') {
        if (c->pos + 1 < c->end && c->s[c->pos + 1] == '\'') {
            c->pos += 2;
            return '\'';
        }
        c->pos++;
        while (c->pos < c->end && c->s[c->pos] != '\'') {
            if (c->s[c->pos] == '-') /* a -- comment runs to the newline */
                while (c->pos < c->end && c->s[c->pos] != '\n' && c->s[c->pos] != '\r')
                    c->pos++;
            else
                c->pos++;
        }
        if (c->pos >= c->end)
            return C_END;
        c->pos++;
        return C_BREAK;
    }
    if (b >= 0x80)
        c->raw_left = char_bytes(c->enc, c->s + c->pos, c->end - c->pos) - 1;
    c->pos++;
    return b;
}

/* The next byte for a decoder to read (C_END at the literal's end), past
 * the run before it, which is written as it is, and past the gaps between
 * the parts of a continued literal. */
static int content_step(content *c, writer *w, bool *raw)
{
    int b;
    do {
        content_run(c, w);
        b = content_next(c, raw);
    } while (b == C_BREAK);
    return b;
}

/* The byte right after a backslash of an E'' literal, never a quote pair. */
static int content_escaped(content *c)
{
    if (c->pos >= c->end)
        return C_END;
    unsigned char b = c->s[c->pos];
    if (b >= 0x80)
        c->raw_left = char_bytes(c->enc, c->s + c->pos, c->end - c->pos) - 1;
    c->pos++;
    return b;
}

/* Reads `digits` hex digits at the current position; -1 if any is missing. */
static long content_hex(content *c, int digits)
{
    long v = 0;
    for (int i = 0; i < digits; i++) {
        int h = c->pos < c->end ? qg_hex_digit(c->s[c->pos]) : -1;
        if (h < 0)
            return -1;
        v = v * 16 + h;
        c->pos++;
    }
    return v;
}

static bool is_surrogate_first(unsigned long cp)
{
    return cp >= 0xD800 && cp <= 0xDBFF;
}

static bool is_surrogate_second(unsigned long cp)
{
    return cp >= 0xDC00 && cp <= 0xDFFF;
}

/* The code point a UTF-16 surrogate pair stands for. */
static long from_surrogates(long first, long second)
{
    return 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
}

static bool valid_code_point(unsigned long cp)
{
    return cp > 0 && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
}

typedef struct decode_rules {
    bool std_strings;   /* standard_conforming_strings = on */
    bool unicode_ok;    /* client and server are UTF8: code points decode */
    bool client_utf8;
} decode_rules;

/* '…': only '' and continuation.  With standard_conforming_strings off a
 * backslash would be an escape and earn a warning: left alone. */
static bool decode_plain(content *c, const decode_rules *r, writer *w)
{
    for (;;) {
        bool raw;
        int b = content_step(c, w, &raw);
        if (b == C_END)
            return true;
        if (b == 0 || (b == '\\' && !raw && !r->std_strings))
            return false;
        put_byte(w, (unsigned char)b);
    }
}

/* E'…': the server's backslash escapes.  Escapes that make a byte >= 0x80
 * (read in the server encoding) or NUL, and \' (backslash_quote), are not
 * decoded. */
static bool decode_escape(content *c, const decode_rules *r, writer *w)
{
    for (;;) {
        bool raw;
        int b = content_step(c, w, &raw);
        if (b == C_END)
            return true;
        if (raw || b != '\\') {
            put_byte(w, (unsigned char)b);
            continue;
        }
        int e = content_escaped(c);
        if (e <= 0 || e == '\'')
            return false;
        if (e >= '0' && e <= '7') {
            unsigned v = (unsigned)(e - '0');
            for (int i = 0; i < 2 && c->pos < c->end && c->s[c->pos] >= '0' && c->s[c->pos] <= '7'; i++)
                v = v * 8 + (unsigned)(c->s[c->pos++] - '0');
            v &= 0xFF;
            if (v == 0 || v >= 0x80)
                return false;
            put_byte(w, (unsigned char)v);
        } else if (e == 'x' && c->pos < c->end && qg_hex_digit(c->s[c->pos]) >= 0) {
            int v = qg_hex_digit(c->s[c->pos++]);
            if (c->pos < c->end && qg_hex_digit(c->s[c->pos]) >= 0)
                v = v * 16 + qg_hex_digit(c->s[c->pos++]);
            if (v == 0 || v >= 0x80)
                return false;
            put_byte(w, (unsigned char)v);
        } else if (e == 'u' || e == 'U') {
            long cp = content_hex(c, e == 'u' ? 4 : 8);
            if (cp < 0 || !r->unicode_ok)
                return false;
            if (e == 'u' && is_surrogate_first((unsigned long)cp)) {
                if (c->end - c->pos < 2 || c->s[c->pos] != '\\' || c->s[c->pos + 1] != 'u')
                    return false;
                c->pos += 2;
                long low = content_hex(c, 4);
                if (low < 0 || !is_surrogate_second((unsigned long)low))
                    return false;
                cp = from_surrogates(cp, low);
            }
            if (!valid_code_point((unsigned long)cp))
                return false;
            put_utf8(w, (unsigned long)cp);
        } else {
            static const char from[] = "bfnrt", to[] = "\b\f\n\r\t";
            const char *m = e < 0x80 ? strchr(from, e) : NULL;
            put_byte(w, m && *m ? (unsigned char)to[m - from] : (unsigned char)e);
        }
    }
}

/* Next byte of a U&'' body inside an escape: a continuation gap there is
 * not worth decoding. */
static int unicode_next(content *c)
{
    bool raw;
    int b = content_next(c, &raw);
    return b == C_BREAK ? C_END : b;
}

static long unicode_hex(content *c, int digits)
{
    long v = 0;
    for (int i = 0; i < digits; i++) {
        int b = unicode_next(c);
        int h = b >= 0 ? qg_hex_digit((unsigned char)b) : -1;
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

/* The code point after an escape character: XXXX or +XXXXXX. */
static long unicode_escape_value(content *c, int first)
{
    if (first == '+')
        return unicode_hex(c, 6);
    int h = first >= 0 ? qg_hex_digit((unsigned char)first) : -1;
    if (h < 0)
        return -1;
    long rest = unicode_hex(c, 3);
    return rest < 0 ? -1 : ((long)h << 12) | rest;
}

/* U&'…' (UTF8 client only; the server rejects it without
 * standard_conforming_strings): escapes as the server's parser reads them. */
static bool decode_unicode(content *c, const decode_rules *r, unsigned char esc, writer *w)
{
    if (!r->std_strings || !r->client_utf8)
        return false;
    for (;;) {
        bool raw;
        int b = content_step(c, w, &raw);
        if (b == C_END)
            return true;
        if (raw || b != esc) {
            put_byte(w, (unsigned char)b);
            continue;
        }
        int n = unicode_next(c);
        if (n == esc) {
            put_byte(w, esc);
            continue;
        }
        long cp = unicode_escape_value(c, n);
        if (cp < 0 || !r->unicode_ok)
            return false;
        if (is_surrogate_first((unsigned long)cp)) {
            if (unicode_next(c) != esc)
                return false;
            long low = unicode_escape_value(c, unicode_next(c));
            if (low < 0 || !is_surrogate_second((unsigned long)low))
                return false;
            cp = from_surrogates(cp, low);
        }
        if (!valid_code_point((unsigned long)cp))
            return false;
        put_utf8(w, (unsigned long)cp);
    }
}

/* The byte that starts an escape inside a literal of this form (a quote
 * when nothing does); `uescape` is U&'s. */
static unsigned char escape_byte(qg_string_form form, const decode_rules *r, unsigned char uescape)
{
    if (form == QG_FORM_UNICODE)
        return uescape;
    return form == QG_FORM_ESCAPE || !r->std_strings ? '\\' : '\'';
}

/* The character of UESCAPE '<c>': one byte the server accepts there. */
static bool uescape_char(const tok_stream *ts, const sql_tok *lit, const decode_rules *r,
                         unsigned char *esc)
{
    char buf[2];
    writer w = {.buf = buf, .cap = sizeof buf};
    content c;
    if (lit->form != QG_FORM_PLAIN)
        return false;
    content_init(&c, ts->s, ts->ctx->encoding, lit->start, lit->end,
                 escape_byte(lit->form, r, '\\'));
    if (!decode_plain(&c, r, &w) || w.len != 1)
        return false;
    unsigned char e = (unsigned char)buf[0];
    if (qg_hex_digit(e) >= 0 || e == '+' || e == '\'' || e == '"' || is_space(e) || e >= 0x80)
        return false;
    *esc = e;
    return true;
}

/* ---------------------------------------------------------- the walk */

typedef enum clause {
    CL_NONE = 0, /* before the first clause keyword */
    CL_TARGET,   /* select list, RETURNING */
    CL_FROM,     /* FROM, JOIN … ON */
    CL_WHERE,
    CL_SET,      /* UPDATE … SET, ON CONFLICT DO UPDATE SET */
    CL_VALUES,
    CL_LIMIT,    /* LIMIT, OFFSET, FETCH */
    CL_ORDER,
    CL_GROUP,
    CL_HAVING,
    CL_CONFLICT, /* ON CONFLICT target and its WHERE: matched against indexes */
    CL_WITH,     /* WITH: the parentheses hold whole statements */
    CL_OTHER
} clause;

typedef enum level_kind {
    LV_PAREN = 0, /* expression or subquery */
    LV_BRACKET,   /* ARRAY[…], subscripts */
    LV_FUNC,      /* arguments of a function from func_names */
    LV_IN,        /* IN ( list ) */
    LV_ROW        /* a VALUES row */
} level_kind;

typedef struct level {
    level_kind kind;
    clause clause;
    bool restricted; /* an enclosing clause forbids replacing */
    bool fresh;      /* no token seen inside yet */
} level;

/* Clauses whose expressions are never compared with other expressions. */
static bool clause_safe(clause cl, bool grouped)
{
    switch (cl) {
    case CL_FROM:
    case CL_WHERE:
    case CL_SET:
    case CL_VALUES:
    case CL_LIMIT:
        return true;
    case CL_TARGET:
    case CL_ORDER:
        return !grouped;
    default:
        return false;
    }
}

typedef enum rule {
    RULE_NONE = 0,
    RULE_COMPARE,    /* right operand of = <> != < > <= >=, IS DISTINCT FROM, ESCAPE */
    RULE_PATTERN,    /* LIKE / ILIKE / SIMILAR TO pattern */
    RULE_ASSIGN,     /* UPDATE … SET col = 'x' */
    RULE_LIMIT,      /* LIMIT 'n' / OFFSET 'n' */
    RULE_ITEM        /* IN list item, function argument, VALUES item */
} rule;

typedef struct walker {
    const statement_facts *facts;
    decode_rules rules;
    int depth;
    const sql_tok *prev1, *prev2;
    writer text, values;
    size_t copied;  /* query bytes before this are in text */
    size_t nparams;
    bool needs_params; /* a replaced literal is not plain_text() */
    const char *why;
    /* Set up by stream_init and open_level, not cleared first. */
    tok_stream ts;
    level stack[MAX_DEPTH + 1];
} walker;

static level *top(walker *w)
{
    return &w->stack[w->depth];
}

static bool ends_operand(walker *w, const sql_tok *t)
{
    return t->kind == T_END || is_punct(&w->ts, t, ")") || is_punct(&w->ts, t, ",") ||
           is_punct(&w->ts, t, ";") || is_word_in(&w->ts, t, operand_end_words);
}

/* The position the literal is in, judged from the token before it. */
static rule decide_rule(walker *w)
{
    const tok_stream *ts = &w->ts;
    const level *lv = top(w);
    const sql_tok *p1 = w->prev1, *p2 = w->prev2;
    if (lv->restricted || !clause_safe(lv->clause, w->facts->grouped))
        return RULE_NONE;
    if (is_op_in(ts, p1, comparison_ops))
        return lv->clause == CL_SET && is_op(ts, p1, "=") ? RULE_ASSIGN : RULE_COMPARE;
    if (is_word(ts, p1, "like") || is_word(ts, p1, "ilike") ||
        (is_word(ts, p1, "to") && is_word(ts, p2, "similar")))
        return RULE_PATTERN;
    if (is_word(ts, p1, "escape") || (is_word(ts, p1, "from") && is_word(ts, p2, "distinct")))
        return RULE_COMPARE;
    if (is_word(ts, p1, "limit") || is_word(ts, p1, "offset"))
        return RULE_LIMIT;
    if ((is_punct(ts, p1, "(") || is_punct(ts, p1, ",")) &&
        (lv->kind == LV_IN || lv->kind == LV_FUNC || lv->kind == LV_ROW))
        return RULE_ITEM;
    return RULE_NONE;
}

static bool right_side_ends(walker *w, rule r, const sql_tok *after)
{
    tok_stream *ts = &w->ts;
    switch (r) {
    case RULE_COMPARE:
    case RULE_ASSIGN:
        return ends_operand(w, after);
    case RULE_PATTERN:
        return ends_operand(w, after) || is_word(ts, after, "escape");
    case RULE_LIMIT:
        return after->kind == T_END || is_punct(ts, after, ")") || is_punct(ts, after, ";") ||
               is_word_in(ts, after, limit_end_words);
    case RULE_ITEM:
        return is_punct(ts, after, ",") || is_punct(ts, after, ")");
    default:
        return false;
    }
}

static bool is_glued_kind(tok_kind k)
{
    return k == T_WORD || k == T_NUMBER || k == T_PARAM;
}

/* Where the first byte >= 0x80 of s[p, limit) is, or limit: eight bytes
 * at a time, since most literals are ASCII and each byte is a character. */
static size_t ascii_end(const unsigned char *s, size_t p, size_t limit)
{
    for (; limit - p >= 8; p += 8) {
        uint64_t word;
        memcpy(&word, s + p, sizeof word);
        if (word & 0x8080808080808080u)
            break;
    }
    while (p < limit && s[p] < 0x80)
        p++;
    return p;
}

#define PLAIN_LITERALS "its literals are plain text"

/* True when s[p, end) holds no byte >= 0x80, no backslash and no quote
 * written twice: text that reads the same in every client encoding and
 * under every quoting rule, where no escaping can go wrong. */
static bool plain_text(const unsigned char *s, size_t p, size_t end)
{
    if (ascii_end(s, p, end) != end || memchr(s + p, '\\', end - p))
        return false;
    for (const unsigned char *q = s + p; (q = memchr(q, '\'', (size_t)(s + end - q))); q++)
        if (q + 1 < s + end && q[1] == '\'')
            return false;
    return true;
}

/* Where the first \n or \r of s[p, end) is, or end. */
static size_t line_break(const unsigned char *s, size_t p, size_t end)
{
    const unsigned char *nl = memchr(s + p, '\n', end - p);
    size_t limit = nl ? (size_t)(nl - s) : end;
    const unsigned char *cr = memchr(s + p, '\r', limit - p);
    return cr ? (size_t)(cr - s) : limit;
}

/* Adds the characters of s[p, limit) to *chars as char_bytes() reads
 * them, and returns where they end: at limit, or at a character the
 * encoding's automaton does not take (a quote, backslash or NUL, an
 * invalid or cut sequence).  Whole 64-byte blocks go to the vector count
 * first, which reads on over quotes, backslashes and NULs, one character
 * each; then, in the automaton, eight bytes go between tests, with no
 * branch per character; a group that stopped is read again byte by byte
 * from the group before it. */
static size_t count_valid_chars(const encoding_dfa_t *dfa, const unsigned char *s, size_t p,
                                size_t limit, size_t *chars)
{
    if (limit - p >= 64) /* a whole block for the vector count */
        p = qg_count_chars(dfa, s, p, limit, chars);
    const uint64_t *rows = dfa->rows;
    /* 1 for the states that lie between characters. */
    uint8_t between[64] = {[0] = 1};
    between[dfa->ambiguous] = 1;
    size_t n = *chars;
    uint64_t state = 0;
    size_t back = p, back_n = n;
    uint64_t back_state = 0;
    for (; limit - p >= 8; p += 8) {
        uint64_t a = rows[s[p]] >> (state & 63);
        uint64_t b = rows[s[p + 1]] >> (a & 63);
        uint64_t c = rows[s[p + 2]] >> (b & 63);
        uint64_t d = rows[s[p + 3]] >> (c & 63);
        uint64_t e = rows[s[p + 4]] >> (d & 63);
        uint64_t f = rows[s[p + 5]] >> (e & 63);
        uint64_t g = rows[s[p + 6]] >> (f & 63);
        uint64_t h = rows[s[p + 7]] >> (g & 63);
        if ((h & 63) >= DFA_STOP)
            break;
        back = p;
        back_n = n;
        back_state = state;
        n += (size_t)between[a & 63] + between[b & 63] + between[c & 63] + between[d & 63] +
             between[e & 63] + between[f & 63] + between[g & 63] + between[h & 63];
        state = h;
    }
    /* A character is at most four bytes: one still open where the reading
     * stops began after `back`, unless `back` itself is between two. */
    size_t end = back, counted = back_n;
    n = back_n;
    state = back_state;
    for (p = back; p < limit; p++) {
        state = rows[s[p]] >> (state & 63);
        if ((state & 63) >= DFA_STOP)
            break;
        if (between[state & 63]) {
            end = p + 1;
            counted = ++n;
        }
    }
    *chars = counted;
    return end;
}

/* Characters of s[p, end) before the first line end that starts one,
 * whose position goes to *line_end (end when there is none).  ASCII runs
 * and runs of valid characters are counted whole; what they stop at is
 * taken one character at a time. */
static size_t chars_in_line(const qg_encoding *enc, const unsigned char *s, size_t p, size_t end,
                            size_t *line_end)
{
    const encoding_dfa_t *dfa = enc->forms ? encoding_dfa(enc) : NULL;
    size_t n = 0;
    size_t limit = p; /* the next \n or \r, once looked for */
    while (p < end) {
        if (p >= limit)
            limit = line_break(s, p, end);
        if (!enc->forms) {
            n += limit - p; /* every byte is a character */
            p = limit;
        } else {
            size_t ascii = ascii_end(s, p, limit);
            n += ascii - p;
            p = ascii;
            if (dfa && p < limit)
                p = count_valid_chars(dfa, s, p, limit, &n);
        }
        if (p == end || s[p] == '\n' || s[p] == '\r')
            break;
        p = next_char(enc, s, p, end);
        n++;
    }
    *line_end = p;
    return n;
}

/* "$n" into num (no NUL); its length.  (snprintf took some 700
 * instructions, a twentieth of a short query's rewrite.) */
static size_t param_marker(char num[16], size_t n)
{
    char digits[16];
    size_t k = 0;
    do {
        digits[k++] = (char)('0' + n % 10);
        n /= 10;
    } while (n);
    num[0] = '$';
    for (size_t i = 0; i < k; i++)
        num[1 + i] = digits[k - 1 - i];
    return k + 1;
}

/* Writes "$n" in place of bytes [start, end), padded to the same number of
 * characters (newlines kept where they were), with a space before or after
 * when a word touches that side.  False, with nothing written, when that
 * does not fit. */
static bool replace_span(walker *w, size_t start, size_t end, bool lead, bool trail)
{
    const unsigned char *s = w->ts.s;
    char num[16];
    size_t k = param_marker(num, w->nparams + 1);
    size_t covered = (size_t)lead + k;
    size_t mark = w->text.len;
    put(&w->text, s + w->copied, start - w->copied);
    if (lead)
        put_byte(&w->text, ' ');
    put(&w->text, num, k);
    /* Past "$n" each character becomes a space, a line end stays itself;
     * under "$n" a line end would move the lines after it. */
    size_t chars = 0;
    for (size_t p = start;;) {
        size_t line_end;
        size_t before = chars;
        chars += chars_in_line(w->ts.ctx->encoding, s, p, end, &line_end);
        if (chars > covered)
            put_spaces(&w->text, chars - (before > covered ? before : covered));
        if (line_end == end)
            break;
        if (chars < covered) {
            w->text.len = mark;
            return false;
        }
        put_byte(&w->text, s[line_end]);
        chars++;
        p = line_end + 1;
    }
    if (chars < covered + (size_t)trail) {
        w->text.len = mark;
        return false;
    }
    w->copied = end;
    return true;
}

/* A string literal token was just taken: replace it when its position and
 * value allow. */
static void consider_literal(walker *w, const sql_tok *lit)
{
    tok_stream *ts = &w->ts;
    unsigned next = 0;
    size_t span_end = lit->end;
    unsigned char esc = '\\';
    if (lit->form != QG_FORM_PLAIN && lit->form != QG_FORM_ESCAPE && lit->form != QG_FORM_UNICODE)
        return;
    if (lit->form == QG_FORM_UNICODE && is_word(ts, peek(ts, 0), "uescape")) {
        const sql_tok *e = peek(ts, 1);
        if (e->kind != T_STRING || !uescape_char(ts, e, &w->rules, &esc))
            return;
        span_end = e->end;
        next = 2;
    }
    const sql_tok *after = peek(ts, next);
    bool cast = false;
    if (is_punct(ts, after, "::") && is_word_in(ts, peek(ts, next + 1), cast_types)) {
        unsigned k = next + 2;
        if (is_punct(ts, peek(ts, k), "[") && is_punct(ts, peek(ts, k + 1), "]"))
            k += 2;
        after = peek(ts, k);
        cast = true;
    }
    /* "$n" must not run into a word or number it touches. */
    const sql_tok *touching = peek(ts, next);
    bool lead = w->prev1->end == lit->start && is_glued_kind(w->prev1->kind);
    bool trail = touching->start == span_end && is_glued_kind(touching->kind);
    rule r = decide_rule(w);
    if (r == RULE_NONE || !right_side_ends(w, r, after) || w->nparams >= QG_REWRITE_MAX_PARAMS)
        return;

    /* Assignments read the value with the column's typmod (INTERVAL). */
    bool assignment = r == RULE_ASSIGN || (r == RULE_ITEM && top(w)->kind == LV_ROW &&
                                           w->facts->has_insert);
    size_t mark = w->values.len;
    w->values.watch_digits = assignment && !cast;
    w->values.digit = false;
    content c;
    content_init(&c, ts->s, ts->ctx->encoding, lit->start, lit->end,
                 escape_byte(lit->form, &w->rules, esc));
    bool decoded = lit->form == QG_FORM_ESCAPE    ? decode_escape(&c, &w->rules, &w->values)
                   : lit->form == QG_FORM_UNICODE ? decode_unicode(&c, &w->rules, esc, &w->values)
                                                  : decode_plain(&c, &w->rules, &w->values);
    if (!decoded || (w->values.watch_digits && w->values.digit) ||
            !replace_span(w, lit->start, span_end, lead, trail)) {
        w->values.len = mark;
        return;
    }
    put_byte(&w->values, 0);
    w->nparams++;
    /* Between the first quote and the last (UESCAPE's included). */
    const unsigned char *quote = memchr(ts->s + lit->start, '\'', lit->end - lit->start);
    size_t body = quote ? (size_t)(quote - ts->s) + 1 : lit->start;
    w->needs_params |= !plain_text(ts->s, body, span_end > body ? span_end - 1 : body);
    for (unsigned i = 0; i < next; i++)
        take(ts); /* UESCAPE '…' went with the literal */
}

static void set_clause(walker *w, const sql_tok *t)
{
    tok_stream *ts = &w->ts;
    level *lv = top(w);
    if (is_word(ts, t, "select") || is_word(ts, t, "returning"))
        lv->clause = CL_TARGET;
    else if (is_word(ts, t, "from"))
        lv->clause = is_word(ts, w->prev1, "distinct") ? lv->clause : CL_FROM; /* IS DISTINCT FROM */
    else if (is_word(ts, t, "join"))
        lv->clause = CL_FROM;
    else if (is_word(ts, t, "where"))
        lv->clause = lv->clause == CL_CONFLICT ? CL_CONFLICT : CL_WHERE;
    else if (is_word(ts, t, "group"))
        lv->clause = is_word(ts, w->prev1, "within") ? lv->clause : CL_GROUP;
    else if (is_word(ts, t, "having"))
        lv->clause = CL_HAVING;
    else if (is_word(ts, t, "order"))
        lv->clause = CL_ORDER;
    else if (is_word(ts, t, "limit") || is_word(ts, t, "offset") || is_word(ts, t, "fetch"))
        lv->clause = CL_LIMIT;
    else if (is_word(ts, t, "set"))
        lv->clause = CL_SET;
    else if (is_word(ts, t, "values"))
        lv->clause = CL_VALUES;
    else if (is_word(ts, t, "conflict"))
        lv->clause = CL_CONFLICT;
    else if (is_word(ts, t, "union") || is_word(ts, t, "intersect") || is_word(ts, t, "except"))
        lv->clause = CL_NONE;
    else if (is_word(ts, t, "do") || is_word(ts, t, "using") || is_word(ts, t, "into") ||
             is_word(ts, t, "insert") || is_word(ts, t, "update") || is_word(ts, t, "delete") ||
             is_word(ts, t, "for") || is_word(ts, t, "window"))
        lv->clause = CL_OTHER;
    else if (is_word(ts, t, "with") && (w->prev1->kind == T_END || is_punct(ts, w->prev1, "(")))
        lv->clause = CL_WITH; /* not WITH ORDINALITY, timestamp with time zone … */
}

static bool open_level(walker *w, level_kind kind)
{
    if (w->depth >= MAX_DEPTH)
        return false;
    level *parent = top(w);
    level *lv = &w->stack[++w->depth];
    lv->kind = kind;
    lv->clause = parent->clause;
    /* Before a clause and in WITH, a parenthesis starts a statement of its own. */
    bool opens_statement = parent->clause == CL_NONE || parent->clause == CL_WITH;
    lv->restricted = parent->restricted ||
                     !(opens_statement || clause_safe(parent->clause, w->facts->grouped));
    lv->fresh = true;
    return true;
}

static level_kind paren_kind(walker *w)
{
    tok_stream *ts = &w->ts;
    const level *lv = top(w);
    if (is_word(ts, w->prev1, "in"))
        return LV_IN;
    if (is_word_in(ts, w->prev1, func_names) && !is_punct(ts, w->prev2, "."))
        return LV_FUNC;
    if (lv->clause == CL_VALUES &&
        (is_word(ts, w->prev1, "values") ||
         (is_punct(ts, w->prev1, ",") && is_punct(ts, w->prev2, ")"))))
        return LV_ROW;
    return LV_PAREN;
}

/* Second pass: every token in order; false when the structure is not one
 * this walk understands (w->why says why). */
static bool walk(walker *w)
{
    tok_stream *ts = &w->ts;
    for (;;) {
        const sql_tok *t = take(ts);
        if (t->kind == T_END)
            return true;
        level *lv = top(w);
        if (lv->fresh) {
            lv->fresh = false;
            if (is_word_in(ts, t, statement_words) || is_word(ts, t, "table"))
                lv->kind = LV_PAREN; /* a subquery, not a list */
        }
        if (is_punct(ts, t, "(") || is_punct(ts, t, "[")) {
            if (!open_level(w, is_punct(ts, t, "[") ? LV_BRACKET : paren_kind(w))) {
                w->why = "nested too deeply";
                return false;
            }
        } else if (is_punct(ts, t, ")") || is_punct(ts, t, "]")) {
            bool bracket = is_punct(ts, t, "]");
            if (w->depth == 0 || (lv->kind == LV_BRACKET) != bracket) {
                w->why = "unbalanced parentheses";
                return false;
            }
            w->depth--;
        } else if (t->kind == T_WORD) {
            set_clause(w, t);
        } else if (t->kind == T_STRING) {
            consider_literal(w, t);
        }
        w->prev2 = w->prev1;
        w->prev1 = t;
    }
}

const char *qg_rewrite_skip_reason(const char *sql, size_t len, unsigned options)
{
    if (!memchr(sql, '\'', len))
        return (options & QG_REWRITE_PLAIN_AS_IS) || !memchr(sql, '$', len) ? "no string literal"
                                                                            : NULL;
    if ((options & QG_REWRITE_PLAIN_AS_IS) && plain_text((const unsigned char *)sql, 0, len))
        return PLAIN_LITERALS;
    return NULL;
}

qg_rewrite_status qg_rewrite_query(const qg_context *ctx, unsigned options, const char *sql,
                                   size_t len, qg_rewrite *rw)
{
    rw->text_len = rw->values_len = rw->nparams = 0;
    rw->why = NULL;
    if (ctx->dialect != QG_DIALECT_POSTGRES || !ctx->encoding || !sql) {
        rw->why = "not a PostgreSQL query";
        return QG_REWRITE_UNCHANGED;
    }
    rw->why = qg_rewrite_skip_reason(sql, len, options);
    if (rw->why)
        return QG_REWRITE_UNCHANGED;
    statement_facts facts;
    token_cache cache;
    scan_statement(ctx, sql, len, &cache, &facts);
    if (facts.why) {
        rw->why = facts.why;
        return QG_REWRITE_UNCHANGED;
    }

    walker w;
    w.depth = 0;
    w.copied = w.nparams = 0;
    w.needs_params = false;
    w.why = NULL;
    stream_init(&w.ts, ctx, sql, len, &cache, true);
    w.prev1 = w.prev2 = &no_token;
    w.stack[0] = (level){.clause = CL_NONE};
    w.facts = &facts;
    bool client_utf8 = strcmp(qg_encoding_name(ctx->encoding), "UTF8") == 0;
    w.rules.std_strings = (ctx->flags & QG_STD_STRINGS) != 0;
    w.rules.client_utf8 = client_utf8;
    w.rules.unicode_ok = client_utf8 && (options & QG_REWRITE_SERVER_UTF8);
    w.text = (writer){.buf = rw->text, .cap = rw->text_cap};
    w.values = (writer){.buf = rw->values, .cap = rw->values_cap};
    if (!walk(&w)) {
        rw->why = w.why;
        return QG_REWRITE_UNCHANGED;
    }
    if (w.nparams == 0) {
        rw->why = "no literal in a value position";
        return QG_REWRITE_UNCHANGED;
    }
    if ((options & QG_REWRITE_PLAIN_AS_IS) && !w.needs_params) {
        rw->why = PLAIN_LITERALS;
        return QG_REWRITE_UNCHANGED;
    }
    put(&w.text, w.ts.s + w.copied, len - w.copied);
    rw->text_len = w.text.len;
    rw->values_len = w.values.len;
    rw->nparams = w.nparams;
    if (!rw->text || rw->text_cap < w.text.len + 1 || !rw->values || rw->values_cap < w.values.len ||
        !rw->params || rw->params_cap < w.nparams)
        return QG_REWRITE_NO_ROOM;
    rw->text[w.text.len] = '\0';
    const char *v = rw->values;
    for (size_t i = 0; i < w.nparams; i++) {
        rw->params[i] = v;
        v += strlen(v) + 1;
    }
    return QG_REWRITE_DONE;
}
