/* What the statements of one multi-statement text do to the session state
 * before the server lexes the statements after them.
 *
 * The server reports every change of the state once a statement ran (session
 * tracking); but the later statements of one text are lexed with what the
 * earlier ones set before any report reaches the client.  So a text of
 * several statements is read here statement by statement: the SET
 * statements whose effect is plain (SET NAMES x, SET character_set_client =
 * x, SET sql_mode = '…', in any spelling of scope and name) give the next
 * state; any other statement that may change it (a SET of an expression,
 * EXECUTE, a compound statement, SET STATEMENT … FOR) leaves it unknown.
 * CALL leaves it as it was: when a stored procedure returns, the server
 * gives its caller back the character_set_client, collation_connection and
 * sql_mode it had (sp_head::execute).  Pure logic: no client library. */
#include "mysql_statements.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ascii.h"
#include "code_tokens.h"
#include "pass_count.h"
#include "quoteguard.h"
#include "sql_words.h"

/* ------------------------------------------------ reading SET statements */

typedef enum item_kind { IT_END, IT_WORD, IT_STRING, IT_QIDENT, IT_PUNCT } item_kind;

typedef struct item {
    item_kind kind;
    size_t start, end; /* bytes of the item (quotes included for strings) */
    qg_string_form form;
} item;

/* Walks one statement through the shared tokens (code_tokens.h), comments
 * left out; a word here is a name as a SET statement spells it: the words,
 * numbers, '.' and '$' it is written with, side by side, and '@' in a
 * variable's (@@global.sql_mode). */
typedef struct cursor {
    qg_code_tokens tokens;
    const char *sql;
    size_t len;
    size_t pos;         /* past the last item read; at the ';' that ends the statement */
    bool saw_uncertain; /* an executable comment that may not run */
    bool saw_gated;     /* an executable comment that some servers do not run */
    const qg_my_server_kind *server;
    size_t end;         /* statement end, past its ';' */
    bool done;
} cursor;

/* Besides a word's bytes, a dotted name's; a variable's name also takes
 * '@' (@@global.sql_mode). */
#define NAME_BYTES QG_MY_NAME_BYTES
#define VARIABLE_BYTES (QG_CC(QG_CC_AT) | NAME_BYTES)

static void cursor_init(cursor *c, const qg_context *ctx, const qg_my_server_kind *server,
                        const char *sql, size_t len)
{
    qg_code_tokens_init(&c->tokens, ctx, sql, len);
    c->server = server;
    c->sql = sql;
    c->len = len;
    c->pos = 0;
    c->saw_uncertain = false;
    c->saw_gated = false;
    c->end = len;
    c->done = false;
}

/* Whether the server is known to run an executable comment's body: every
 * server runs some; a MariaDB of known version runs the M form and the
 * plain form up to its version, except MySQL 5.7's versions (50700 to
 * 99999), which it runs only in the M form (sql_words.h).  Otherwise
 * whether it ran is for the server to say. */
static bool comment_runs_known(const qg_my_server_kind *server, const qg_exec_comment *ec)
{
    if (qg_my_exec_comment_always_runs(ec))
        return true;
    if (!server || !server->mariadb || server->version == 0 || ec->version > server->version)
        return false;
    return ec->mariadb || ec->version < 50700 || ec->version > 99999;
}

/* A token a name is written with. */
static bool name_token(const cursor *c, const qg_code_token *t)
{
    return t->kind == QG_CODE_WORD || t->kind == QG_CODE_NUMBER ||
           (t->kind == QG_CODE_PUNCT && qg_char_in((unsigned char)c->sql[t->start],
                                                   VARIABLE_BYTES | QG_CC(QG_CC_DOLLAR)));
}

