/* MySQL / MariaDB front: every query text is checked, with the character set
 * and quoting rules the SERVER applies to the connection, before the client
 * library sends it.
 *
 * What the server uses is not what libmariadb believes: a plain
 * `SET NAMES gbk` changes the server's character_set_client behind the
 * library's back (CVE-2006-2753).  So the shim keeps its own per-connection
 * state:
 *  - at connect (and whenever the state became uncertain) it asks the server
 *    (`SELECT @@character_set_client, @@session.sql_mode`), which also covers
 *    MYSQL_SET_CHARSET_NAME, MYSQL_INIT_COMMAND and the server's init_connect;
 *  - it follows mysql_set_character_set, and the SET statements a program
 *    sends itself (SET NAMES / CHARACTER SET / character_set_client /
 *    sql_mode, also in executable comments and multi-assignment SETs),
 *    applied only when the server accepted them;
 *  - NO_BACKSLASH_ESCAPES comes from the status flags of the last OK packet
 *    (authoritative); ANSI_QUOTES, which the server does not report, is
 *    tracked from the SET statements and the refresh query.
 * A query whose text changes the state for later statements of the same
 * multi-statement text is checked in pieces, each with the state the server
 * will lex it with.
 *
 * A blocked query is never sent: mysql_query, mysql_real_query and
 * mysql_send_query return nonzero and, until the next query on that
 * connection, mysql_errno / mysql_error / mysql_sqlstate answer with our
 * error (libmariadb has no setter for them).  The connection stays usable.
 *
 * The shim never includes or links the client library: the types are opaque
 * here and the real entries are found at run time (real.h).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "ascii.h"
#include "client_libraries.h"
#include "config.h"
#include "front_wire.h"
#include "guard.h"
#include "hot.h"
#include "log.h"
#include "quoteguard.h"
#include "real.h"
#include "settings.h"

#define QG_EXPORT __attribute__((visibility("default")))

/* The client library's types and constants, as far as the shim needs them. */
typedef struct st_mysql MYSQL;
typedef struct st_mysql_res MYSQL_RES;
typedef char **MYSQL_ROW;
typedef char my_bool;
enum {
    MARIADB_CONNECTION_SERVER_STATUS = 30, /* enum mariadb_value */
    SERVER_STATUS_NO_BACKSLASH_ESCAPES = 0x0200
};
/* ER_UNKNOWN_ERROR: a generic server error number, so that no program takes
 * a blocked query for a lost connection (2006) or a deadlock (1213) and
 * retries it. */
#define BLOCK_ERRNO 1105u
#define BLOCK_SQLSTATE "42000"

QG_REAL_FN(int, mysql_query, (MYSQL *, const char *), qg_mysql_sonames)
QG_REAL_FN(int, mysql_real_query, (MYSQL *, const char *, unsigned long), qg_mysql_sonames)
QG_REAL_FN(int, mysql_send_query, (MYSQL *, const char *, unsigned long), qg_mysql_sonames)
QG_REAL_FN(my_bool, mysql_read_query_result, (MYSQL *), qg_mysql_sonames)
QG_REAL_FN(MYSQL *, mysql_real_connect,
           (MYSQL *, const char *, const char *, const char *, const char *, unsigned int,
            const char *, unsigned long),
           qg_mysql_sonames)
QG_REAL_FN(int, mysql_set_character_set, (MYSQL *, const char *), qg_mysql_sonames)
QG_REAL_FN(my_bool, mysql_change_user, (MYSQL *, const char *, const char *, const char *),
           qg_mysql_sonames)
QG_REAL_FN(int, mysql_reset_connection, (MYSQL *), qg_mysql_sonames)
QG_REAL_FN(void, mysql_close, (MYSQL *), qg_mysql_sonames)
QG_REAL_FN(unsigned int, mysql_errno, (MYSQL *), qg_mysql_sonames)
QG_REAL_FN(const char *, mysql_error, (MYSQL *), qg_mysql_sonames)
QG_REAL_FN(const char *, mysql_sqlstate, (MYSQL *), qg_mysql_sonames)
QG_REAL_FN(unsigned long, mysql_escape_string, (char *, const char *, unsigned long),
           qg_mysql_sonames)
QG_REAL_FN(const char *, mysql_character_set_name, (MYSQL *), qg_mysql_sonames)
QG_REAL_FN(unsigned long, mysql_thread_id, (MYSQL *), qg_mysql_sonames)
QG_REAL_FN(my_bool, mariadb_get_infov, (MYSQL *, int, void *, ...), qg_mysql_sonames)
QG_REAL_FN(MYSQL_RES *, mysql_store_result, (MYSQL *), qg_mysql_sonames)
QG_REAL_FN(MYSQL_ROW, mysql_fetch_row, (MYSQL_RES *), qg_mysql_sonames)
QG_REAL_FN(void, mysql_free_result, (MYSQL_RES *), qg_mysql_sonames)
QG_REAL_FN(int, mysql_get_socket, (MYSQL *), qg_mysql_sonames)

QG_COLD static void report_missing(const char *name)
{
    qg_log_write_event(qg_settings_get(), "error", "missing_symbol", name);
}

QG_HOT static bool tracking_enabled(void)
{
    const qg_settings *s = qg_settings_get();
    return s->mode != QG_MODE_OFF && s->active;
}

/* ------------------------------------------------------------------- state */

#define CHARSET_NAME_MAX 64

/* How the server lexes the connection's queries. */
typedef struct session_state {
    char charset[CHARSET_NAME_MAX]; /* character_set_client, as the server names it */
    unsigned flags;                 /* QG_NO_BACKSLASH_ESCAPES | QG_ANSI_QUOTES */
} session_state;

typedef struct conn_entry {
    MYSQL *mysql;
    /* Written under the table's write lock (mysql_escape_string reads them
     * from any thread); read without it by the thread using the connection. */
    session_state state;
    /* The rest belongs to the thread that uses the connection. */
    bool stale;                /* ask the server before the next query */
    unsigned long thread_id;   /* server thread; a change means a reconnect */
    bool effects_pending;      /* a sent query's SET effects await its result */
    session_state pending_state;
    bool pending_stale;
    bool blocked;              /* the error readers answer with block_* */
    bool blocked_send;         /* mysql_read_query_result must fail once */
    char block_sqlstate[6];
    char block_message[sizeof(((qg_decision *)0)->message)];
    bool escape_upgrade_logged;
} conn_entry;

