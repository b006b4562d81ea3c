/* What a PostgreSQL statement does to the state the next statements are
 * read under (src/core/pg_state.h). */
#include "pg_state.h"

#include <stdio.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "ascii.h"
#include "code_tokens.h"
#include "mysql_state.h"
#include "sql_words.h"

/* The statement's tokens (code_tokens.h), comments left out.  Words, plain
 * strings, quoted names and comments end at the same bytes in every client
 * encoding (no trail byte is a quote, '-', '/' or '*') and under either
 * standard_conforming_strings, as long as no backslash is in a value, and
 * a value with one is not read: so one reading serves every state. */
typedef struct words {
    qg_code_tokens tokens;
    bool cut; /* an operator was taken for its first byte: no value follows */
} words;

/* ctx: the one reading, read_context()'s, kept while w is read. */
static void words_init(words *w, const qg_context *ctx, const char *s, size_t len)
{
    qg_code_tokens_init(&w->tokens, ctx, s, len);
    w->cut = false;
}

static void read_context(qg_context *ctx)
{
    qg_context_init(ctx, QG_DIALECT_POSTGRES, qg_encoding_find(QG_DIALECT_POSTGRES, "SQL_ASCII"),
                    QG_STD_STRINGS);
}

static bool next_token(words *w, qg_code_token *t)
{
    while (qg_code_next(&w->tokens, t))
        if (t->kind != QG_CODE_COMMENT)
            return true;
    return false;
}

static bool at_end(const words *w)
{
    words rest = *w;
    qg_code_token t;
    return !next_token(&rest, &t);
}

/* The bytes of a name or a value's word as read here: not '$' (after a
 * dollar quote's "$$" a name starts) nor a number's '.' or sign. */
#define NAME_BYTES (QG_WORD_START | QG_CC(QG_CC_DIGIT))

/* Reads the next word or value into out (lower-cased unless quoted);
 * false when there is none that fits. */
static bool next_value(words *w, char *out, size_t cap)
{
    qg_code_token t;
    if (w->cut || !next_token(w, &t))
        return false;
    const char *s = (const char *)w->tokens.s;
    size_t n = 0;
    if ((t.kind == QG_CODE_STRING || t.kind == QG_CODE_QIDENT) && t.form == QG_FORM_PLAIN &&
        !t.unterminated) {
        char quote = s[t.start];
        for (size_t i = t.start + 1; i + 1 < t.end; i++) {
            if (s[i] == quote)
                i++; /* doubled */
            if (s[i] == '\\' || n + 1 >= cap)
                return false; /* an escape or a long value: not read here */
            out[n++] = s[i];
        }
        out[n] = '\0';
        return true;
    }
    if (t.kind != QG_CODE_WORD && t.kind != QG_CODE_NUMBER)
        return false;
    for (size_t i = t.start; i < t.end; i++) {
        if (!qg_char_in((unsigned char)s[i], NAME_BYTES) || n + 1 >= cap)
            return false;
        out[n++] = (char)qg_ascii_lower((unsigned char)s[i]);
    }
    out[n] = '\0';
    return true;
}

static bool next_is(words *w, const char *word)
{
    words at = *w;
    char got[64];
    if (next_value(w, got, sizeof got) && strcmp(got, word) == 0)
        return true;
    *w = at;
    return false;
}

/* The next token starts with the byte c ("=-1": '=', then no value). */
static bool next_byte(words *w, char c)
{
    words at = *w;
    qg_code_token t;
    if (!w->cut && next_token(w, &t) && (t.kind == QG_CODE_PUNCT || t.kind == QG_CODE_OPERATOR) &&
        w->tokens.s[t.start] == (unsigned char)c) {
        w->cut = t.end - t.start > 1;
        return true;
    }
    *w = at;
    return false;
}

/* PostgreSQL's parse_bool: on, off, true, false, yes, no, 1, 0 and the
 * unambiguous prefixes of the words. */
static bool parse_bool(const char *v, bool *out)
{
    static const struct {
        const char *word;
        size_t min;
        bool value;
    } words_of[] = {{"true", 1, true}, {"false", 1, false}, {"yes", 1, true},
                    {"no", 1, false},  {"on", 2, true},     {"off", 2, false},
                    {"1", 1, true},    {"0", 1, false}};
    size_t n = strlen(v);
    for (size_t i = 0; i < sizeof words_of / sizeof words_of[0]; i++) {
        if (n >= words_of[i].min && n <= strlen(words_of[i].word) &&
            qg_ascii_ncasecmp(v, words_of[i].word, n) == 0) {
            *out = words_of[i].value;
            return true;
        }
    }
    return false;
}

