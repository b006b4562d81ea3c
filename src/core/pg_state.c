/* What a PostgreSQL statement does to the state the next statements are
 * read under (src/core/pg_state.h). */
#include "pg_state.h"

#include <stdio.h>
#include <string.h>

#include "ascii.h"
#include "sql_words.h"

/* A small reader of the statement's words: whitespace and comments are
 * skipped, a word is letters, digits and underscores, a value a word, a
 * number or a quoted string. */
typedef struct words {
    const char *s;
    size_t len, pos;
} words;

static void skip_space(words *w)
{
    while (w->pos < w->len) {
        unsigned char c = (unsigned char)w->s[w->pos];
        if (qg_char_class[c] == QG_CC_SPACE) {
            w->pos++;
        } else if (c == '-' && w->pos + 1 < w->len && w->s[w->pos + 1] == '-') {
            while (w->pos < w->len && w->s[w->pos] != '\n' && w->s[w->pos] != '\r')
                w->pos++;
        } else if (c == '/' && w->pos + 1 < w->len && w->s[w->pos + 1] == '*') {
            unsigned depth = 0;
            for (; w->pos + 1 < w->len; w->pos++) {
                if (w->s[w->pos] == '/' && w->s[w->pos + 1] == '*') {
                    depth++;
                    w->pos++;
                } else if (w->s[w->pos] == '*' && w->s[w->pos + 1] == '/') {
                    w->pos++;
                    if (--depth == 0) {
                        w->pos++;
                        break;
                    }
                }
            }
            if (depth)
                w->pos = w->len;
        } else {
            break;
        }
    }
}

/* A word's bytes but '$' (sql_words.h). */
static bool is_word_byte(unsigned char c)
{
    return qg_char_in(c, QG_WORD_START | QG_CC(QG_CC_DIGIT));
}

/* Reads the next word or value into out (lower-cased unless quoted);
 * false when there is none that fits. */
static bool next_value(words *w, char *out, size_t cap)
{
    skip_space(w);
    size_t n = 0;
    if (w->pos >= w->len)
        return false;
    char quote = w->s[w->pos];
    if (quote == '\'' || quote == '"') {
        for (w->pos++; w->pos < w->len; w->pos++) {
            char c = w->s[w->pos];
            if (c == quote) {
                if (w->pos + 1 < w->len && w->s[w->pos + 1] == quote) {
                    w->pos++;
                } else {
                    w->pos++;
                    out[n] = '\0';
                    return true;
                }
            }
            if (c == '\\' || n + 1 >= cap)
                return false; /* an escape or a long value: not read here */
            out[n++] = c;
        }
        return false;
    }
    while (w->pos < w->len && is_word_byte((unsigned char)w->s[w->pos])) {
        if (n + 1 >= cap)
            return false;
        out[n++] = (char)qg_ascii_lower((unsigned char)w->s[w->pos++]);
    }
    out[n] = '\0';
    return n > 0;
}

static bool next_is(words *w, const char *word)
{
    size_t at = w->pos;
    char got[64];
    if (next_value(w, got, sizeof got) && strcmp(got, word) == 0)
        return true;
    w->pos = at;
    return false;
}

static bool next_byte(words *w, char c)
{
    skip_space(w);
    if (w->pos < w->len && w->s[w->pos] == c) {
        w->pos++;
        return true;
    }
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
    skip_space(w);
    bool alone = w->pos >= w->len; /* a list or a second statement: not read here */
    note(e, name, one && alone ? value : NULL);
}

/* Whether `word` appears in the text as a word of its own, in any case. */
static bool mentions(const char *s, size_t len, const char *word)
{
    size_t n = strlen(word);
    for (size_t i = 0; i + n <= len; i++)
        if (qg_ascii_ncasecmp(s + i, word, n) == 0 &&
            (i == 0 || !is_word_byte((unsigned char)s[i - 1])) &&
            (i + n == len || !is_word_byte((unsigned char)s[i + n])))
            return true;
    return false;
}

/* Whether `second` appears as a word right after the word `first` (white
 * space between): SET NAMES, RESET ALL, wherever they are. */
static bool mentions_after(const char *s, size_t len, const char *first, const char *second)
{
    size_t n = strlen(second), m = strlen(first);
    for (size_t i = 0; i + n <= len; i++) {
        if (qg_ascii_ncasecmp(s + i, second, n) != 0 ||
            (i > 0 && is_word_byte((unsigned char)s[i - 1])) ||
            (i + n < len && is_word_byte((unsigned char)s[i + n])))
            continue;
        size_t end = i;
        while (end > 0 && qg_char_in((unsigned char)s[end - 1], QG_CC(QG_CC_SPACE)))
            end--;
        if (end < i && end >= m && qg_ascii_ncasecmp(s + end - m, first, m) == 0 &&
            (end == m || !is_word_byte((unsigned char)s[end - m - 1])))
            return true;
    }
    return false;
}

/* set_config('name', 'value', is_local) with literals; any other use is
 * read as setting both to something not known in advance. */
static void read_set_config(const char *s, size_t len, qg_pg_effect *e)
{
    for (size_t i = 0; i + 10 <= len; i++) {
        if (qg_ascii_ncasecmp(s + i, "set_config", 10) != 0 ||
            (i > 0 && is_word_byte((unsigned char)s[i - 1])))
            continue;
        words w = {s, len, i + 10};
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

qg_pg_effect qg_pg_statement_effect(const char *sql, size_t len)
{
    qg_pg_effect e = {0};
    words w = {sql, len, 0};
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
    read_set_config(sql, len, &e);
    /* Anything else that names a setting or resets them all (a DO block,
     * a function body, a second statement) may set it.  NAMES is a setting
     * only after SET (LOCAL, SESSION): elsewhere it is a common name. */
    bool read_whole = e.encoding != QG_PG_KEEPS || e.scs != QG_PG_KEEPS;
    bool resets = mentions_after(sql, len, "reset", "all") ||
                  mentions_after(sql, len, "discard", "all");
    if (!read_whole && (resets || mentions(sql, len, "client_encoding") ||
                        mentions_after(sql, len, "set", "names") ||
                        mentions_after(sql, len, "local", "names") ||
                        mentions_after(sql, len, "session", "names")))
        e.encoding = QG_PG_UNKNOWN;
    if (!read_whole && (resets || mentions(sql, len, "standard_conforming_strings")))
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