/* Open addressing with linear probing, keyed by the MYSQL pointer.  Slots
 * hold pointers, so an entry stays put while the table grows; entries are
 * only allocated at connect and freed at mysql_close. */
#define TOMBSTONE ((conn_entry *)1)

static pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;
static conn_entry **table_slots;
static size_t table_capacity; /* a power of two, or 0 */
static size_t table_filled;   /* live entries and tombstones */
static size_t table_live;
/* Connections with a pending block: zero means the error readers need no lock. */
static unsigned long pending_blocks;
/* The connection last connected or queried, for mysql_escape_string. */
static conn_entry *last_used;

/* A fork while another thread holds the lock must not leave it held in the
 * child, whose first connect would wait for it forever.  The child makes it
 * anew: an rwlock knows its writer by thread id, which the child's thread
 * no longer has, so unlocking it there would break it. */
static void lock_table(void)
{
    pthread_rwlock_wrlock(&table_lock);
}

static void unlock_table(void)
{
    pthread_rwlock_unlock(&table_lock);
}

static void renew_table_lock(void)
{
    pthread_rwlock_init(&table_lock, NULL);
}

__attribute__((constructor)) static void keep_table_across_fork(void)
{
    pthread_atfork(lock_table, unlock_table, renew_table_lock);
}

static size_t slot_of(const MYSQL *mysql, size_t capacity)
{
    uint64_t h = (uint64_t)(uintptr_t)mysql;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return (size_t)h & (capacity - 1);
}

/* The caller holds the lock (either kind). */
static conn_entry **table_find_slot(const MYSQL *mysql)
{
    if (!table_capacity)
        return NULL;
    for (size_t i = slot_of(mysql, table_capacity), n = 0; n < table_capacity;
         i = (i + 1) & (table_capacity - 1), n++) {
        conn_entry *e = table_slots[i];
        if (!e)
            return NULL;
        if (e != TOMBSTONE && e->mysql == mysql)
            return &table_slots[i];
    }
    return NULL;
}

QG_HOT static conn_entry *table_lookup(const MYSQL *mysql)
{
    pthread_rwlock_rdlock(&table_lock);
    conn_entry **slot = table_find_slot(mysql);
    conn_entry *e = slot ? *slot : NULL;
    pthread_rwlock_unlock(&table_lock);
    return e;
}

/* Rebuilds the table without tombstones, at least twice the live size.
 * The caller holds the write lock. */
static bool table_grow(void)
{
    size_t capacity = 16;
    while (capacity < (table_live + 1) * 4)
        capacity *= 2;
    conn_entry **slots = calloc(capacity, sizeof(conn_entry *));
    if (!slots)
        return false;
    for (size_t i = 0; i < table_capacity; i++) {
        conn_entry *e = table_slots[i];
        if (!e || e == TOMBSTONE)
            continue;
        size_t j = slot_of(e->mysql, capacity);
        while (slots[j])
            j = (j + 1) & (capacity - 1);
        slots[j] = e;
    }
    free(table_slots);
    table_slots = slots;
    table_capacity = capacity;
    table_filled = table_live;
    return true;
}

/* The entry for mysql, created when missing (at connect, or at the first
 * query on a connection made in a way the shim does not see). */
static conn_entry *table_get_or_add(MYSQL *mysql)
{
    conn_entry *e = table_lookup(mysql);
    if (e)
        return e;
    conn_entry *fresh = calloc(1, sizeof *fresh);
    if (!fresh)
        return NULL;
    fresh->mysql = mysql;
    fresh->stale = true;
    pthread_rwlock_wrlock(&table_lock);
    conn_entry **slot = table_find_slot(mysql);
    if (slot) {
        e = *slot;
    } else if ((table_filled + 1) * 4 > table_capacity * 3 && !table_grow()) {
        e = NULL;
    } else {
        size_t i = slot_of(mysql, table_capacity);
        while (table_slots[i] && table_slots[i] != TOMBSTONE)
            i = (i + 1) & (table_capacity - 1);
        if (!table_slots[i])
            table_filled++;
        table_slots[i] = fresh;
        __atomic_add_fetch(&table_live, 1, __ATOMIC_RELAXED); /* read without the lock */
        e = fresh;
        fresh = NULL;
    }
    pthread_rwlock_unlock(&table_lock);
    free(fresh);
    return e;
}

static void clear_block(conn_entry *e)
{
    if (!e->blocked)
        return;
    e->blocked = false;
    e->blocked_send = false;
    __atomic_sub_fetch(&pending_blocks, 1, __ATOMIC_RELEASE);
}

static void table_remove(MYSQL *mysql)
{
    if (!__atomic_load_n(&table_live, __ATOMIC_RELAXED))
        return;
    pthread_rwlock_wrlock(&table_lock);
    conn_entry **slot = table_find_slot(mysql);
    conn_entry *gone = slot ? *slot : NULL;
    if (gone) {
        *slot = TOMBSTONE;
        __atomic_sub_fetch(&table_live, 1, __ATOMIC_RELAXED);
        if (__atomic_load_n(&last_used, __ATOMIC_RELAXED) == gone)
            __atomic_store_n(&last_used, NULL, __ATOMIC_RELAXED);
        clear_block(gone);
    }
    pthread_rwlock_unlock(&table_lock);
    free(gone);
}

/* Replaces the shared part of the state (rare: on a change of state). */
static void publish_state(conn_entry *e, const session_state *st)
{
    pthread_rwlock_wrlock(&table_lock);
    e->state = *st;
    pthread_rwlock_unlock(&table_lock);
}

/* ------------------------------------------------------- values of SET */

static void set_charset_name(session_state *st, const char *name, size_t len)
{
    if (len >= sizeof st->charset)
        len = sizeof st->charset - 1;
    for (size_t i = 0; i < len; i++)
        st->charset[i] = (char)qg_ascii_lower((unsigned char)name[i]);
    st->charset[len] = '\0';
}

