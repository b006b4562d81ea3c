/* Query shapes (see shape.h).  The lexer finds the structural tokens in the
 * server's reading; the code between them is split here into words, numbers,
 * operators and punctuation.  Each token is hashed as it is met; list
 * elements are hashed on their own and folded into the enclosing hash only
 * when they differ from the element before. */
#include "shape.h"

#include <stdbool.h>
#include <string.h>

#include "code_tokens.h"
#include "pass_count.h"
#include "sql_words.h"

#define END_PRIME 0x100000001b3ULL
#define SEED_POSTGRES 0xcbf29ce484222325ULL
#define SEED_MYSQL 0x84222325cbf29ce4ULL
#define SEED_ELEMENT 0x9e3779b97f4a7c15ULL
/* Lists nested deeper than this are hashed as they are, not folded. */
#define LIST_NESTING_MAX 8

/* Token classes; each token's hash ends with its class and length. */
typedef enum tclass {
    T_NONE = 0, /* start of the query */
    T_WORD,     /* keyword or unquoted identifier, case-folded */
    T_VALUE,    /* literal or parameter */
    T_IDENT,    /* quoted identifier, exact */
    T_OP,       /* run of operator characters */
    T_PUNCT,    /* one of ( ) [ ] , ; . : { } and anything else */
    T_ELEMENT,  /* a list element folded into its list */
    T_SEPARATOR /* between two kept list elements */
} tclass;

static unsigned char fold(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c | 0x20) : c;
}

typedef struct list_frame {
    unsigned depth;      /* bracket depth of the list's separators */
    unsigned char close; /* ')' or ']' ends an IN / ARRAY list; 0: VALUES rows */
    bool row_done;       /* VALUES: the current row's ')' was seen */
    bool expect_row;     /* VALUES: a '(' should start the next row */
    bool after_comma;    /* VALUES: that expected row follows a ',' */
    unsigned kept;       /* elements folded into the enclosing hash */
    uint64_t hash;       /* the current element */
    uint64_t prev;       /* the last element kept */
    size_t mark;         /* sample length before the current element's ',' */
} list_frame;

typedef struct sample_text {
    char *buf;
    size_t cap; /* 0: no sample wanted */
    size_t len;
    bool full;  /* cut: nothing more is written or taken back */
    tclass last_class;
    unsigned char last_char;
} sample_text;

typedef struct shaper {
    const qg_context *ctx;
    bool mysql;
    bool multibyte;
    bool exec_comment; /* MySQL: inside an executable comment's body */
    const unsigned char *end; /* of the query */
    uint64_t main;
    list_frame lists[LIST_NESTING_MAX];
    unsigned nlists;
    unsigned depth;
    tclass prev_class;
    unsigned char prev_char; /* for T_PUNCT */
    const unsigned char *prev_word; /* for T_WORD */
    size_t prev_word_len;
    enum { AFTER_OTHER, AFTER_IN, AFTER_VALUES, AFTER_ARRAY } after;
    sample_text sample;
} shaper;

static uint64_t mix64(uint64_t h, uint64_t v)
{
    h = (h ^ v) * 0x9fb21c651e98df25ULL;
    return h ^ (h >> 29);
}

/* Eight bytes at once: ASCII 'A'…'Z' to lower case, other bytes kept. */
static uint64_t fold8(uint64_t x)
{
    const uint64_t high = 0x8080808080808080ULL;
    uint64_t seven = x & ~high;
    uint64_t above_z = seven + 0x2525252525252525ULL; /* bit 7 set when > 'Z' */
    uint64_t from_a = seven + 0x3f3f3f3f3f3f3f3fULL;  /* bit 7 set when >= 'A' */
    uint64_t upper = ~x & from_a & ~above_z & high;
    return x | (upper >> 2);
}

/* Hashes bytes eight at a time (the token's length is hashed by end_token).
 * The last 1 to 7 bytes are read as a whole word, masked, when the buffer
 * (ending at `limit`) has room for it. */