/* Notes that the statement gives `name` the value `value` (NULL: one not
 * known before it runs, e.g. DEFAULT or a parameter). */
static void note(qg_pg_effect *e, const char *name, const char *value)
{
    if (strcmp(name, "client_encoding") == 0 || strcmp(name, "names") == 0) {
        e->encoding = QG_PG_UNKNOWN;
        if (value && strcmp(value, "default") != 0 &&
            strlen(value) < sizeof e->encoding_name) {
            e->encoding = QG_PG_SETS;
            snprintf(e->encoding_name, sizeof e->encoding_name, "%s", value);
        }
    } else if (strcmp(name, "standard_conforming_strings") == 0) {
        e->scs = value && parse_bool(value, &e->scs_on) ? QG_PG_SETS : QG_PG_UNKNOWN;
    } else if (strcmp(name, "all") == 0) {
        e->encoding = e->scs = QG_PG_UNKNOWN;
    }
}

/* SET [SESSION | LOCAL] name {TO | =} value, SET NAMES value, after "set". */
static void read_set(words *w, qg_pg_effect *e)
{
    char name[64], value[64];
    if (!next_is(w, "session"))
        next_is(w, "local");
    if (!next_value(w, name, sizeof name))
        return;
    if (strcmp(name, "names") != 0 && !next_is(w, "to") && !next_byte(w, '='))
        return;
    bool one = next_value(w, value, sizeof value);
    next_byte(w, ';');
    bool alone = !w->cut && at_end(w); /* a list or a second statement: not read here */
    note(e, name, one && alone ? value : NULL);
}

/* The names a text may mention, as bits of mentions(). */
enum {
    MENTIONS_ENCODING = 1, /* client_encoding */
    MENTIONS_SCS = 2,      /* standard_conforming_strings */
    MENTIONS_NAMES = 4,    /* NAMES right after SET, LOCAL or SESSION (white space between) */
    MENTIONS_RESET = 8     /* ALL right after RESET or DISCARD */
};

/* Which of those the text names as words of their own, in any case,
 * wherever they are (in a string, a function body): one pass over it. */
static unsigned mentions(const char *s, size_t len)
{
    unsigned found = 0;
    const char *before = NULL; /* the word before, when only white space follows it */
    size_t before_len = 0;
    for (size_t i = 0; i < len;) {
        if (!qg_char_in((unsigned char)s[i], NAME_BYTES)) {
            if (!qg_char_in((unsigned char)s[i], QG_CC(QG_CC_SPACE)))
                before = NULL;
            i++;
            continue;
        }
        const char *w = s + i;
        while (i < len && qg_char_in((unsigned char)s[i], NAME_BYTES))
            i++;
        size_t n = (size_t)(s + i - w);
        if (qg_my_word_is(w, n, "client_encoding"))
            found |= MENTIONS_ENCODING;
        else if (qg_my_word_is(w, n, "standard_conforming_strings"))
            found |= MENTIONS_SCS;
        else if (before && qg_my_word_is(w, n, "names") &&
                 (qg_my_word_is(before, before_len, "set") ||
                  qg_my_word_is(before, before_len, "local") ||
                  qg_my_word_is(before, before_len, "session")))
            found |= MENTIONS_NAMES;
        else if (before && qg_my_word_is(w, n, "all") &&
                 (qg_my_word_is(before, before_len, "reset") ||
                  qg_my_word_is(before, before_len, "discard")))
            found |= MENTIONS_RESET;
        before = w;
        before_len = n;
    }
    return found;
}

/* set_config('name', 'value', is_local) with literals; any other use is
 * read as setting both to something not known in advance. */
static void read_set_config(const qg_context *ctx, const char *s, size_t len, qg_pg_effect *e)
{
    for (size_t i = 0; i + 10 <= len; i++) {
        if (qg_ascii_ncasecmp(s + i, "set_config", 10) != 0 ||
            (i > 0 && qg_char_in((unsigned char)s[i - 1], NAME_BYTES)))
            continue;
        words w;
        words_init(&w, ctx, s + i + 10, len - i - 10);
        char name[64], value[64];
        if (next_byte(&w, '(') && next_value(&w, name, sizeof name) && next_byte(&w, ',') &&
            next_value(&w, value, sizeof value) && next_byte(&w, ',')) {
            for (char *p = name; *p; p++)
                *p = (char)qg_ascii_lower((unsigned char)*p);
            note(e, name, value);
        } else {
            e->encoding = e->scs = QG_PG_UNKNOWN;
        }
    }
}