static bool word_is(const char *word, size_t len, const char *want)
{
    return strlen(want) == len && qg_ascii_ncasecmp(word, want, len) == 0;
}

/* sql_mode names that switch on ANSI_QUOTES: the mode itself and the
 * combination modes that include it. */
static bool mode_has_ansi_quotes(const char *word, size_t len)
{
    static const char *const modes[] = {"ANSI_QUOTES", "ANSI", "DB2",        "MAXDB",
                                        "MSSQL",       "ORACLE", "POSTGRESQL"};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (word_is(word, len, modes[i]))
            return true;
    return false;
}

/* The quoting flags of a comma-separated sql_mode value.  False when the
 * text is not a plain list of names (then the server must be asked). */
static bool parse_sql_mode(const char *text, size_t len, unsigned *flags)
{
    unsigned found = 0;
    size_t i = 0;
    while (i < len) {
        while (i < len && (text[i] == ',' || text[i] == ' '))
            i++;
        size_t start = i;
        while (i < len && text[i] != ',' && text[i] != ' ')
            i++;
        if (i == start)
            break;
        for (size_t k = start; k < i; k++) {
            char c = text[k];
            if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'))
                return false;
        }
        if (word_is(text + start, i - start, "NO_BACKSLASH_ESCAPES"))
            found |= QG_NO_BACKSLASH_ESCAPES;
        else if (mode_has_ansi_quotes(text + start, i - start))
            found |= QG_ANSI_QUOTES;
    }
    *flags = found;
    return true;
}

/* ------------------------------------------------ reading SET statements */

typedef enum item_kind { IT_END, IT_WORD, IT_STRING, IT_QIDENT, IT_PUNCT } item_kind;

typedef struct item {
    item_kind kind;
    size_t start, end; /* bytes of the item (quotes included for strings) */
    qg_string_form form;
} item;

/* Walks one statement as the server reads it: the checker's lexer finds
 * literals, identifiers and comments; the code between them is split into
 * words and punctuation here. */
typedef struct cursor {
    qg_lexer lx;
    const char *sql;
    size_t len;
    size_t pos;
    qg_token tok;
    bool have_tok;
    bool in_exec_comment;
    bool saw_uncertain; /* an executable comment that may not run */
    size_t end;          /* statement end, past its ';' */
    bool done;
} cursor;

static bool is_word_byte(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '$' || c == '@' || c == '.' || c >= 0x80;
}

static void cursor_init(cursor *c, const qg_context *ctx, const char *sql, size_t len)
{
    memset(c, 0, sizeof *c);
    qg_lexer_init(&c->lx, ctx, sql, len, QG_READ_SERVER, NULL);
    c->sql = sql;
    c->len = len;
    c->have_tok = qg_lexer_next(&c->lx, &c->tok);
    c->end = len;
}

/* An executable-comment marker at p: its length, and whether MariaDB surely
 * runs the body (no version, or a 5-digit one below 50700); 0 when none. */
static size_t exec_comment_marker(const char *s, size_t len, size_t p, bool *certain)
{
    size_t q = p + 2;
    if (q < len && s[q] == 'M')
        q++;
    if (q >= len || s[q] != '!')
        return 0;
    q++;
    size_t digits = 0;
    while (q + digits < len && digits < 6 && s[q + digits] >= '0' && s[q + digits] <= '9')
        digits++;
    if (digits == 5 || digits == 6) {
        *certain = s[p + 2] != 'M' && digits == 5 && strncmp(s + q, "50700", 5) < 0;
        return q + digits - p;
    }
    *certain = true;
    return q - p;
}

static void cursor_next(cursor *c, item *it)
{
    it->kind = IT_END;
    while (!c->done) {
        if (c->have_tok && c->pos >= c->tok.start) {
            qg_token t = c->tok;
            c->pos = t.end;
            c->have_tok = qg_lexer_next(&c->lx, &c->tok);
            if (t.kind == QG_TOK_COMMENT)
                continue;
            it->kind = t.kind == QG_TOK_IDENT ? IT_QIDENT : IT_STRING;
            it->start = t.start;
            it->end = t.end;
            it->form = t.form;
            return;
        }
        size_t limit = c->have_tok ? c->tok.start : c->len;
        const char *s = c->sql;
        while (c->pos < limit && (unsigned char)s[c->pos] <= ' ')
            c->pos++;
        if (c->pos >= limit) {
            if (!c->have_tok) {
                c->done = true;
                c->end = c->len;
            }
            continue;
        }
        size_t p = c->pos;
        bool certain;
        size_t marker;
        if (s[p] == ';') {
            c->done = true;
            c->end = p + 1;
        } else if (s[p] == '/' && p + 1 < limit && s[p + 1] == '*' &&
                   (marker = exec_comment_marker(s, limit, p, &certain)) != 0) {
            c->in_exec_comment = true;
            c->saw_uncertain |= !certain;
            c->pos = p + marker;
        } else if (s[p] == '*' && p + 1 < limit && s[p + 1] == '/' && c->in_exec_comment) {
            c->in_exec_comment = false;
            c->pos = p + 2;
        } else if (is_word_byte((unsigned char)s[p])) {
            size_t q = p;
            while (q < limit && is_word_byte((unsigned char)s[q]))
                q++;
            it->kind = IT_WORD;
            it->start = p;
            it->end = q;
            c->pos = q;
            return;
        } else {
            it->kind = IT_PUNCT;
            it->start = p;
            /* ':=' assigns like '=' */
            it->end = (s[p] == ':' && p + 1 < limit && s[p + 1] == '=') ? p + 2 : p + 1;
            c->pos = it->end;
            return;
        }
    }
}

static bool item_word(const cursor *c, const item *it, const char *want)
{
    return it->kind == IT_WORD && word_is(c->sql + it->start, it->end - it->start, want);
}

/* ':=' counts as '='. */
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
        if (s[0] == '@' || word_is(s, n, "DEFAULT"))
            return false;
        *text = s;
        *len = n;
        return true;
    }
    if (it->kind != IT_STRING || (it->form != QG_FORM_PLAIN && it->form != QG_FORM_DOUBLE) ||
        n < 2 || s[0] != s[n - 1])
        return false;
    for (size_t i = 1; i + 1 < n; i++)
        if (s[i] == '\\' || s[i] == s[0])
            return false;
    *text = s + 1;
    *len = n - 2;
    return true;
}