static void cursor_next(cursor *c, item *it)
{
    it->kind = IT_END;
    qg_code_token t = {0};
    while (!c->done) {
        if (!qg_code_next(&c->tokens, &t)) {
            c->done = true;
            c->end = c->len;
            return;
        }
        switch (t.kind) {
        case QG_CODE_COMMENT:
        case QG_CODE_EXEC_CLOSE:
            continue;
        case QG_CODE_EXEC_OPEN:
            c->saw_uncertain |= !comment_runs_known(c->server, &t.exec);
            c->saw_gated |= !qg_my_exec_comment_always_runs(&t.exec);
            continue;
        case QG_CODE_STRING:
        case QG_CODE_QIDENT:
        case QG_CODE_DOLLAR:
            it->kind = t.kind == QG_CODE_QIDENT ? IT_QIDENT : IT_STRING;
            it->form = t.form;
            break;
        default:
            if (c->sql[t.start] == ';') {
                c->done = true;
                c->end = t.end;
                c->pos = t.start;
                return;
            }
            it->kind = name_token(c, &t) ? IT_WORD : IT_PUNCT;
            break;
        }
        it->start = t.start;
        it->end = t.end;
        /* the tokens of a name side by side, up to the code's end; the
         * server ends a keyword at '@': EXECUTE@x is EXECUTE @x */
        const unsigned char *u = (const unsigned char *)c->sql;
        unsigned extra = u[it->start] == '@' ? VARIABLE_BYTES : NAME_BYTES;
        while (it->kind == IT_WORD && it->end < qg_code_gap_end(&c->tokens) &&
               qg_char_in(u[it->end], QG_WORD_CONT | extra) && qg_code_next(&c->tokens, &t))
            it->end = t.end;
        c->pos = it->end;
        return;
    }
}

/* A name's text a value is read from: a sign inside (a number's
 * exponent) makes it an expression. */
static bool plain_name(const cursor *c, const item *it)
{
    for (size_t i = it->start; i < it->end; i++)
        if (c->sql[i] == '+' || c->sql[i] == '-')
            return false;
    return true;
}

static bool item_word(const cursor *c, const item *it, const char *want)
{
    return it->kind == IT_WORD && qg_my_word_is(c->sql + it->start, it->end - it->start, want);
}

/* ':=' counts as '='; an operator that starts with '=' is '=' and the
 * start of the value after it. */
static bool item_punct(const cursor *c, const item *it, char want)
{
    if (it->kind != IT_PUNCT)
        return false;
    char first = c->sql[it->start];
    return first == want || (want == '=' && first == ':' && it->end - it->start == 2);
}

/* The text of a literal value: a bare word, or a plain quoted string without
 * escapes.  False for anything else (an expression). */
static bool literal_value(const cursor *c, const item *it, const char **text, size_t *len)
{
    const char *s = c->sql + it->start;
    size_t n = it->end - it->start;
    if (it->kind == IT_WORD) {
        if (s[0] == '@' || qg_my_word_is(s, n, "DEFAULT") || !plain_name(c, it))
            return false;
        *text = s;
        *len = n;
        return true;
    }
    /* a string, or a back-quoted name (SET NAMES `gbk`) */
    bool string = it->kind == IT_STRING && (it->form == QG_FORM_PLAIN || it->form == QG_FORM_DOUBLE);
    bool quoted_name = it->kind == IT_QIDENT && s[0] == '`';
    if (!(string || quoted_name) || n < 2 || s[0] != s[n - 1])
        return false;
    for (size_t i = 1; i + 1 < n; i++)
        if (s[i] == '\\' || s[i] == s[0])
            return false;
    *text = s + 1;
    *len = n - 2;
    return true;
}

typedef enum tracked_var { VAR_OTHER, VAR_CHARSET_CLIENT, VAR_SQL_MODE } tracked_var;

static tracked_var tracked_variable(const char *name, size_t len)
{
    if (qg_my_word_is(name, len, "character_set_client"))
        return VAR_CHARSET_CLIENT;
    if (qg_my_word_is(name, len, "sql_mode"))
        return VAR_SQL_MODE;
    return VAR_OTHER;
}

/* Reads the value after `=` (*it) up to the next top-level ',' or the end;
 * *it is left on that ',' or the end.  Returns whether it was a single literal. */
