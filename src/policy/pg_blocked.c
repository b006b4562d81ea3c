/* The messages of blocked PostgreSQL statements and the statements sent in
 * their place (pg_blocked.h). */
#include "pg_blocked.h"

#include <stdio.h>
#include <string.h>

#include "hot.h"

/* Only touched when malloc fails: far from what every query reads. */
QG_FAR_BSS qg_pg_blocked qg_pg_reserved_messages[QG_PG_RESERVED_MESSAGES];
bool qg_pg_reserved_used[QG_PG_RESERVED_MESSAGES];

void qg_pg_registry_put(qg_pg_registry *r, const void *key, const qg_decision *d)
{
    qg_pg_blocked *m = qg_conn_map_get_or_add(r, key);
    if (!m)
        return;
    snprintf(m->sqlstate, sizeof m->sqlstate, "%s", d->sqlstate ? d->sqlstate : "42000");
    snprintf(m->primary, sizeof m->primary, "%s", d->message);
    snprintf(m->text, sizeof m->text, "ERROR:  %s\n", d->message);
    snprintf(m->verbose, sizeof m->verbose, "ERROR:  %s: %s\n", m->sqlstate, d->message);
}

const char qg_pg_abort_transaction[] =
    "DO $quoteguard$BEGIN RAISE EXCEPTION 'quoteguard blocked a statement in this "
    "transaction' USING ERRCODE = '42501'; END$quoteguard$";

const char *qg_pg_failing_statement(char *out, size_t cap, const qg_decision *d)
{
    qg_replacement_pg_raise(out, cap, d->message, d->sqlstate ? d->sqlstate : "42000");
    return out;
}
