/* The statement plan of one MySQL text: its statements read once, in one
 * walk, for everything the shim needs of them besides the checker's
 * reading: where each statement that does something to the session state
 * ends, the state the statements after it are lexed with, its effect
 * (mysql_statements.h), and what the whole text may do unreported.  The
 * session's check, what it may change unreported, the texts queued before
 * their answers and the wire front's effects all read the plan instead of
 * the text.  Pure logic. */
#ifndef QG_MYSQL_PLAN_H
#define QG_MYSQL_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "mysql_state.h"
#include "mysql_statements.h"

/* A statement of note: one that changes the state or may, or prepares,
 * runs or drops a prepared statement. */
typedef struct qg_my_planned {
    size_t start, end;  /* its bytes, its ';' included */
    qg_my_state after;  /* what the statements after it are lexed with */
    qg_my_effect effect;
    unsigned statements_through; /* statements with code up to it, itself included */
    bool runs_other_through;     /* one of them runs others (CALL, EXECUTE) */
} qg_my_planned;

/* The statements of note kept in the plan; a walk past them reads the
 * rest of the text again. */
#define QG_MY_PLAN_NOTED 8

typedef struct qg_my_plan {
    const char *sql;
    size_t len;
    bool read;                       /* the fields below hold the reading */
    qg_my_state start;               /* the state it was read from */
    const qg_my_server_kind *server; /* the server it was read for; NULL: not known */
    unsigned statements;             /* statements with code */
    /* the statements were read (a text of one statement is read from its
     * first word where that word changes nothing, else only when a walk
     * asks for what it does): the fields below and `steps` hold it */
    bool walked;
    bool runs_other;                 /* a statement runs others (CALL, EXECUTE) */
    bool server_decides;             /* a statement reads otherwise for another server */
    bool leading_call;               /* the first word is CALL or EXECUTE */
    bool lone_first_word;            /* no ';' after the first word */
    bool inert;                      /* and that word changes nothing (SELECT, UPDATE, ...) */
    /* searched once each, when first asked (qg_my_plan_names_…) */
    signed char names_system_variable, names_tracking; /* -1: not searched yet */
    signed char reads_alike;         /* -1: not scanned yet */
    signed char semicolon;           /* holds a ';': -1 not searched yet */
    unsigned noted;                  /* statements of note in `steps` */
    bool more_noted;                 /* and more after them */
    qg_my_planned steps[QG_MY_PLAN_NOTED];
} qg_my_plan;

/* A plan of sql[0, len), not read yet.  In line: each query makes one. */
static inline void qg_my_plan_init(qg_my_plan *p, const char *sql, size_t len)
{
    p->sql = sql;
    p->len = len;
    p->read = p->walked = false;
    p->server = NULL;
    p->names_system_variable = p->names_tracking = p->reads_alike = p->semicolon = -1;
}

/* Whether sql[0, len) holds a ';'.  A text of 16 to 64 bytes (most
 * queries) is compared sixteen bytes at a time in line, the last sixteen
 * over bytes compared already; others go to memchr. */
static inline bool qg_my_holds_semicolon(const char *sql, size_t len)
{
#ifdef __SSE2__
    if (len >= 16 && len <= 64) {
        const __m128i semicolon = _mm_set1_epi8(';');
        __m128i found =
            _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(sql + len - 16)), semicolon);
        for (size_t at = 0; at + 16 < len; at += 16)
            found = _mm_or_si128(
                found, _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(sql + at)), semicolon));
        return _mm_movemask_epi8(found) != 0;
    }
#endif
    return memchr(sql, ';', len) != NULL;
}

/* Whether the text is one statement, read alike from every state: it holds
 * no ';', the only byte that ends a statement.  Searched at most once, read
 * or not; a reading takes the answer.  In line: each query asks. */
static inline bool qg_my_plan_single(qg_my_plan *p)
{
    if (p->semicolon < 0)
        p->semicolon = qg_my_holds_semicolon(p->sql, p->len) ? 1 : 0;
    return !p->semicolon;
}

/* A plan of sql[0, len), not read yet, where the text is known to hold no
 * ';' (qg_my_holds_semicolon). */
static inline void qg_my_plan_init_single(qg_my_plan *p, const char *sql, size_t len)
{
    qg_my_plan_init(p, sql, len);
    p->semicolon = 0;
}

/* Whether a text of one statement (no ';') starts with a word that changes
 * nothing, as its plan's reading from any state finds (qg_my_plan_inert):
 * its first word alone, in line where a short word starts the text. */
static inline bool qg_my_single_inert(const char *sql, size_t len)
{
    size_t at, n;
    qg_my_word_kind kind;
    return (qg_my_short_word(sql, len, &n, &kind) || qg_my_first_word(sql, len, &at, &n, &kind)) &&
           kind == QG_MY_WORD_INERT;
}

/* The plan read from state *start for `server` (NULL: a server not
 * known): read now unless it was read so already. */
void qg_my_plan_read(qg_my_plan *p, const qg_my_state *start, const qg_my_server_kind *server);

/* Whether the text names a system variable so (@@name) / names
 * session-tracking variables (qg_my_names_…): searched at most once. */
bool qg_my_plan_names_system_variable(qg_my_plan *p);
bool qg_my_plan_names_tracking(qg_my_plan *p);

/* Whether the text reads alike in every state (qg_my_reads_alike):
 * scanned at most once. */
bool qg_my_plan_reads_alike(qg_my_plan *p);

/* Whether the text, as read, may change the state without the server
 * reporting it (qg_my_may_change_unreported). */
bool qg_my_plan_may_change_unreported(qg_my_plan *p);

/* Whether the text, as read, is one statement whose first word changes
 * nothing: it sets no variable, whatever variables it names. */
bool qg_my_plan_inert(const qg_my_plan *p);

/* A walk over a read plan's statements of note, in order.  Past the ones
 * it keeps, or once the state was set otherwise than the plan read it
 * (qg_my_plan_walk_set_state), the rest of the text is read again. */
typedef struct qg_my_plan_walk {
    const qg_my_plan *plan;
    unsigned next;        /* the next kept statement */
    size_t pos;           /* past the last statement walked */
    qg_my_state state;    /* the state after it */
    bool reading;         /* the rest is read from the text */
    unsigned statements;  /* with `reading`: statements with code so far */
    bool runs_other;
} qg_my_plan_walk;

/* Reads the statements first where the plan did not yet. */
void qg_my_plan_walk_init(qg_my_plan_walk *w, qg_my_plan *p);
/* The next statement of note; false after the last. */
bool qg_my_plan_walk_next(qg_my_plan_walk *w, qg_my_planned *out);
/* From the statement walked last on, the text is lexed with *st. */
void qg_my_plan_walk_set_state(qg_my_plan_walk *w, const qg_my_state *st);
/* Once the walk ended: the statements with code it met, and whether one
 * runs others. */
unsigned qg_my_plan_walk_statements(const qg_my_plan_walk *w);
bool qg_my_plan_walk_runs_other(const qg_my_plan_walk *w);

#endif