/* What one statement does to the session state. */
typedef struct statement_effect {
    bool changed;  /* charset or quoting flags differ afterwards */
    bool stale;    /* the new value is not known here: ask the server */
    bool nonempty; /* the statement has any code */
} statement_effect;

typedef enum tracked_var { VAR_OTHER, VAR_CHARSET_CLIENT, VAR_SQL_MODE } tracked_var;

static tracked_var tracked_variable(const char *name, size_t len)
{
    if (word_is(name, len, "character_set_client"))
        return VAR_CHARSET_CLIENT;
    if (word_is(name, len, "sql_mode"))
        return VAR_SQL_MODE;
    return VAR_OTHER;
}

/* Reads the value after `=` up to the next top-level ',' or the end; *it is
 * left on that ',' or the end.  Returns whether it was a single literal. */
static bool read_value(cursor *c, item *it, const char **text, size_t *len)
{
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
static void read_charset_clause(cursor *c, item *it, session_state *st, statement_effect *fx)
{
    const char *text;
    size_t len;
    cursor_next(c, it);
    if (literal_value(c, it, &text, &len)) {
        set_charset_name(st, text, len);
        fx->changed = true;
    } else {
        fx->stale = true;
    }
    cursor_next(c, it);
    if (item_word(c, it, "COLLATE")) {
        cursor_next(c, it);
        cursor_next(c, it);
    }
}

/* SET [scope] assignment {, assignment}: applies the tracked ones to *st. */
static void read_set_list(cursor *c, session_state *st, statement_effect *fx)
{
    bool sticky_global = false; /* a bare GLOBAL applies to later bare names too */
    item it;
    cursor_next(c, &it);
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
        } else if (item_word(c, &it, "CHARSET") || item_word(c, &it, "CHARACTER")) {
            if (item_word(c, &it, "CHARACTER")) {
                cursor_next(c, &it);
                if (!item_word(c, &it, "SET"))
                    return;
            }
            read_charset_clause(c, &it, st, fx);
        } else if (it.kind == IT_WORD || it.kind == IT_QIDENT) {
            const char *name = c->sql + it.start;
            size_t len = it.end - it.start;
            if (it.kind == IT_QIDENT) {
                name++;
                len = len >= 2 ? len - 2 : 0;
            } else if (len > 2 && name[0] == '@' && name[1] == '@') {
                name += 2, len -= 2;
                scope_given = true;
                global = false;
                if (len > 7 && qg_ascii_ncasecmp(name, "global.", 7) == 0)
                    global = true, name += 7, len -= 7;
                else if (len > 8 && qg_ascii_ncasecmp(name, "session.", 8) == 0)
                    name += 8, len -= 8;
                else if (len > 6 && qg_ascii_ncasecmp(name, "local.", 6) == 0)
                    name += 6, len -= 6;
            }
            tracked_var var = tracked_variable(name, len);
            cursor_next(c, &it);
            if (!item_punct(c, &it, '='))
                return; /* SET TRANSACTION, SET PASSWORD …: nothing we track */
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
                    set_charset_name(st, text, text_len);
                else if (known && parse_sql_mode(text, text_len, &flags))
                    st->flags = flags;
                else
                    known = false;
                fx->changed |= known;
                fx->stale |= !known;
            }
        } else {
            return;
        }
        if (!item_punct(c, &it, ','))
            return;
        cursor_next(c, &it);
    }
}

/* Reads the statement at the start of sql[0, len) with the state *st (which
 * it updates); returns the statement's length, its ';' included. */
static size_t read_statement(session_state *st, const char *sql, size_t len,
                             statement_effect *fx)
{
    memset(fx, 0, sizeof *fx);
    const qg_encoding *enc = qg_encoding_find(QG_DIALECT_MYSQL, st->charset);
    if (!enc) /* the checker reports the unknown charset; split byte-wise */
        enc = qg_encoding_find(QG_DIALECT_MYSQL, "latin1");
    qg_context ctx;
    qg_context_init(&ctx, QG_DIALECT_MYSQL, enc, st->flags);
    cursor c;
    cursor_init(&c, &ctx, sql, len);
    item it;
    cursor_next(&c, &it);
    fx->nonempty = it.kind != IT_END;
    if (item_word(&c, &it, "SET"))
        read_set_list(&c, st, fx);
    while (it.kind != IT_END) /* the rest of the statement */
        cursor_next(&c, &it);
    /* whether this server ran it is for the server to say */
    if (c.saw_uncertain && (fx->changed || fx->stale))
        fx->stale = true;
    return c.end;
}

/* Whether the letters "set" at i (any case) are the word SET. */
static bool set_word_at(const char *sql, size_t len, size_t i)
{
    /* a digit may precede: an executable comment's version */
    unsigned char prev = i ? (unsigned char)sql[i - 1] : ' ';
    bool before = !is_word_byte(prev) || (prev >= '0' && prev <= '9');
    bool after = i + 3 == len || !is_word_byte((unsigned char)sql[i + 3]);
    return before && after;
}

static bool letters_set_at(const char *sql, size_t i)
{
    return (sql[i] | 0x20) == 's' && (sql[i + 1] | 0x20) == 'e' && (sql[i + 2] | 0x20) == 't';
}

/* Cheap test for the word SET anywhere: most queries skip the SET reader.
 * Sixteen places at a time where SSE2 is there: this runs on every query. */
QG_HOT static bool mentions_set(const char *sql, size_t len)
{
    size_t i = 0;
#ifdef __SSE2__
    const __m128i lower = _mm_set1_epi8(0x20);
    for (; i + 18 <= len; i += 16) {
        __m128i s0 = _mm_or_si128(_mm_loadu_si128((const __m128i *)(sql + i)), lower);
        __m128i s1 = _mm_or_si128(_mm_loadu_si128((const __m128i *)(sql + i + 1)), lower);
        __m128i s2 = _mm_or_si128(_mm_loadu_si128((const __m128i *)(sql + i + 2)), lower);
        __m128i found = _mm_and_si128(_mm_and_si128(_mm_cmpeq_epi8(s0, _mm_set1_epi8('s')),
                                                    _mm_cmpeq_epi8(s1, _mm_set1_epi8('e'))),
                                      _mm_cmpeq_epi8(s2, _mm_set1_epi8('t')));
        for (unsigned hits = (unsigned)_mm_movemask_epi8(found); hits; hits &= hits - 1)
            if (set_word_at(sql, len, i + (size_t)__builtin_ctz(hits)))
                return true;
    }
#endif
    for (; i + 3 <= len; i++)
        if (letters_set_at(sql, i) && set_word_at(sql, len, i))
            return true;
    return false;
}