/* Whether a word (a run of NAME_BYTES) may be one every reading above
 * needs: the start of set_config, RESET, DISCARD, NAMES and the settings'
 * names.  SET alone is none: each reading that notes an effect needs one
 * of these words too (a SET statement its setting's name or NAMES), and
 * UPDATE's SET is in most writes.  The first letter and the length sort
 * out nearly every word without a compare (inlined into both walks, which
 * call it per word). */
__attribute__((always_inline)) static inline bool may_be_setting_word(const char *w, size_t n)
{
    switch (qg_ascii_lower((unsigned char)w[0])) {
    case 's':
        return (n >= 10 && qg_ascii_lower((unsigned char)w[1]) == 'e' &&
                qg_ascii_lower((unsigned char)w[2]) == 't' && w[3] == '_' &&
                qg_my_word_is(w, 10, "set_config")) ||
               (n == 27 && qg_my_word_is(w, n, "standard_conforming_strings"));
    case 'r':
        return n == 5 && qg_my_word_is(w, n, "reset");
    case 'd':
        return n == 7 && qg_my_word_is(w, n, "discard");
    case 'n':
        return n == 5 && qg_my_word_is(w, n, "names");
    case 'c':
        return n == 15 && qg_my_word_is(w, n, "client_encoding");
    default:
        return false;
    }
}

/* The word of name bytes that starts at s[start] may be one of them. */
static bool word_may_be_setting(const char *s, size_t start, size_t len)
{
    size_t end = start + 1;
    while (end < len && qg_char_in((unsigned char)s[end], NAME_BYTES))
        end++;
    return may_be_setting_word(s + start, end - start);
}

#ifdef __SSE2__
/* Of 16 bytes: the name bytes (letters, '_', digits, 0x80-0xff), and the
 * bytes whose letter starts one of those words (s, r, d, n, c in either
 * case), a bit each. */
static void name_bytes16(__m128i v, unsigned *name, unsigned *first)
{
    __m128i lower = _mm_or_si128(v, _mm_set1_epi8(0x20));
    __m128i letter = _mm_cmplt_epi8(_mm_add_epi8(lower, _mm_set1_epi8((char)(0x80 - 'a'))),
                                    _mm_set1_epi8((char)(-128 + 26)));
    __m128i digit = _mm_cmplt_epi8(_mm_add_epi8(v, _mm_set1_epi8((char)(0x80 - '0'))),
                                   _mm_set1_epi8((char)(-128 + 10)));
    __m128i underscore = _mm_cmpeq_epi8(v, _mm_set1_epi8('_'));
    *name = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(letter, digit), underscore)) |
            (unsigned)_mm_movemask_epi8(v);
    __m128i s_or_r = _mm_or_si128(_mm_cmpeq_epi8(lower, _mm_set1_epi8('s')),
                                  _mm_cmpeq_epi8(lower, _mm_set1_epi8('r')));
    __m128i d_or_n = _mm_or_si128(_mm_cmpeq_epi8(lower, _mm_set1_epi8('d')),
                                  _mm_cmpeq_epi8(lower, _mm_set1_epi8('n')));
    *first = (unsigned)_mm_movemask_epi8(
        _mm_or_si128(_mm_or_si128(s_or_r, d_or_n), _mm_cmpeq_epi8(lower, _mm_set1_epi8('c'))));
}

/* Whether the text has such a word anywhere (in a string or a comment
 * too): a text without one keeps both settings, unread.  Sixteen bytes at
 * a time: only the words that start with one of the letters are read. */
static bool may_name_a_setting(const char *s, size_t len)
{
    unsigned before = 0; /* the last byte before these 16 is a name byte */
    for (size_t at = 0; at < len; at += 16) {
        __m128i v;
        unsigned seen = 0; /* bytes of the load before s[at], read already */
        if (len - at >= 16) {
            v = _mm_loadu_si128((const __m128i *)(s + at));
        } else if (len >= 16) {
            /* the last 16 bytes of the text, whose bits are moved down to s[at] */
            seen = 16 - (unsigned)(len - at);
            v = _mm_loadu_si128((const __m128i *)(s + len - 16));
        } else {
            unsigned char tail[16] = {0}; /* NUL is no name byte */
            memcpy(tail, s + at, len - at);
            v = _mm_loadu_si128((const __m128i *)tail);
        }
        unsigned name, first;
        name_bytes16(v, &name, &first);
        name >>= seen;
        first >>= seen;
        unsigned starts = name & ~(name << 1 | before) & first;
        before = name >> 15 & 1;
        for (; starts; starts &= starts - 1) {
            unsigned bit = (unsigned)__builtin_ctz(starts);
            /* the word's length from the mask, unless it may go on past it */
            unsigned word = (unsigned)__builtin_ctz(~(name >> bit));
            bool settled = bit + word < 16 || at + 16 >= len;
            if (settled ? may_be_setting_word(s + at + bit, word)
                        : word_may_be_setting(s, at + bit, len))
                return true;
        }
    }
    return false;
}
#else
/* Whether the text has such a word anywhere (in a string or a comment
 * too): a text without one keeps both settings, unread. */