static bool read_value(cursor *c, item *it, const char **text, size_t *len)
{
    /* "=-1", "=~x": the operator is the value's start, an expression */
    if (c->sql[it->start] != '=' || it->end - it->start == 1)
        cursor_next(c, it);
    item first = *it;
    bool single = true;
    int depth = 0;
    cursor_next(c, it);
    if (first.kind == IT_END || item_punct(c, &first, ','))
        return false;
    if (item_punct(c, &first, '('))
        depth = 1, single = false;
    while (it->kind != IT_END && (depth > 0 || !item_punct(c, it, ','))) {
        if (item_punct(c, it, '('))
            depth++;
        else if (item_punct(c, it, ')'))
            depth--;
        single = false;
        cursor_next(c, it);
    }
    return single && literal_value(c, &first, text, len);
}

/* A charset name after NAMES / CHARACTER SET, and an optional COLLATE. */
static void read_charset_clause(cursor *c, item *it, qg_my_state *st, qg_my_effect *fx)
{
    const char *text;
    size_t len;
    cursor_next(c, it);
    if (literal_value(c, it, &text, &len)) {
        qg_my_state_set_charset(st, text, len);
        fx->changed = true;
        fx->change.charset_set = true;
    } else {
        fx->change.charset_unknown = true;
    }
    cursor_next(c, it);
    if (item_word(c, it, "COLLATE")) {
        cursor_next(c, it);
        cursor_next(c, it);
    }
}

/* SET forms that assign no variable. */
static bool inert_set(const cursor *c, const item *it)
{
    return item_word(c, it, "TRANSACTION") || item_word(c, it, "PASSWORD") ||
           item_word(c, it, "ROLE") || item_word(c, it, "DEFAULT");
}

/* SET [scope] assignment {, assignment} from its first item after SET:
 * applies the tracked ones to *st. */
static void read_set_list(cursor *c, item it, qg_my_state *st, qg_my_effect *fx)
{
    bool sticky_global = false; /* a bare GLOBAL applies to later bare names too */
    for (;;) {
        bool global = sticky_global, scope_given = false;
        if (item_word(c, &it, "GLOBAL") || item_word(c, &it, "SESSION") ||
            item_word(c, &it, "LOCAL")) {
            global = sticky_global = item_word(c, &it, "GLOBAL");
            scope_given = true;
            cursor_next(c, &it);
        }
        if (item_word(c, &it, "NAMES")) {
            read_charset_clause(c, &it, st, fx);
        } else if (item_word(c, &it, "CHARSET") || item_word(c, &it, "CHARACTER") ||
                   item_word(c, &it, "CHAR")) {
            if (!item_word(c, &it, "CHARSET")) {
                cursor_next(c, &it);
                if (!item_word(c, &it, "SET")) {
                    fx->unknown = true;
                    return;
                }
            }
            read_charset_clause(c, &it, st, fx);
        } else if (it.kind == IT_WORD || it.kind == IT_QIDENT) {
            item first = it;
            const char *name = c->sql + it.start;
            size_t len = it.end - it.start;
            if (it.kind == IT_QIDENT) {
                name++;
                len = len >= 2 ? len - 2 : 0;
            } else if (len > 2 && name[0] == '@' && name[1] == '@') {
                name += 2, len -= 2;
                scope_given = true;
                global = false;
                if (len > 7 && qg_my_word_is(name, 7, "global."))
                    global = true, name += 7, len -= 7;
                else if (len > 8 && qg_my_word_is(name, 8, "session."))
                    name += 8, len -= 8;
                else if (len > 6 && qg_my_word_is(name, 6, "local."))
                    name += 6, len -= 6;
            }
            tracked_var var = tracked_variable(name, len);
            cursor_next(c, &it);
            if (!item_punct(c, &it, '=')) {
                /* SET TRANSACTION, PASSWORD, ROLE, DEFAULT ROLE change
                 * nothing tracked; what else is not read here (SET
                 * STATEMENT … FOR, a spaced name) is for the server to say */
                fx->unknown |= !(it.kind == IT_WORD && inert_set(c, &first));
                return;
            }
            const char *text;
            size_t text_len;
            bool literal = read_value(c, &it, &text, &text_len);
            /* A sticky GLOBAL (no scope of its own) may or may not apply:
             * like an expression, that is for the server to say. */
            if (var != VAR_OTHER && (!global || !scope_given)) {
                unsigned flags;
                bool known = !global && literal;
                /* A number is a collation id: the server knows its set. */
                if (known && var == VAR_CHARSET_CLIENT && text_len > 0 &&
                    strspn(text, "0123456789") >= text_len)
                    known = false;
                if (known && var == VAR_CHARSET_CLIENT)
                    qg_my_state_set_charset(st, text, text_len);
                else if (known && qg_my_sql_mode_flags(text, text_len, &flags))
                    st->flags = flags;
                else
                    known = false;
                fx->changed |= known;
                if (var == VAR_CHARSET_CLIENT) {
                    fx->change.charset_set |= known;
                    fx->change.charset_unknown |= !known;
                } else {
                    fx->change.flags_set |= known;
                    fx->change.flags_unknown |= !known;
                    fx->change.flags_in_status |= !known && !global;
                }
            }
        } else {
            fx->unknown = true;
            return;
        }
        if (!item_punct(c, &it, ','))
            return;
        cursor_next(c, &it);
    }
}