/* For the wire front, which cannot ask the server: what a text does to the
 * charset and quoting flags once the server ran it.  *changed tells whether
 * it does anything; false when its effect is for the server to say (an
 * expression, a multi-statement text that changes the state). */
bool qg_mysql_text_effect(char *charset, size_t cap, unsigned *flags, const char *sql,
                          size_t len, bool *changed)
{
    *changed = false;
    if (!mentions_set(sql, len))
        return true;
    session_state st;
    set_charset_name(&st, charset, strlen(charset));
    st.flags = *flags;
    bool stale = false;
    unsigned statements = 0;
    for (size_t pos = 0; pos < len;) {
        statement_effect fx;
        size_t step = read_statement(&st, sql + pos, len - pos, &fx);
        if (step == 0)
            break;
        pos += step;
        statements += fx.nonempty;
        *changed |= fx.changed;
        stale |= fx.stale;
    }
    if (stale || (statements > 1 && *changed))
        return false;
    snprintf(charset, cap, "%s", st.charset);
    *flags = st.flags;
    return true;
}

/* ------------------------------------------------- asking the server */

static unsigned server_status_flags(MYSQL *mysql, bool *known)
{
    *known = false;
    mariadb_get_infov_fn get_info = real_mariadb_get_infov();
    unsigned status = 0;
    if (!get_info || get_info(mysql, MARIADB_CONNECTION_SERVER_STATUS, &status) != 0)
        return 0;
    *known = true;
    return status & SERVER_STATUS_NO_BACKSLASH_ESCAPES ? QG_NO_BACKSLASH_ESCAPES : 0;
}

/* Logs when the library escapes with another charset than the server
 * lexes with: mysql_real_escape_string is then unsafe (CVE-2006-2753). */
static void note_charset_mismatch(MYSQL *mysql, const session_state *st)
{
    const qg_settings *s = qg_settings_get();
    mysql_character_set_name_fn lib_charset = real_mysql_character_set_name();
    if (s->verbosity < 2 || !lib_charset)
        return;
    const char *lib = lib_charset(mysql);
    if (!lib)
        return;
    const qg_encoding *a = qg_encoding_find(QG_DIALECT_MYSQL, lib);
    const qg_encoding *b = qg_encoding_find(QG_DIALECT_MYSQL, st->charset);
    if (a && b ? a == b : qg_ascii_casecmp(lib, st->charset) == 0)
        return;
    char detail[160];
    snprintf(detail, sizeof detail, "server lexes as %s, client library escapes as %s",
             st->charset, lib);
    qg_log_write_event(s, "debug", "mysql_charset_mismatch", detail);
}

/* Reads character_set_client and sql_mode from the server.  Only called
 * when the connection is idle: right after connect, or when the program
 * starts its next query. */
static bool ask_server(MYSQL *mysql, session_state *st)
{
    static const char query[] = "SELECT @@character_set_client, @@session.sql_mode";
    mysql_real_query_fn run = real_mysql_real_query();
    mysql_store_result_fn store = real_mysql_store_result();
    mysql_fetch_row_fn fetch = real_mysql_fetch_row();
    mysql_free_result_fn release = real_mysql_free_result();
    if (!run || !store || !fetch || !release)
        return false;
    /* the library's inner calls for this text are not queries to check */
    bool entered = qg_guard_enter(mysql, query, sizeof query - 1);
    int rc = run(mysql, query, sizeof query - 1);
    if (entered)
        qg_guard_leave();
    if (rc != 0)
        return false;
    MYSQL_RES *res = store(mysql);
    if (!res)
        return false;
    MYSQL_ROW row = fetch(res);
    bool ok = row && row[0] && row[1];
    unsigned flags = 0;
    if (ok) {
        set_charset_name(st, row[0], strlen(row[0]));
        ok = parse_sql_mode(row[1], strlen(row[1]), &flags);
        st->flags = flags;
    }
    release(res);
    return ok;
}

/* Brings the entry up to date with the server. */
QG_COLD static void refresh(conn_entry *e)
{
    session_state st = e->state;
    if (!ask_server(e->mysql, &st)) {
        /* keep what is known; the library's charset is the last resort */
        mysql_character_set_name_fn lib_charset = real_mysql_character_set_name();
        const char *lib = lib_charset ? lib_charset(e->mysql) : NULL;
        if (!st.charset[0] && lib)
            set_charset_name(&st, lib, strlen(lib));
        qg_log_write_event(qg_settings_get(), "info", "mysql_state_unknown",
                           "could not read character_set_client and sql_mode");
    }
    e->stale = false;
    mysql_thread_id_fn thread_id = real_mysql_thread_id();
    e->thread_id = thread_id ? thread_id(e->mysql) : 0;
    publish_state(e, &st);
    note_charset_mismatch(e->mysql, &st);
}

/* The entry to use for a query on mysql, up to date; NULL without memory. */
QG_HOT static conn_entry *entry_for_query(MYSQL *mysql)
{
    conn_entry *e = table_get_or_add(mysql);
    if (!e)
        return NULL;
    clear_block(e);
    if (e->effects_pending) /* a sent query's result was never read */
        e->effects_pending = false, e->stale = true;
    mysql_thread_id_fn thread_id = real_mysql_thread_id();
    if (thread_id && thread_id(mysql) != e->thread_id)
        e->stale = true; /* reconnected: the session starts afresh */
    if (e->stale)
        refresh(e);
    __atomic_store_n(&last_used, e, __ATOMIC_RELAXED);
    return e;
}

/* ------------------------------------------------------------- queries */

