/* The connection map (conn_map.h). */
#include "conn_map.h"

#include <stdint.h>
#include <stdlib.h>

/* A removed entry's slot: lookups probe past it. */
#define TOMBSTONE ((qg_conn_head *)1)

static size_t slot_of(const void *key, size_t capacity)
{
    uint64_t h = (uint64_t)(uintptr_t)key;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return (size_t)h & (capacity - 1);
}

/* The caller holds the lock (either kind). */
static qg_conn_head **find_slot(const qg_conn_map *m, const void *key)
{
    if (!m->capacity)
        return NULL;
    for (size_t i = slot_of(key, m->capacity), n = 0; n < m->capacity;
         i = (i + 1) & (m->capacity - 1), n++) {
        qg_conn_head *e = m->slots[i];
        if (!e)
            return NULL;
        if (e != TOMBSTONE && e->key == key)
            return &m->slots[i];
    }
    return NULL;
}

void *qg_conn_map_find(qg_conn_map *m, const void *key)
{
    pthread_rwlock_rdlock(&m->lock);
    qg_conn_head **slot = find_slot(m, key);
    qg_conn_head *e = slot ? *slot : NULL;
    pthread_rwlock_unlock(&m->lock);
    return e;
}

/* Rebuilds the table without tombstones, at least four times the live
 * size.  The caller holds the write lock. */
static bool grow(qg_conn_map *m)
{
    size_t capacity = 16;
    while (capacity < (m->live + 1) * 4)
        capacity *= 2;
    qg_conn_head **slots = calloc(capacity, sizeof(qg_conn_head *));
    if (!slots)
        return false;
    for (size_t i = 0; i < m->capacity; i++) {
        qg_conn_head *e = m->slots[i];
        if (!e || e == TOMBSTONE)
            continue;
        size_t j = slot_of(e->key, capacity);
        while (slots[j])
            j = (j + 1) & (capacity - 1);
        slots[j] = e;
    }
    free(m->slots);
    m->slots = slots;
    m->capacity = capacity;
    m->filled = m->live;
    return true;
}

void *qg_conn_map_get_or_add(qg_conn_map *m, const void *key)
{
    qg_conn_head *e = qg_conn_map_find(m, key);
    if (e)
        return e;
    qg_conn_head *fresh = calloc(1, m->entry_size);
    if (!fresh)
        return NULL;
    fresh->key = key;
    pthread_rwlock_wrlock(&m->lock);
    qg_conn_head **slot = find_slot(m, key);
    if (slot) {
        e = *slot; /* another thread added it meanwhile */
    } else if ((m->filled + 1) * 4 > m->capacity * 3 && !grow(m)) {
        e = NULL;
    } else {
        size_t i = slot_of(key, m->capacity);
        while (m->slots[i] && m->slots[i] != TOMBSTONE)
            i = (i + 1) & (m->capacity - 1);
        if (!m->slots[i])
            m->filled++;
        m->slots[i] = fresh;
        __atomic_add_fetch(&m->live, 1, __ATOMIC_RELAXED);
        e = fresh;
        fresh = NULL;
    }
    pthread_rwlock_unlock(&m->lock);
    free(fresh);
    return e;
}

void qg_conn_map_remove(qg_conn_map *m, const void *key, void (*before_free)(void *entry))
{
    if (qg_conn_map_empty(m))
        return;
    pthread_rwlock_wrlock(&m->lock);
    qg_conn_head **slot = find_slot(m, key);
    qg_conn_head *gone = slot ? *slot : NULL;
    if (gone) {
        *slot = TOMBSTONE;
        __atomic_sub_fetch(&m->live, 1, __ATOMIC_RELAXED);
        if (before_free)
            before_free(gone);
    }
    pthread_rwlock_unlock(&m->lock);
    free(gone);
}

void qg_conn_map_read_lock(qg_conn_map *m)
{
    pthread_rwlock_rdlock(&m->lock);
}

void qg_conn_map_write_lock(qg_conn_map *m)
{
    pthread_rwlock_wrlock(&m->lock);
}

void qg_conn_map_unlock(qg_conn_map *m)
{
    pthread_rwlock_unlock(&m->lock);
}

/* An rwlock knows its writer by thread id, which the child's one thread no
 * longer has: unlocking it there would break it, so it is made anew. */
void qg_conn_map_child_after_fork(qg_conn_map *m)
{
    pthread_rwlock_init(&m->lock, NULL);
}