/* A word's first eight bytes (or fewer: len), folded as QG_MY_FOLD8 folds them,
 * little-endian, zero past the word: a word of at most eight bytes equals
 * a folded keyword exactly when it is that keyword in any case.  `avail`:
 * the bytes readable from word on (>= len). */
static inline uint64_t folded8(const char *word, size_t len, size_t avail)
{
    uint64_t v = 0;
    if (avail >= 8) {
        memcpy(&v, word, 8);
        v |= QG_MY_FOLD8;
        return len >= 8 ? v : v & ((UINT64_C(1) << (8 * len)) - 1);
    }
    for (size_t i = 0; i < len; i++)
        v |= (uint64_t)((unsigned char)word[i] | 0x20) << (8 * i);
    return v;
}

/* A keyword's letters, lower case (0x20 set already), zero past its end:
 * folded as folded8 folds a word, and a constant for a case label. */
#define KEYWORD_BYTE(c, i) ((uint64_t)(c) << (8 * (i)))
#define KEYWORD(a, b, c, d, e, f, g, h)                                                    \
    (KEYWORD_BYTE(a, 0) | KEYWORD_BYTE(b, 1) | KEYWORD_BYTE(c, 2) | KEYWORD_BYTE(d, 3) |     \
     KEYWORD_BYTE(e, 4) | KEYWORD_BYTE(f, 5) | KEYWORD_BYTE(g, 6) | KEYWORD_BYTE(h, 7))

/* The first words whose kind is known (mysql_statements.h): no two of
 * them share a place under QG_MY_KEYWORD_PLACE (two that did would be two
 * initialisers of one element, which -Woverride-init refuses).
 * SAVEPOINT, nine letters, is read apart. */
#define KEYWORD_ENTRY(folded, kind) [QG_MY_KEYWORD_PLACE(folded)] = {(folded), (kind)}