/* await_read: mysql_send_query was blocked, mysql_read_query_result must fail. */
QG_COLD static void block(conn_entry *e, const qg_decision *d, bool await_read)
{
    if (!e)
        return;
    if (!e->blocked)
        __atomic_add_fetch(&pending_blocks, 1, __ATOMIC_RELEASE);
    e->blocked = true;
    e->blocked_send = await_read;
    snprintf(e->block_sqlstate, sizeof e->block_sqlstate, "%s",
             d->sqlstate && strlen(d->sqlstate) == 5 ? d->sqlstate : BLOCK_SQLSTATE);
    snprintf(e->block_message, sizeof e->block_message, "%s", d->message);
}

/* A block the shim could not record in the connection table (it ran out of
 * memory for the entry): this thread's error readers answer with it until
 * its next query.  initial-exec: reading it never allocates. */
#define TLS_STATIC __attribute__((tls_model("initial-exec")))
static __thread MYSQL *orphan_mysql TLS_STATIC;
static __thread bool orphan_await_read TLS_STATIC;
static __thread char orphan_sqlstate[6] TLS_STATIC;
static __thread char orphan_message[512] TLS_STATIC;

QG_COLD static void block_orphan(MYSQL *mysql, const char *sqlstate, const char *message,
                                 bool await_read)
{
    orphan_mysql = mysql;
    orphan_await_read = await_read;
    snprintf(orphan_sqlstate, sizeof orphan_sqlstate, "%s", sqlstate);
    snprintf(orphan_message, sizeof orphan_message, "%s", message);
}

QG_HOT static bool check_piece(MYSQL *mysql, const char *api, const session_state *st,
                               const char *sql, size_t len, const void *caller,
                               qg_decision *d)
{
    qg_query q = {
        .dialect = QG_DIALECT_MYSQL,
        .encoding_name = st->charset,
        .flags = st->flags,
        .conn = mysql,
        .api = api,
        .sql = sql,
        .len = len,
        .caller = caller,
    };
    return qg_guard_query(&q, d);
}

/* A text that may change the state (it mentions SET): checked statement by
 * statement from `st` on, cut where a statement changes the state; *after
 * is the state once all of it ran.  True = send it. */
QG_COLD static bool pieces_allowed(conn_entry *e, const char *api, const char *sql, size_t len,
                                   const void *caller, qg_decision *d, session_state st,
                                   session_state *after, bool *changed, bool *stale)
{
    session_state piece_state = st;
    size_t piece_start = 0, pos = 0;
    unsigned statements = 0;
    while (pos < len) {
        statement_effect fx;
        pos += read_statement(&st, sql + pos, len - pos, &fx);
        statements += fx.nonempty;
        *changed |= fx.changed;
        *stale |= fx.stale;
        if (fx.changed && pos < len) {
            if (!check_piece(e->mysql, api, &piece_state, sql + piece_start, pos - piece_start,
                             caller, d))
                return false;
            piece_start = pos;
            piece_state = st;
        }
    }
    /* Later statements of a multi-statement text report success or failure
     * only through mysql_next_result: what they did must be read back. */
    if (statements > 1 && (*changed || *stale))
        *stale = true;
    *after = st;
    return check_piece(e->mysql, api, &piece_state, sql + piece_start, len - piece_start, caller,
                       d);
}

/* Checks the text with the connection's state as of now; *after is the
 * state once all of it ran.  True = send it. */
QG_HOT static bool query_allowed(conn_entry *e, const char *api, const char *sql,
                                 size_t len, const void *caller, qg_decision *d,
                                 session_state *after, bool *changed, bool *stale)
{
    session_state st = e->state;
    bool nbe_known;
    unsigned nbe = server_status_flags(e->mysql, &nbe_known);
    if (nbe_known)
        st.flags = (st.flags & ~QG_NO_BACKSLASH_ESCAPES) | nbe;
    *changed = *stale = false;
    if (mentions_set(sql, len))
        return pieces_allowed(e, api, sql, len, caller, d, st, after, changed, stale);
    *after = st;
    return check_piece(e->mysql, api, &st, sql, len, caller, d);
}

/* Takes on what a query that the server accepted did to the session. */
QG_COLD static void apply_effects(conn_entry *e, const session_state *after, bool changed,
                                  bool stale)
{
    if (stale) {
        e->stale = true;
    } else if (changed) {
        publish_state(e, after);
        note_charset_mismatch(e->mysql, after);
    }
}

/* This front checks the connection's queries: the wire front must not;
 * and the log never writes into its socket. */
static void hand_over_from_wire(MYSQL *mysql)
{
    mysql_get_socket_fn socket_of = real_mysql_get_socket();
    if (socket_of) {
        int fd = socket_of(mysql);
        qg_wire_library_guarded(fd);
        qg_log_note_db_socket(fd);
    }
}

typedef enum query_api { API_QUERY, API_REAL_QUERY, API_SEND_QUERY } query_api;

static const char *const api_names[] = {"mysql_query", "mysql_real_query", "mysql_send_query"};

/* The real entry for api: mysql_query takes a C string, the others a length. */
typedef struct real_sender {
    mysql_query_fn plain;
    mysql_real_query_fn sized;
} real_sender;

static real_sender real_sender_for(query_api api)
{
    real_sender r = {NULL, NULL};
    if (api == API_QUERY)
        r.plain = real_mysql_query();
    else if (api == API_REAL_QUERY)
        r.sized = real_mysql_real_query();
    else
        r.sized = real_mysql_send_query();
    return r;
}

QG_HOT static int send_real(real_sender r, MYSQL *mysql, const char *sql, unsigned long len)
{
    return r.plain ? r.plain(mysql, sql) : r.sized(mysql, sql, len);
}

/* Out of memory for the connection's entry: the state comes from the server
 * for this one query.  When even that fails the shim cannot decide: enforce
 * blocks, audit passes; both say so.  Called inside the re-entrancy guard. */
