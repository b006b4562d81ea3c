/* The statement plan of a MySQL text (mysql_plan.h): one walk with the
 * statement reader, whose readings the consumers take from here. */
#include "mysql_plan.h"

#include <string.h>

#include "mysql_statements.h"

/* Whether a statement's reading matters to a consumer of the plan. */
static bool of_note(const qg_my_effect *fx)
{
    return fx->changed || fx->unknown || fx->prepares || fx->executes || fx->deallocates;
}

/* The statements read with the statement reader. */
static void read_statements(qg_my_plan *p)
{
    p->statements = 0;
    p->runs_other = p->server_decides = false;
    p->noted = 0;
    p->more_noted = false;
    p->walked = true;
    qg_my_state st = p->start;
    for (size_t pos = 0; pos < p->len;) {
        qg_my_effect fx;
        size_t step = qg_my_read_statement_on(&st, p->server, p->sql + pos, p->len - pos, &fx);
        if (step == 0)
            break;
        p->statements += fx.nonempty;
        p->runs_other |= fx.runs_other;
        p->server_decides |= fx.server_decides;
        if (of_note(&fx)) {
            if (p->noted < QG_MY_PLAN_NOTED) {
                qg_my_planned *s = &p->steps[p->noted++];
                s->start = pos;
                s->end = pos + step;
                s->after = st;
                s->effect = fx;
                s->statements_through = p->statements;
                s->runs_other_through = p->runs_other;
            } else {
                p->more_noted = true;
            }
        }
        pos += step;
    }
}

/* A text that starts with a word and has no ';' after it is one
 * statement: one whose first word changes nothing is read whole from that
 * word (as the reader reads it); what another does is read only when a
 * walk asks.  In line: each query's text is read so. */
static inline __attribute__((always_inline)) void read_plan(qg_my_plan *p)
{
    size_t at = 0, n;
    qg_my_word_kind kind = QG_MY_WORD_OTHER;
    p->read = true;
    p->leading_call = p->lone_first_word = false;
    if (qg_my_short_word(p->sql, p->len, &n, &kind) ||
        qg_my_first_word(p->sql, p->len, &at, &n, &kind)) {
        const char *word = p->sql + at;
        p->leading_call = kind == QG_MY_WORD_RUNS;
        /* only spaces come before the word: a ';' found is after it */
        p->lone_first_word = p->semicolon >= 0 ? !p->semicolon
                                               : !memchr(word + n, ';', p->len - at - n);
    }
    p->inert = p->lone_first_word && kind == QG_MY_WORD_INERT;
    if (!p->lone_first_word) {
        read_statements(p);
        return;
    }
    p->walked = kind == QG_MY_WORD_INERT;
    p->runs_other = p->server_decides = false;
    p->statements = 1;
    p->noted = 0;
    p->more_noted = false;
}

static bool same_server(const qg_my_server_kind *a, const qg_my_server_kind *b)
{
    return a == b || (a && b && a->mariadb == b->mariadb && a->version == b->version);
}

void qg_my_plan_read(qg_my_plan *p, const qg_my_state *start, const qg_my_server_kind *server)
{
    if (p->read && same_server(p->server, server) && qg_my_state_equal(&p->start, start))
        return;
    p->start = *start;
    p->server = server;
    read_plan(p);
}

bool qg_my_plan_names_system_variable(qg_my_plan *p)
{
    if (p->names_system_variable < 0)
        p->names_system_variable = qg_my_names_system_variable(p->sql, p->len) ? 1 : 0;
    return p->names_system_variable;
}

bool qg_my_plan_reads_alike(qg_my_plan *p)
{
    if (p->reads_alike < 0)
        p->reads_alike = qg_my_reads_alike(p->sql, p->len) ? 1 : 0;
    return p->reads_alike;
}

bool qg_my_plan_names_tracking(qg_my_plan *p)
{
    if (p->names_tracking < 0)
        p->names_tracking = qg_my_names_tracking(p->sql, p->len) ? 1 : 0;
    return p->names_tracking;
}

bool qg_my_plan_inert(const qg_my_plan *p)
{
    return p->inert;
}

bool qg_my_plan_may_change_unreported(qg_my_plan *p)
{
    if (p->inert) /* names a variable (@@name) only to read it */
        return false;
    if (qg_my_plan_names_system_variable(p) || p->leading_call)
        return true;
    /* a text of one statement that starts with another word: read
     * without lexing it (that word is ASCII in every character set) */
    return !p->lone_first_word && p->runs_other;
}

bool qg_my_may_change_unreported(const qg_my_state *st, const char *sql, size_t len)
{
    qg_my_state latin1 = {.charset = "latin1", .flags = 0};
    qg_my_plan plan;
    qg_my_plan_init(&plan, sql, len);
    qg_my_plan_read(&plan, st ? st : &latin1, NULL);
    return qg_my_plan_may_change_unreported(&plan);
}

/* ---------------------------------------------------------------- walks */

void qg_my_plan_walk_init(qg_my_plan_walk *w, qg_my_plan *p)
{
    if (!p->walked)
        read_statements(p);
    w->plan = p;
    w->next = 0;
    w->pos = 0;
    w->state = p->start;
    w->reading = false;
    w->statements = 0;
    w->runs_other = false;
}

/* From the statement walked last on, the statements are read from the text. */
static void start_reading(qg_my_plan_walk *w)
{
    const qg_my_planned *last = w->next ? &w->plan->steps[w->next - 1] : NULL;
    w->reading = true;
    w->statements = last ? last->statements_through : 0;
    w->runs_other = last && last->runs_other_through;
}

bool qg_my_plan_walk_next(qg_my_plan_walk *w, qg_my_planned *out)
{
    const qg_my_plan *p = w->plan;
    if (!w->reading && w->next < p->noted) {
        *out = p->steps[w->next++];
        w->pos = out->end;
        w->state = out->after;
        return true;
    }
    if (!w->reading) {
        if (!p->more_noted)
            return false;
        start_reading(w);
    }
    while (w->pos < p->len) {
        size_t step = qg_my_read_statement_on(&w->state, p->server, p->sql + w->pos,
                                              p->len - w->pos, &out->effect);
        if (step == 0)
            break;
        out->start = w->pos;
        out->end = w->pos += step;
        w->statements += out->effect.nonempty;
        w->runs_other |= out->effect.runs_other;
        if (of_note(&out->effect)) {
            out->after = w->state;
            out->statements_through = w->statements;
            out->runs_other_through = w->runs_other;
            return true;
        }
    }
    w->pos = p->len;
    return false;
}

void qg_my_plan_walk_set_state(qg_my_plan_walk *w, const qg_my_state *st)
{
    if (!w->reading)
        start_reading(w);
    w->state = *st;
}

unsigned qg_my_plan_walk_statements(const qg_my_plan_walk *w)
{
    return w->reading ? w->statements : w->plan->statements;
}

bool qg_my_plan_walk_runs_other(const qg_my_plan_walk *w)
{
    return w->reading ? w->runs_other : w->plan->runs_other;
}