const qg_my_keyword qg_my_keywords[QG_MY_KEYWORDS] = {
    KEYWORD_ENTRY(KEYWORD('c', 'a', 'l', 'l', 0, 0, 0, 0), QG_MY_WORD_RUNS),
    KEYWORD_ENTRY(KEYWORD('e', 'x', 'e', 'c', 'u', 't', 'e', 0), QG_MY_WORD_RUNS),
    KEYWORD_ENTRY(KEYWORD('x', 'a', 0, 0, 0, 0, 0, 0), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('u', 's', 'e', 0, 0, 0, 0, 0), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('d', 'e', 's', 'c', 0, 0, 0, 0), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('k', 'i', 'l', 'l', 0, 0, 0, 0), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('l', 'o', 'a', 'd', 0, 0, 0, 0), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('l', 'o', 'c', 'k', 0, 0, 0, 0), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('s', 'h', 'o', 'w', 0, 0, 0, 0), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('w', 'i', 't', 'h', 0, 0, 0, 0), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('a', 'l', 't', 'e', 'r', 0, 0, 0), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('c', 'h', 'e', 'c', 'k', 0, 0, 0), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('f', 'l', 'u', 's', 'h', 0, 0, 0), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('g', 'r', 'a', 'n', 't', 0, 0, 0), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('s', 't', 'a', 'r', 't', 0, 0, 0), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('t', 'a', 'b', 'l', 'e', 0, 0, 0), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('c', 'o', 'm', 'm', 'i', 't', 0, 0), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('c', 'r', 'e', 'a', 't', 'e', 0, 0), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('d', 'e', 'l', 'e', 't', 'e', 0, 0), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('i', 'n', 's', 'e', 'r', 't', 0, 0), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('r', 'e', 'n', 'a', 'm', 'e', 0, 0), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('r', 'e', 'p', 'a', 'i', 'r', 0, 0), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('r', 'e', 'v', 'o', 'k', 'e', 0, 0), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('s', 'e', 'l', 'e', 'c', 't', 0, 0), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('u', 'n', 'l', 'o', 'c', 'k', 0, 0), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('u', 'p', 'd', 'a', 't', 'e', 0, 0), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('v', 'a', 'l', 'u', 'e', 's', 0, 0), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('a', 'n', 'a', 'l', 'y', 'z', 'e', 0), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('e', 'x', 'p', 'l', 'a', 'i', 'n', 0), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('h', 'a', 'n', 'd', 'l', 'e', 'r', 0), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('r', 'e', 'l', 'e', 'a', 's', 'e', 0), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('r', 'e', 'p', 'l', 'a', 'c', 'e', 0), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('d', 'e', 's', 'c', 'r', 'i', 'b', 'e'), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('o', 'p', 't', 'i', 'm', 'i', 'z', 'e'), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('r', 'o', 'l', 'l', 'b', 'a', 'c', 'k'), QG_MY_WORD_INERT),
    KEYWORD_ENTRY(KEYWORD('t', 'r', 'u', 'n', 'c', 'a', 't', 'e'), QG_MY_WORD_INERT),
};

/* The kind of word[0, len), 2 to 9 bytes, whose first eight folded8
 * folded into `folded`. */
static inline __attribute__((always_inline)) qg_my_word_kind
folded_word_kind(uint64_t folded, const char *word, size_t len)
{
    if (len == 9) /* of nine letters only SAVEPOINT has a kind */
        return folded == KEYWORD('s', 'a', 'v', 'e', 'p', 'o', 'i', 'n') &&
                       ((unsigned char)word[8] | 0x20) == 't'
                   ? QG_MY_WORD_INERT
                   : QG_MY_WORD_OTHER;
    return qg_my_keyword_kind(folded);
}

/* The kind of word[0, len), whose readable bytes are word[0, avail). */
static qg_my_word_kind word_kind(const char *word, size_t len, size_t avail)
{
    if (len < 2 || len > 9)
        return QG_MY_WORD_OTHER;
    return folded_word_kind(folded8(word, len, avail), word, len);
}

qg_my_word_kind qg_my_first_word_kind(const char *word, size_t len)
{
    return word_kind(word, len, len);
}

bool qg_my_inert_first_word(const char *word, size_t len)
{
    return qg_my_first_word_kind(word, len) == QG_MY_WORD_INERT;
}

/* Statements that leave the state as they were: an inert first word, or
 * '(' (a query in parentheses). */
static bool inert_statement(const cursor *c, const item *it)
{
    if (item_punct(c, it, '('))
        return true;
    return it->kind == IT_WORD && qg_my_inert_first_word(c->sql + it->start, it->end - it->start);
}