QG_COLD static int guarded_query_without_entry(real_sender real, MYSQL *mysql, const char *sql,
                                               unsigned long len, query_api api,
                                               const void *caller)
{
    const qg_settings *s = qg_settings_get();
    qg_log_write_event(s, "error", "out_of_memory", api_names[api]);
    session_state st = {0};
    qg_decision d;
    bool allowed;
    if (ask_server(mysql, &st)) {
        allowed = check_piece(mysql, api_names[api], &st, sql, len, caller, &d);
    } else {
        allowed = s->mode == QG_MODE_AUDIT;
        d.sqlstate = BLOCK_SQLSTATE;
        snprintf(d.message, sizeof d.message, "%s",
                 "quoteguard: blocked: out of memory, and the connection's character set "
                 "is unknown; the query was not checked");
    }
    qg_guard_leave();
    if (allowed)
        return send_real(real, mysql, sql, len);
    block_orphan(mysql, d.sqlstate && strlen(d.sqlstate) == 5 ? d.sqlstate : BLOCK_SQLSTATE,
                 d.message, api == API_SEND_QUERY);
    return 1;
}

QG_HOT static int guarded_query(MYSQL *mysql, const char *sql, unsigned long len,
                                query_api api, const void *caller)
{
    real_sender real = real_sender_for(api);
    if (!real.plain && !real.sized) {
        report_missing(api_names[api]);
        return 1;
    }
    if (!tracking_enabled() || !sql || !qg_guard_enter(mysql, sql, len))
        return send_real(real, mysql, sql, len);
    hand_over_from_wire(mysql);
    orphan_mysql = NULL;
    conn_entry *e = entry_for_query(mysql);
    if (!e)
        return guarded_query_without_entry(real, mysql, sql, len, api, caller);
    qg_decision d;
    session_state after;
    bool changed, stale;
    if (!query_allowed(e, api_names[api], sql, len, caller, &d, &after, &changed, &stale)) {
        block(e, &d, api == API_SEND_QUERY);
        qg_guard_leave();
        return 1;
    }
    int rc = send_real(real, mysql, sql, len);
    if (rc == 0 && (changed || stale)) {
        if (api == API_SEND_QUERY) {
            /* success of the statement is known at mysql_read_query_result */
            e->effects_pending = true;
            e->pending_state = after;
            e->pending_stale = stale;
        } else {
            apply_effects(e, &after, changed, stale);
        }
    }
    qg_guard_leave();
    return rc;
}

QG_HOT QG_EXPORT int mysql_query(MYSQL *mysql, const char *q)
{
    return guarded_query(mysql, q, q ? strlen(q) : 0, API_QUERY, __builtin_return_address(0));
}

QG_HOT QG_EXPORT int mysql_real_query(MYSQL *mysql, const char *q, unsigned long length)
{
    return guarded_query(mysql, q, length, API_REAL_QUERY, __builtin_return_address(0));
}

QG_HOT QG_EXPORT int mysql_send_query(MYSQL *mysql, const char *q, unsigned long length)
{
    return guarded_query(mysql, q, length, API_SEND_QUERY, __builtin_return_address(0));
}

QG_HOT QG_EXPORT my_bool mysql_read_query_result(MYSQL *mysql)
{
    mysql_read_query_result_fn fn = real_mysql_read_query_result();
    if (!fn) {
        report_missing("mysql_read_query_result");
        return 1;
    }
    if (orphan_mysql == mysql && orphan_await_read) {
        orphan_await_read = false;
        return 1; /* nothing was sent */
    }
    if (!__atomic_load_n(&table_live, __ATOMIC_RELAXED) || !qg_guard_enter(mysql, NULL, 0))
        return fn(mysql);
    conn_entry *e = table_lookup(mysql);
    if (e && e->blocked_send) {
        /* nothing was sent: reading would wait for an answer forever */
        e->blocked_send = false;
        qg_guard_leave();
        return 1;
    }
    my_bool rc = fn(mysql);
    if (e && e->effects_pending) {
        e->effects_pending = false;
        if (rc == 0)
            apply_effects(e, &e->pending_state, true, e->pending_stale);
    }
    qg_guard_leave();
    return rc;
}

/* ------------------------------------------------------------ sessions */

QG_EXPORT MYSQL *mysql_real_connect(MYSQL *mysql, const char *host, const char *user,
                                    const char *passwd, const char *db, unsigned int port,
                                    const char *unix_socket, unsigned long clientflag)
{
    mysql_real_connect_fn fn = real_mysql_real_connect();
    if (!fn) {
        report_missing("mysql_real_connect");
        return NULL;
    }
    if (!tracking_enabled() || !qg_guard_enter(mysql, NULL, 0))
        return fn(mysql, host, user, passwd, db, port, unix_socket, clientflag);
    MYSQL *connected = fn(mysql, host, user, passwd, db, port, unix_socket, clientflag);
    if (connected)
        hand_over_from_wire(connected);
    if (connected) {
        conn_entry *e = table_get_or_add(connected);
        if (e) {
            clear_block(e);
            e->effects_pending = false;
            refresh(e);
            __atomic_store_n(&last_used, e, __ATOMIC_RELAXED);
        }
    }
    qg_guard_leave();
    return connected;
}

QG_EXPORT int mysql_set_character_set(MYSQL *mysql, const char *csname)
{
    mysql_set_character_set_fn fn = real_mysql_set_character_set();
    if (!fn) {
        report_missing("mysql_set_character_set");
        return 1;
    }
    if (!tracking_enabled() || !qg_guard_enter(mysql, NULL, 0))
        return fn(mysql, csname);
    int rc = fn(mysql, csname);
    conn_entry *e = table_lookup(mysql);
    if (e) {
        clear_block(e);
        mysql_character_set_name_fn lib_charset = real_mysql_character_set_name();
        const char *now = lib_charset ? lib_charset(mysql) : NULL;
        if (rc == 0 && now) {
            /* the library sent SET NAMES with the name it now reports */
            session_state st = e->state;
            set_charset_name(&st, now, strlen(now));
            publish_state(e, &st);
        }
    }
    qg_guard_leave();
    return rc;
}

/* Both reset the session: charset and sql_mode are read again. */
static void forget_session(MYSQL *mysql)
{
    conn_entry *e = table_lookup(mysql);
    if (e) {
        clear_block(e);
        e->stale = true;
    }
}