static uint64_t mix_bytes(uint64_t h, const unsigned char *p, size_t n, bool fold_case,
                          const unsigned char *limit)
{
    uint64_t v;
    for (; n >= 8; p += 8, n -= 8) {
        memcpy(&v, p, 8);
        h = mix64(h, fold_case ? fold8(v) : v);
    }
    if (n) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (limit - p >= 8) {
            memcpy(&v, p, 8);
            v &= ~0ULL >> (64 - 8 * n); /* the first n bytes */
        } else
#endif
        {
            v = 0;
            for (size_t i = 0; i < n; i++)
                v |= (uint64_t)p[i] << (8 * i);
        }
        h = mix64(h, fold_case ? fold8(v) : v);
    }
    return h;
}

static uint64_t end_token(uint64_t h, tclass cls, uint64_t len)
{
    h ^= ((uint64_t)cls << 56) ^ len;
    h *= END_PRIME;
    return h ^ (h >> 31);
}

static uint64_t *current_hash(shaper *sh)
{
    return sh->nlists ? &sh->lists[sh->nlists - 1].hash : &sh->main;
}

static uint64_t *enclosing_hash(shaper *sh)
{
    return sh->nlists >= 2 ? &sh->lists[sh->nlists - 2].hash : &sh->main;
}

/* ------------------------------------------------------------ sample */

static void sample_raw(sample_text *t, const char *p, size_t n)
{
    if (t->full)
        return;
    if (t->len + n + 4 > t->cap) { /* room for "..." and the NUL */
        memcpy(t->buf + t->len, "...", 3);
        t->len += 3;
        t->full = true;
        return;
    }
    memcpy(t->buf + t->len, p, n);
    t->len += n;
}