/* Statements inside statements (EXECUTE IMMEDIATE, PREPARE … FROM, SET
 * STATEMENT … FOR) are read to this depth; deeper ones are for the server
 * to say. */
#define NESTED_MAX 4

static size_t read_statement_at(qg_my_state *st, const qg_my_server_kind *server, const char *sql,
                                size_t len, qg_my_effect *fx, unsigned depth);

/* The body of a plain string literal (no escape, no doubled quote): the
 * text the server runs for EXECUTE IMMEDIATE / PREPARE … FROM. */
static bool literal_text(const cursor *c, const item *it, const char **text, size_t *len)
{
    return it->kind == IT_STRING && literal_value(c, it, text, len);
}

/* A statement name: a bare word or a back-quoted name. */
static bool statement_name(const cursor *c, const item *it, qg_my_effect *fx)
{
    if (it->kind != IT_WORD && !(it->kind == IT_QIDENT && c->sql[it->start] == '`'))
        return false;
    fx->stmt_name = c->sql + it->start;
    fx->stmt_name_len = it->end - it->start;
    return true;
}

/* Reads the one statement `text` runs, as a part of the statement being
 * read: what it sets becomes that statement's (st updated); a text that is
 * more than one statement, or prepares or runs another, is for the server
 * to say. */
static void read_nested(qg_my_state *st, const cursor *c, const char *text, size_t len,
                        qg_my_effect *fx, unsigned depth)
{
    qg_my_effect inner;
    size_t n = read_statement_at(st, c->server, text, len, &inner, depth + 1);
    bool one = true;
    for (size_t i = n; i < len; i++)
        one = one && qg_char_class[(unsigned char)text[i]] == QG_CC_SPACE;
    fx->changed = inner.changed;
    fx->change = inner.change;
    fx->server_decides |= inner.server_decides;
    fx->unknown |= inner.unknown || !one || inner.prepares || inner.executes || inner.deallocates;
}

/* PREPARE name FROM text: nothing changes until it is executed; what it
 * would set then is read from a literal text. */
static void read_prepare(const qg_my_state *st, cursor *c, item *it, qg_my_effect *fx,
                         unsigned depth)
{
    cursor_next(c, it);
    if (!statement_name(c, it, fx))
        return;
    fx->prepares = true;
    fx->prepared.charset_unknown = fx->prepared.flags_unknown = true;
    cursor_next(c, it);
    if (!item_word(c, it, "FROM"))
        return;
    cursor_next(c, it);
    const char *text;
    size_t len;
    if (!literal_text(c, it, &text, &len) || depth >= NESTED_MAX)
        return;
    qg_my_state copy = *st;
    qg_my_effect inner = {0};
    read_nested(&copy, c, text, len, &inner, depth);
    fx->prepared = inner.change;
    fx->server_decides |= inner.server_decides;
    if (inner.unknown)
        fx->prepared.charset_unknown = fx->prepared.flags_unknown = true;
}

/* SET STATEMENT assignments FOR statement: the assignments hold while the
 * statement runs; what the statement itself sets stays (MariaDB).  Returns
 * the statement's end, or 0 when it is for the server to say. */
static size_t read_set_statement(qg_my_state *st, cursor *c, item *it, qg_my_effect *fx,
                                 unsigned depth)
{
    int nesting = 0;
    for (cursor_next(c, it); it->kind != IT_END; cursor_next(c, it)) {
        if (item_punct(c, it, '('))
            nesting++;
        else if (item_punct(c, it, ')'))
            nesting--;
        else if (it->kind == IT_WORD) {
            const char *w = c->sql + it->start;
            size_t n = it->end - it->start;
            /* a tracked variable set for the statement's run: the run
             * itself may be lexed or act otherwise */
            if (n > 2 && w[0] == '@')
                return 0;
            if (tracked_variable(w, n) != VAR_OTHER || qg_my_word_is(w, n, "NAMES"))
                return 0;
            if (nesting == 0 && qg_my_word_is(w, n, "FOR"))
                break;
        }
    }
    if (it->kind == IT_END || depth >= NESTED_MAX)
        return 0;
    size_t at = c->pos;
    qg_my_effect inner;
    size_t n = read_statement_at(st, c->server, c->sql + at, c->len - at, &inner, depth + 1);
    *fx = inner;
    if (c->saw_uncertain) /* whether this server ran it is for the server to say */
        fx->unknown = fx->change.charset_unknown = fx->change.flags_unknown = true;
    fx->server_decides |= c->saw_gated;
    return at + n;
}