static bool may_name_a_setting(const char *s, size_t len)
{
    for (size_t i = 0; i < len;) {
        if (!qg_char_in((unsigned char)s[i], NAME_BYTES)) {
            i++;
            continue;
        }
        if (word_may_be_setting(s, i, len))
            return true;
        while (++i < len && qg_char_in((unsigned char)s[i], NAME_BYTES))
            ;
    }
    return false;
}
#endif

/* Whether the text holds a Unicode-escape name or string, U&"..." or
 * U&'...': PostgreSQL reads \0063 there as 'c', so a setting's name or
 * value may be in it where no word above shows it. */
static bool holds_unicode_escapes(const char *s, size_t len)
{
    const char *end = s + len;
    for (const char *p = memchr(s, '&', len); p; p = memchr(p + 1, '&', (size_t)(end - p - 1))) {
        size_t at = (size_t)(p - s);
        if (at > 0 && at + 1 < len && (s[at + 1] == '"' || s[at + 1] == '\'') &&
            qg_ascii_lower((unsigned char)s[at - 1]) == 'u' &&
            (at == 1 || !qg_char_in((unsigned char)s[at - 2], NAME_BYTES)))
            return true;
    }
    return false;
}

qg_pg_effect qg_pg_statement_effect(const char *sql, size_t len)
{
    qg_pg_effect e = {0};
    if (!qg_pg_may_set(sql, len))
        return e;
    /* A text that may set something and holds a name or string its words
     * do not show: what it sets is not known in advance. */
    if (holds_unicode_escapes(sql, len)) {
        e.encoding = e.scs = QG_PG_UNKNOWN;
        return e;
    }
    if (!may_name_a_setting(sql, len))
        return e;
    qg_context ctx;
    read_context(&ctx);
    words w;
    words_init(&w, &ctx, sql, len);
    if (next_is(&w, "set")) {
        read_set(&w, &e);
    } else if (next_is(&w, "reset")) {
        char name[64];
        if (next_value(&w, name, sizeof name))
            note(&e, name, NULL);
    } else if (next_is(&w, "discard")) {
        if (next_is(&w, "all"))
            note(&e, "all", NULL);
    }
    read_set_config(&ctx, sql, len, &e);
    /* Anything else that names a setting or resets them all (a DO block,
     * a function body, a second statement) may set it.  NAMES is a setting
     * only after SET (LOCAL, SESSION): elsewhere it is a common name. */
    if (e.encoding != QG_PG_KEEPS || e.scs != QG_PG_KEEPS)
        return e;
    unsigned named = mentions(sql, len);
    if (named & (MENTIONS_RESET | MENTIONS_ENCODING | MENTIONS_NAMES))
        e.encoding = QG_PG_UNKNOWN;
    if (named & (MENTIONS_RESET | MENTIONS_SCS))
        e.scs = QG_PG_UNKNOWN;
    return e;
}

static void add_encoding(qg_pg_pending *p, const char *name)
{
    for (unsigned i = 0; i < p->encoding_count; i++)
        if (strcmp(p->encodings[i], name) == 0)
            return;
    if (p->encoding_count == QG_PG_MAX_ENCODINGS || strlen(name) >= sizeof p->encodings[0]) {
        p->encoding_unknown = true; /* too many to check under each */
        return;
    }
    snprintf(p->encodings[p->encoding_count++], sizeof p->encodings[0], "%s", name);
}

void qg_pg_pending_add_reported(qg_pg_pending *p, const char *encoding, bool scs_on)
{
    add_encoding(p, encoding);
    if (scs_on)
        p->scs_on = true;
    else
        p->scs_off = true;
}

void qg_pg_pending_add_effect(qg_pg_pending *p, const qg_pg_effect *e)
{
    if (e->encoding == QG_PG_SETS)
        add_encoding(p, e->encoding_name);
    else if (e->encoding == QG_PG_UNKNOWN)
        p->encoding_unknown = true;
    if (e->scs == QG_PG_SETS && e->scs_on)
        p->scs_on = true;
    else if (e->scs == QG_PG_SETS)
        p->scs_off = true;
    else if (e->scs == QG_PG_UNKNOWN)
        p->scs_on = p->scs_off = true;
}