static void sample_token(sample_text *t, tclass cls, const unsigned char *p, size_t n,
                         bool fold_case)
{
    if (!t->cap || t->full)
        return;
    unsigned char first = n ? p[0] : 0;
    bool glue_after = t->last_class == T_PUNCT &&
                      (t->last_char == '(' || t->last_char == '[' || t->last_char == '.');
    bool glue_before = cls == T_PUNCT && (first == ')' || first == ']' || first == ',' ||
                                          first == '.' || first == ';');
    if (t->len > 0 && !glue_after && !glue_before)
        sample_raw(t, " ", 1);
    if (cls == T_VALUE) {
        sample_raw(t, "?", 1);
    } else {
        static const char hex[] = "0123456789abcdef";
        for (size_t i = 0; i < n; i++) {
            unsigned char c = fold_case ? fold(p[i]) : p[i];
            if (c >= 0x20 && c < 0x7f && c != '\\') {
                sample_raw(t, (const char *)&c, 1);
            } else {
                char esc[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
                sample_raw(t, esc, 4);
            }
        }
    }
    t->last_class = cls;
    t->last_char = first;
}

static void sample_rollback(sample_text *t, size_t mark)
{
    if (t->cap && !t->full)
        t->len = mark;
}

/* ------------------------------------------------------------- lists */

static bool is_punct(tclass cls, const unsigned char *p, unsigned char c)
{
    return cls == T_PUNCT && p[0] == c;
}

/* The current element of the innermost list is complete: fold it into the
 * enclosing hash unless it repeats the element before. */
static void finish_element(shaper *sh)
{
    list_frame *f = &sh->lists[sh->nlists - 1];
    if (f->kept > 0 && f->hash == f->prev) {
        sample_rollback(&sh->sample, f->mark);
        return;
    }
    uint64_t *outer = enclosing_hash(sh);
    if (f->kept > 0)
        *outer = end_token(*outer, T_SEPARATOR, 0);
    *outer = end_token(mix64(*outer, f->hash),
                       T_ELEMENT, sizeof f->hash);
    f->prev = f->hash;
    f->kept++;
}

static void start_element(list_frame *f, size_t sample_len)
{
    f->hash = SEED_ELEMENT;
    f->mark = sample_len;
}

static void push_list(shaper *sh, unsigned char close)
{
    if (sh->nlists == LIST_NESTING_MAX)
        return;
    list_frame *f = &sh->lists[sh->nlists++];
    memset(f, 0, sizeof *f);
    f->depth = sh->depth;
    f->close = close;
    f->expect_row = close == 0;
    start_element(f, sh->sample.len);
}

/* A VALUES list ends at the first token after a row that is not ','. */
static void end_values_list(shaper *sh)
{
    list_frame *f = &sh->lists[sh->nlists - 1];
    bool comma_pending = f->expect_row && f->after_comma;
    sh->nlists--;
    if (comma_pending) { /* the ',' turned out not to separate rows */
        static const unsigned char comma = ',';
        uint64_t *h = current_hash(sh);
        *h = end_token(mix64(*h, comma), T_PUNCT, 1);
    }
}

/* Handles a token at a VALUES list's own depth; true when it was consumed
 * as a separator. */
static bool values_boundary(shaper *sh, tclass cls, const unsigned char *p)
{
    list_frame *f = &sh->lists[sh->nlists - 1];
    if (f->row_done) {
        finish_element(sh);
        if (is_punct(cls, p, ',')) {
            f->row_done = false;
            f->expect_row = true;
            f->after_comma = true;
            start_element(f, sh->sample.len);
            sample_token(&sh->sample, T_PUNCT, p, 1, false);
            sh->prev_class = T_PUNCT;
            sh->prev_char = ',';
            return true;
        }
        sh->nlists--;
        return false;
    }
    if (f->expect_row) {
        if (is_punct(cls, p, '(')) {
            f->expect_row = false;
            return false;
        }
        end_values_list(sh);
    }
    return false;
}

/* ------------------------------------------------------------ tokens */

static bool word_is(const unsigned char *p, size_t n, const char *word)
{
    size_t wl = strlen(word);
    if (n != wl)
        return false;
    for (size_t i = 0; i < n; i++)
        if (fold(p[i]) != (unsigned char)word[i])
            return false;
    return true;
}

/* The words the shape treats specially. */
typedef enum keyword {
    KW_NONE = 0,
    KW_IN,
    KW_VALUES,
    KW_VALUE, /* MySQL's synonym of VALUES */
    KW_ARRAY,
    KW_LITERAL /* NULL, TRUE, FALSE: values */
} keyword;

static keyword keyword_of(const unsigned char *p, size_t n)
{
    switch (n) {
    case 2:
        return word_is(p, n, "in") ? KW_IN : KW_NONE;
    case 4:
        return word_is(p, n, "null") || word_is(p, n, "true") ? KW_LITERAL : KW_NONE;
    case 5:
        if (word_is(p, n, "false"))
            return KW_LITERAL;
        if (word_is(p, n, "value"))
            return KW_VALUE;
        return word_is(p, n, "array") ? KW_ARRAY : KW_NONE;
    case 6:
        return word_is(p, n, "values") ? KW_VALUES : KW_NONE;
    default:
        return KW_NONE;
    }
}

static void token_in_context(shaper *sh, tclass cls, const unsigned char *p, size_t n,
                             keyword kw)
{
    /* List boundaries first: they decide which hash the token goes to. */
    while (sh->nlists) {
        list_frame *f = &sh->lists[sh->nlists - 1];
        if (sh->depth != f->depth)
            break;
        if (f->close == 0) {
            size_t before = sh->nlists;
            if (values_boundary(sh, cls, p))
                return;
            if (sh->nlists == before)
                break;
            continue; /* the list ended: the token may end an outer one too */
        }
        if (is_punct(cls, p, ',')) {
            finish_element(sh);
            start_element(f, sh->sample.len);
            sample_token(&sh->sample, T_PUNCT, p, 1, false);
            sh->prev_class = T_PUNCT;
            sh->prev_char = ',';
            return;
        }
        break;
    }

    bool closes_list = false;
    if (cls == T_PUNCT && (p[0] == ')' || p[0] == ']')) {
        if (sh->nlists) {
            list_frame *f = &sh->lists[sh->nlists - 1];
            if (f->close == p[0] && f->depth == sh->depth) {
                finish_element(sh);
                sh->nlists--;
                closes_list = true;
            }
        }
        if (sh->depth > 0)
            sh->depth--;
    }

    bool fold_case = cls == T_WORD;
    uint64_t *h = current_hash(sh);
    uint64_t body = cls == T_VALUE ? *h : mix_bytes(*h, p, n, fold_case, sh->end);
    *h = end_token(body, cls, cls == T_VALUE ? 0 : n);
    if (sh->sample.cap)
        sample_token(&sh->sample, cls, p, n, fold_case);

    if (cls == T_PUNCT && (p[0] == '(' || p[0] == '[')) {
        sh->depth++;
        if (sh->after == AFTER_IN && p[0] == '(')
            push_list(sh, ')');
        else if (sh->after == AFTER_ARRAY && p[0] == '[')
            push_list(sh, ']');
    } else if (cls == T_PUNCT && p[0] == ')' && !closes_list && sh->nlists) {
        list_frame *f = &sh->lists[sh->nlists - 1];
        if (f->close == 0 && f->depth == sh->depth)
            f->row_done = true;
    }

    sh->after = AFTER_OTHER;
    if (kw == KW_IN) {
        sh->after = AFTER_IN;
    } else if (kw == KW_VALUES || (sh->mysql && kw == KW_VALUE)) {
        sh->after = AFTER_VALUES;
        push_list(sh, 0);
    } else if (!sh->mysql && kw == KW_ARRAY) {
        sh->after = AFTER_ARRAY;
    }
    sh->prev_class = cls;
    sh->prev_char = cls == T_PUNCT ? p[0] : 0;
    sh->prev_word = p;
    sh->prev_word_len = n;
}

/* Most tokens only go into the current hash: all but brackets, the special
 * words, and tokens at the depth of the innermost list's separators. */
static inline void token(shaper *sh, tclass cls, const unsigned char *p, size_t n, keyword kw)
{
    uint64_t *h = &sh->main;
    if (sh->nlists) {
        list_frame *f = &sh->lists[sh->nlists - 1];
        if (sh->depth == f->depth) {
            token_in_context(sh, cls, p, n, kw);
            return;
        }
        h = &f->hash;
    }
    if (kw != KW_NONE || sh->sample.cap ||
        (cls == T_PUNCT && (p[0] == '(' || p[0] == ')' || p[0] == '[' || p[0] == ']'))) {
        token_in_context(sh, cls, p, n, kw);
        return;
    }
    *h = end_token(cls == T_VALUE ? *h : mix_bytes(*h, p, n, cls == T_WORD, sh->end), cls,
                   cls == T_VALUE ? 0 : n);
    sh->after = AFTER_OTHER;
    sh->prev_class = cls;
    sh->prev_char = cls == T_PUNCT ? p[0] : 0;
    sh->prev_word = p;
    sh->prev_word_len = n;
}

/* Keywords after which a sign can only start an operand ("SELECT -1"). */
static bool word_takes_operand(const unsigned char *p, size_t n)
{
    static const char *const words[] = {"select", "where", "and", "or", "not", "then",
                                        "else", "when", "limit", "offset", "between", "case",
                                        "return", "like", "having", "on"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (word_is(p, n, words[i]))
            return true;
    return false;
}

/* A sign right before a number belongs to it where no operand precedes. */
static bool sign_starts_value(const shaper *sh)
{
    switch (sh->prev_class) {
    case T_NONE:
    case T_OP:
        return true;
    case T_WORD:
        return word_takes_operand(sh->prev_word, sh->prev_word_len);
    case T_PUNCT:
        return sh->prev_char == '(' || sh->prev_char == '[' || sh->prev_char == ',' ||
               sh->prev_char == ';';
    default:
        return false;
    }
}

static bool number_follows(const unsigned char *s, size_t at, size_t end)
{
    if (at < end && qg_char_class[s[at]] == QG_CC_DIGIT)
        return true;
    return at + 1 < end && s[at] == '.' && qg_char_class[s[at + 1]] == QG_CC_DIGIT;
}

/* An operator of a shape is a run of operator characters (in PG '?' and
 * '$' among them), wider than the server's operators, so that spacing
 * does not change a shape; it stops before a sign that starts a number
 * ("=-1" is '=' then -1).  The run from s[p] (code that ends at `end`),
 * hashed; returns where it ends. */
static size_t operator_run(shaper *sh, const unsigned char *s, size_t p, size_t end)
{
    const unsigned op_run = sh->mysql ? QG_CC(QG_CC_OPERATOR) | QG_CC(QG_CC_AT)
                                      : QG_PG_OPERATOR | QG_CC(QG_CC_DOLLAR);
    unsigned char c = s[p];
    if ((c == '-' || c == '+') && number_follows(s, p + 1, end) && sign_starts_value(sh)) {
        size_t q = qg_number_end(s, p + 1, end);
        token(sh, T_VALUE, s + p, q - p, KW_NONE);
        return q;
    }
    size_t q = p + 1;
    for (; q < end && qg_char_in(s[q], op_run); q++) {
        if ((s[q] == '-' || s[q] == '+') && number_follows(s, q + 1, end))
            break;
        bool pair = q + 1 < end;
        if (sh->mysql && pair && s[q] == '/' && s[q + 1] == '*')
            break;
        if (sh->mysql && sh->exec_comment && pair && s[q] == '*' && s[q + 1] == '/')
            break;
    }
    token(sh, T_OP, s + p, q - p, KW_NONE);
    return q;
}

/* Hashes the token t from s[p] on (an operator run may have taken its
 * first bytes); `end` is where the code around it ends.  Returns how far
 * the query is read, which may be past t. */
static size_t shape_token(shaper *sh, const unsigned char *s, const qg_code_token *t, size_t p,
                          size_t end)
{
    switch (t->kind) {
    case QG_CODE_STRING:
    case QG_CODE_DOLLAR:
        token(sh, T_VALUE, s + p, t->end - p, KW_NONE);
        return t->end;
    case QG_CODE_QIDENT:
        token(sh, T_IDENT, s + p, t->end - p, KW_NONE);
        return t->end;
    case QG_CODE_WORD: {
        keyword kw = keyword_of(s + p, t->end - p);
        token(sh, kw == KW_LITERAL ? T_VALUE : T_WORD, s + p, t->end - p, kw);
        return t->end;
    }
    case QG_CODE_NUMBER:
        token(sh, T_VALUE, s + p, t->end - p, KW_NONE);
        return t->end;
    case QG_CODE_PARAM:
        if (p == t->start) {
            token(sh, T_VALUE, s + p, t->end - p, KW_NONE);
            return t->end;
        }
        /* the digits after a '$' an operator run took */
        end = qg_number_end(s, p, end);
        token(sh, T_VALUE, s + p, end - p, KW_NONE);
        return end;
    case QG_CODE_OPERATOR:
        if (s[p] != ':')
            return operator_run(sh, s, p, end);
        break; /* ':=' is ':' then the operator '=' */
    case QG_CODE_PUNCT:
        if (s[p] == '$' || s[p] == '@') /* MySQL's '@': an operator character of a shape */
            return operator_run(sh, s, p, end);
        break;
    case QG_CODE_EXEC_OPEN:
        sh->exec_comment = true;
        return t->end;
    case QG_CODE_EXEC_CLOSE:
        sh->exec_comment = false;
        return t->end;
    case QG_CODE_COMMENT:
    case QG_CODE_END:
        return t->end;
    }
    token(sh, T_PUNCT, s + p, 1, KW_NONE); /* punctuation a byte at a time: '::' is two */
    return p + 1;
}

static uint64_t finalize(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h ? h : 1;
}

uint64_t qg_shape_compute(const qg_context *ctx, const char *sql, size_t len, char *sample,
                          size_t cap)
{
    QG_COUNT_PASS(QG_PASS_SHAPE);
    shaper sh;
    sh.ctx = ctx;
    sh.mysql = ctx->dialect == QG_DIALECT_MYSQL;
    sh.multibyte = !qg_encoding_is_single_byte(ctx->encoding);
    sh.exec_comment = false;
    sh.end = (const unsigned char *)sql + len;
    sh.main = sh.mysql ? SEED_MYSQL : SEED_POSTGRES;
    sh.nlists = 0;
    sh.depth = 0;
    sh.prev_class = T_NONE;
    sh.prev_char = 0;
    sh.prev_word = NULL;
    sh.prev_word_len = 0;
    sh.after = AFTER_OTHER;
    sh.sample = (sample_text){.buf = sample, .cap = sample && cap >= 8 ? cap : 0};

    const unsigned char *s = (const unsigned char *)sql;
    qg_code_tokens tokens;
    qg_code_token t;
    size_t pos = 0;
    qg_code_tokens_init(&tokens, ctx, sql, len);
    while (qg_code_next(&tokens, &t)) {
        size_t code_end = qg_code_gap_end(&tokens);
        for (size_t p = t.start > pos ? t.start : pos; p < t.end; p = pos)
            pos = shape_token(&sh, s, &t, p, code_end);
    }
    while (sh.nlists) {
        list_frame *f = &sh.lists[sh.nlists - 1];
        if (f->close == 0 && f->expect_row)
            end_values_list(&sh);
        else {
            finish_element(&sh);
            sh.nlists--;
        }
    }
    if (sample && cap)
        sample[sh.sample.cap ? sh.sample.len : 0] = '\0';
    return finalize(sh.main);
}