bool qg_my_first_word(const char *sql, size_t len, size_t *start, size_t *word_len,
                      qg_my_word_kind *kind)
{
    size_t i = 0;
    while (i < len && qg_char_class[(unsigned char)sql[i]] == QG_CC_SPACE)
        i++;
    if (i >= len || qg_char_class[(unsigned char)sql[i]] != QG_CC_LETTER)
        return false;
    *start = i;
    if (qg_my_short_word(sql + i, len - i, word_len, kind))
        return true;
    *word_len = qg_word_end(NULL, (const unsigned char *)sql, i, len, NAME_BYTES) - i;
    *kind = word_kind(sql + i, *word_len, len - i);
    return true;
}

/* A text of one statement whose first word says it changes nothing: its
 * effect is known without lexing it. */
static bool lone_inert_statement(const char *sql, size_t len)
{
    size_t at, n;
    qg_my_word_kind kind;
    return qg_my_first_word(sql, len, &at, &n, &kind) && kind == QG_MY_WORD_INERT &&
           !memchr(sql + at + n, ';', len - at - n);
}

size_t qg_my_read_statement_on(qg_my_state *st, const qg_my_server_kind *server, const char *sql,
                               size_t len, qg_my_effect *fx)
{
    return read_statement_at(st, server, sql, len, fx, 0);
}

size_t qg_my_read_statement(qg_my_state *st, const char *sql, size_t len, qg_my_effect *fx)
{
    return read_statement_at(st, NULL, sql, len, fx, 0);
}

