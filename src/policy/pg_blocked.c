/* The messages of blocked PostgreSQL statements and the statements sent in
 * their place (pg_blocked.h). */
#include "pg_blocked.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hot.h"

void qg_pg_registry_lock(qg_pg_registry *r)
{
    pthread_mutex_lock(&r->lock);
}

void qg_pg_registry_unlock(qg_pg_registry *r)
{
    pthread_mutex_unlock(&r->lock);
}

static bool registry_empty(qg_pg_registry *r)
{
    return __atomic_load_n(&r->live, __ATOMIC_ACQUIRE) == 0;
}

/* Unlinks and returns the entry for key; the caller holds the lock. */
static qg_pg_blocked *registry_unlink(qg_pg_registry *r, const void *key)
{
    for (qg_pg_blocked **link = &r->head; *link; link = &(*link)->next) {
        if ((*link)->key == key) {
            qg_pg_blocked *found = *link;
            *link = found->next;
            __atomic_sub_fetch(&r->live, 1, __ATOMIC_RELEASE);
            return found;
        }
    }
    return NULL;
}

/* When malloc fails, entries come from here, so that a blocked caller still
 * reads our message. */
#define FALLBACK_ENTRIES 16
QG_FAR_BSS static qg_pg_blocked fallback[FALLBACK_ENTRIES];
static bool fallback_used[FALLBACK_ENTRIES];

static qg_pg_blocked *entry_alloc(void)
{
    qg_pg_blocked *m = malloc(sizeof *m);
    for (size_t i = 0; !m && i < FALLBACK_ENTRIES; i++)
        if (!__atomic_exchange_n(&fallback_used[i], true, __ATOMIC_ACQUIRE))
            m = &fallback[i];
    return m;
}

static void entry_free(qg_pg_blocked *m)
{
    if (m >= fallback && m < fallback + FALLBACK_ENTRIES)
        __atomic_store_n(&fallback_used[m - fallback], false, __ATOMIC_RELEASE);
    else
        free(m);
}

void qg_pg_registry_unlink_key(qg_pg_registry *r, const void *key)
{
    pthread_mutex_lock(&r->lock);
    qg_pg_blocked *gone = registry_unlink(r, key);
    pthread_mutex_unlock(&r->lock);
    if (gone)
        entry_free(gone);
}

void qg_pg_registry_put(qg_pg_registry *r, const void *key, const qg_decision *d)
{
    qg_pg_blocked *m = entry_alloc();
    if (!m)
        return;
    m->key = key;
    snprintf(m->sqlstate, sizeof m->sqlstate, "%s", d->sqlstate ? d->sqlstate : "42000");
    snprintf(m->primary, sizeof m->primary, "%s", d->message);
    snprintf(m->text, sizeof m->text, "ERROR:  %s\n", d->message);
    snprintf(m->verbose, sizeof m->verbose, "ERROR:  %s: %s\n", m->sqlstate, d->message);
    pthread_mutex_lock(&r->lock);
    qg_pg_blocked *old = registry_unlink(r, key);
    m->next = r->head;
    r->head = m;
    __atomic_add_fetch(&r->live, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&r->lock);
    if (old)
        entry_free(old);
}

const qg_pg_blocked *qg_pg_registry_find(qg_pg_registry *r, const void *key)
{
    if (registry_empty(r))
        return NULL;
    pthread_mutex_lock(&r->lock);
    const qg_pg_blocked *m = r->head;
    while (m && m->key != key)
        m = m->next;
    pthread_mutex_unlock(&r->lock);
    return m;
}

const char qg_pg_abort_transaction[] =
    "DO $quoteguard$BEGIN RAISE EXCEPTION 'quoteguard blocked a statement in this "
    "transaction' USING ERRCODE = '42501'; END$quoteguard$";

const char *qg_pg_failing_statement(char *out, size_t cap, const qg_decision *d)
{
    qg_replacement_pg_raise(out, cap, d->message, d->sqlstate ? d->sqlstate : "42000");
    return out;
}