QG_EXPORT my_bool mysql_change_user(MYSQL *mysql, const char *user, const char *passwd,
                                    const char *db)
{
    mysql_change_user_fn fn = real_mysql_change_user();
    if (!fn) {
        report_missing("mysql_change_user");
        return 1;
    }
    my_bool rc = fn(mysql, user, passwd, db);
    forget_session(mysql);
    return rc;
}

QG_EXPORT int mysql_reset_connection(MYSQL *mysql)
{
    mysql_reset_connection_fn fn = real_mysql_reset_connection();
    if (!fn) {
        report_missing("mysql_reset_connection");
        return 1;
    }
    int rc = fn(mysql);
    forget_session(mysql);
    return rc;
}

QG_EXPORT void mysql_close(MYSQL *mysql)
{
    mysql_close_fn fn = real_mysql_close();
    if (mysql)
        table_remove(mysql);
    if (fn)
        fn(mysql);
    else
        report_missing("mysql_close");
}

/* ------------------------------------------------------- error readers */

/* The entry with a pending block for mysql, or NULL (fast when none). */
static const conn_entry *blocked_entry(MYSQL *mysql)
{
    if (!__atomic_load_n(&pending_blocks, __ATOMIC_ACQUIRE))
        return NULL;
    const conn_entry *e = table_lookup(mysql);
    return e && e->blocked ? e : NULL;
}

QG_EXPORT unsigned int mysql_errno(MYSQL *mysql)
{
    if (orphan_mysql == mysql || blocked_entry(mysql))
        return BLOCK_ERRNO;
    mysql_errno_fn fn = real_mysql_errno();
    return fn ? fn(mysql) : BLOCK_ERRNO;
}

QG_EXPORT const char *mysql_error(MYSQL *mysql)
{
    if (orphan_mysql == mysql)
        return orphan_message;
    const conn_entry *e = blocked_entry(mysql);
    if (e)
        return e->block_message;
    mysql_error_fn fn = real_mysql_error();
    return fn ? fn(mysql) : "quoteguard: mysql_error not found in the client library";
}

QG_EXPORT const char *mysql_sqlstate(MYSQL *mysql)
{
    if (orphan_mysql == mysql)
        return orphan_sqlstate;
    const conn_entry *e = blocked_entry(mysql);
    if (e)
        return e->block_sqlstate;
    mysql_sqlstate_fn fn = real_mysql_sqlstate();
    return fn ? fn(mysql) : "HY000";
}

/* ---------------------------------------------------- mysql_escape_string */

/* escape_string_for_mysql for the given charset: whole valid characters are
 * copied, an ill-formed byte >= 0x80 is escaped itself (so that it cannot
 * swallow the backslash of the next escape), and with quotes_only (the
 * server has NO_BACKSLASH_ESCAPES) only ' is doubled. */
static size_t escape_for_charset(const qg_encoding *enc, bool quotes_only, char *to,
                                 const unsigned char *from, size_t len)
{
    char *o = to;
    size_t i = 0;
    while (i < len) {
        unsigned char b = from[i];
        if (b >= 0x80) {
            size_t n = qg_encoding_char_len(enc, from + i, len - i);
            if (n >= 1) {
                memcpy(o, from + i, n);
                o += n;
                i += n;
                continue;
            }
            if (!quotes_only)
                *o++ = '\\';
            *o++ = (char)b;
            i++;
            continue;
        }
        i++;
        if (quotes_only) {
            if (b == '\'')
                *o++ = '\'';
            *o++ = (char)b;
            continue;
        }
        char esc = 0;
        switch (b) {
        case 0: esc = '0'; break;
        case '\n': esc = 'n'; break;
        case '\r': esc = 'r'; break;
        case 0x1a: esc = 'Z'; break;
        case '\\': case '\'': case '"': esc = (char)b; break;
        default: break;
        }
        if (esc) {
            *o++ = '\\';
            *o++ = esc;
        } else {
            *o++ = (char)b;
        }
    }
    *o = '\0';
    return (size_t)(o - to);
}

/* mysql_escape_string has no connection and escapes as latin1 with
 * backslashes.  The shim escapes instead for the connection the program
 * most recently connected or queried on (while it is open) — with one
 * connection open, that one — when latin1 rules would be unsafe there:
 * a charset whose trail bytes can be ASCII, or NO_BACKSLASH_ESCAPES.
 * Without any open connection the real function runs. */
QG_EXPORT unsigned long mysql_escape_string(char *to, const char *from, unsigned long length)
{
    mysql_escape_string_fn fn = real_mysql_escape_string();
    if (!tracking_enabled() || !to || !from) {
        if (fn)
            return fn(to, from, length);
        report_missing("mysql_escape_string");
        return (unsigned long)-1;
    }
    /* decided under the lock: the entry may be closed by another thread */
    char charset[CHARSET_NAME_MAX] = "";
    bool quotes_only = false, first_upgrade = false;
    const qg_encoding *enc = NULL;
    pthread_rwlock_rdlock(&table_lock);
    conn_entry *e = __atomic_load_n(&last_used, __ATOMIC_RELAXED);
    if (e) {
        memcpy(charset, e->state.charset, sizeof charset);
        quotes_only = e->state.flags & QG_NO_BACKSLASH_ESCAPES;
        enc = qg_encoding_find(QG_DIALECT_MYSQL, charset);
        if (enc && !quotes_only && !qg_encoding_has_ascii_trail(enc))
            enc = NULL; /* latin1 rules are right for this charset */
        if (enc)
            first_upgrade =
                !__atomic_exchange_n(&e->escape_upgrade_logged, true, __ATOMIC_RELAXED);
    }
    pthread_rwlock_unlock(&table_lock);
    if (!enc) {
        if (fn)
            return fn(to, from, length);
        report_missing("mysql_escape_string");
        return (unsigned long)-1;
    }
    if (first_upgrade) {
        char detail[160];
        snprintf(detail, sizeof detail, "escaping for charset %s%s of the last used connection",
                 qg_encoding_name(enc), quotes_only ? " with NO_BACKSLASH_ESCAPES" : "");
        qg_log_write_event(qg_settings_get(), "info", "mysql_escape_string_upgraded", detail);
    }
    return escape_for_charset(enc, quotes_only, to, (const unsigned char *)from, length);
}