static size_t read_statement_at(qg_my_state *st, const qg_my_server_kind *server, const char *sql,
                                size_t len, qg_my_effect *fx, unsigned depth)
{
    memset(fx, 0, sizeof *fx);
    if (depth == 0)
        QG_COUNT_PASS(QG_PASS_STATEMENT_READ);
    if (lone_inert_statement(sql, len)) {
        fx->nonempty = true;
        return len;
    }
    const qg_encoding *enc = qg_encoding_find(QG_DIALECT_MYSQL, st->charset);
    if (!enc) /* the checker reports the unknown charset; split byte-wise */
        enc = qg_encoding_find(QG_DIALECT_MYSQL, "latin1");
    qg_context ctx;
    qg_context_init(&ctx, QG_DIALECT_MYSQL, enc, st->flags);
    cursor c;
    cursor_init(&c, &ctx, server, sql, len);
    item it;
    cursor_next(&c, &it);
    fx->nonempty = it.kind != IT_END;
    if (item_word(&c, &it, "BEGIN")) {
        cursor_next(&c, &it); /* BEGIN [WORK] starts a transaction; BEGIN NOT ATOMIC a block */
        fx->unknown = it.kind != IT_END && !item_word(&c, &it, "WORK");
    } else if (item_word(&c, &it, "SET")) {
        cursor_next(&c, &it);
        if (item_word(&c, &it, "STATEMENT")) {
            size_t end = read_set_statement(st, &c, &it, fx, depth);
            if (end)
                return end;
            fx->unknown = true;
        } else {
            read_set_list(&c, it, st, fx);
        }
    } else if (item_word(&c, &it, "EXECUTE")) {
        fx->runs_other = true;
        cursor_next(&c, &it);
        const char *text;
        size_t text_len;
        if (item_word(&c, &it, "IMMEDIATE")) {
            cursor_next(&c, &it);
            if (literal_text(&c, &it, &text, &text_len) && depth < NESTED_MAX)
                read_nested(st, &c, text, text_len, fx, depth);
            else
                fx->unknown = true;
        } else {
            fx->executes = statement_name(&c, &it, fx);
            fx->unknown = true; /* the prepared text is the caller's to know */
        }
    } else if (item_word(&c, &it, "PREPARE")) {
        read_prepare(st, &c, &it, fx, depth);
    } else if (item_word(&c, &it, "DEALLOCATE") || item_word(&c, &it, "DROP")) {
        cursor_next(&c, &it);
        if (item_word(&c, &it, "PREPARE")) {
            cursor_next(&c, &it);
            fx->deallocates = statement_name(&c, &it, fx);
        }
    } else if (fx->nonempty && !inert_statement(&c, &it)) {
        /* a CALL leaves the state as it was before; compound statements, … */
        fx->runs_other = item_word(&c, &it, "CALL");
        fx->unknown = !fx->runs_other;
    } else if (!memchr(sql + c.pos, ';', len - c.pos))
        return len; /* the one statement changes nothing: no need to read on */
    while (it.kind != IT_END) /* the rest of the statement */
        cursor_next(&c, &it);
    fx->server_decides |= c.saw_gated;
    /* a name the shim does not know is for the server to resolve */
    if (fx->change.charset_set && !qg_encoding_find(QG_DIALECT_MYSQL, st->charset))
        fx->change.charset_unknown = true;
    /* whether this server ran it is for the server to say */
    if (c.saw_uncertain && (fx->changed || fx->unknown || fx->change.charset_unknown ||
                            fx->change.flags_unknown || fx->prepares || fx->executes))
        fx->unknown = true;
    if (fx->unknown) {
        fx->change.charset_unknown = fx->change.flags_unknown = true;
        fx->change.flags_in_status = false; /* not (only) a SET's own value */
    }
    fx->unknown = fx->change.charset_unknown || fx->change.flags_unknown;
    if (fx->change.charset_set)
        memcpy(fx->change.charset, st->charset, sizeof fx->change.charset);
    if (fx->change.flags_set)
        fx->change.flags = st->flags;
    return c.end;
}

bool qg_my_stmt_name_is(const char *a, size_t a_len, const char *b, size_t b_len)
{
    if (a_len >= 2 && a[0] == '`')
        a++, a_len -= 2;
    if (b_len >= 2 && b[0] == '`')
        b++, b_len -= 2;
    return a_len == b_len && qg_ascii_ncasecmp(a, b, a_len) == 0;
}

size_t qg_my_alike_prefix(const char *sql, size_t len)
{
    QG_COUNT_PASS(QG_PASS_TEXT_SCAN);
    size_t i = 0;
    while (i < len && (unsigned char)sql[i] < 0x80 && sql[i] != '\\')
        i++;
    return i;
}

bool qg_my_reads_alike(const char *sql, size_t len)
{
    return qg_my_alike_prefix(sql, len) == len;
}

bool qg_my_names_system_variable(const char *sql, size_t len)
{
    QG_COUNT_PASS(QG_PASS_TEXT_SCAN);
    /* '@' is rare in SQL: its search costs less than memmem's set-up */
    const char *end = sql + len;
    for (const char *at = sql; (at = memchr(at, '@', (size_t)(end - at))) != NULL; at++)
        if (at + 1 < end && at[1] == '@')
            return true;
    return false;
}

bool qg_my_names_tracking(const char *sql, size_t len)
{
    QG_COUNT_PASS(QG_PASS_TEXT_SCAN);
    static const char word[] = "session_track";
    const size_t n = sizeof word - 1, before = sizeof "session" - 1;
    for (const char *p = sql; (p = memchr(p, '_', len - (size_t)(p - sql))) != NULL; p++) {
        size_t at = (size_t)(p - sql);
        if (at >= before && len - (at - before) >= n &&
            qg_ascii_ncasecmp(p - before, word, n) == 0)
            return true;
    }
    return false;
}
