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

/* Whether the text is one statement, read alike from every state: it holds
 * no ';', the only byte that ends a statement.  Searched at most once, read
 * or not; a reading takes the answer.  In line: each query asks. */
static inline bool qg_my_plan_single(qg_my_plan *p)
{
    if (p->semicolon < 0)
        p->semicolon = memchr(p->sql, ';', p->len) != NULL;
    return !p->semicolon;
}

/* Whether a text of one statement (qg_my_plan_single) starts with a word
 * that changes nothing, as a reading from any state finds (qg_my_plan_inert):
 * its first word alone, in line where a short word starts the text. */
static inline bool qg_my_plan_single_inert(const qg_my_plan *p)
{
    size_t at, n;
    qg_my_word_kind kind;
    return (qg_my_short_word(p->sql, p->len, &n, &kind) ||
            qg_my_first_word(p->sql, p->len, &at, &n, &kind)) &&
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
