/* The connection map (conn_map.h). */
#include "conn_map.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hot.h"

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
 * size: in the map's first slots while they are enough.  The caller holds
 * the write lock. */
static bool grow(qg_conn_map *m)
{
    size_t capacity = QG_CONN_MAP_FIRST_SLOTS;
    while (capacity < (m->live + 1) * 4)
        capacity *= 2;
    qg_conn_head *moving[QG_CONN_MAP_FIRST_SLOTS];
    qg_conn_head **old = m->slots;
    size_t old_capacity = m->capacity;
    qg_conn_head **slots;
    if (capacity == QG_CONN_MAP_FIRST_SLOTS) {
        if (old == m->first_slots) { /* rebuilt in place, from a copy */
            memcpy(moving, old, sizeof moving);
            old = moving;
        }
        slots = m->first_slots;
        memset(slots, 0, sizeof m->first_slots);
    } else {
        slots = calloc(capacity, sizeof(qg_conn_head *));
        if (!slots)
            return false;
    }
    for (size_t i = 0; i < old_capacity; i++) {
        qg_conn_head *e = old[i];
        if (!e || e == TOMBSTONE)
            continue;
        size_t j = slot_of(e->key, capacity);
        while (slots[j])
            j = (j + 1) & (capacity - 1);
        slots[j] = e;
    }
    if (m->slots != m->first_slots)
        free(m->slots);
    m->slots = slots;
    m->capacity = capacity;
    m->filled = m->live;
    return true;
}

/* A zeroed entry: allocated, or from the reserve without memory. */
static qg_conn_head *entry_new(qg_conn_map *m)
{
    qg_conn_head *e = calloc(1, m->entry_size);
    for (size_t i = 0; !e && i < m->reserve_count; i++) {
        if (!__atomic_exchange_n(&m->reserve_used[i], true, __ATOMIC_ACQUIRE)) {
            e = (qg_conn_head *)((char *)m->reserve + i * m->entry_size);
            memset(e, 0, m->entry_size);
        }
    }
    return e;
}

static void entry_free(qg_conn_map *m, qg_conn_head *e)
{
    char *first = m->reserve;
    if (e && first && (char *)e >= first && (char *)e < first + m->reserve_count * m->entry_size)
        __atomic_store_n(&m->reserve_used[((char *)e - first) / m->entry_size], false,
                         __ATOMIC_RELEASE);
    else
        free(e);
}

void *qg_conn_map_get_or_add(qg_conn_map *m, const void *key)
{
    qg_conn_head *e = qg_conn_map_find(m, key);
    if (e)
        return e;
    qg_conn_head *fresh = entry_new(m);
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
    entry_free(m, fresh);
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
        /* before the entry is freed: no thread takes it from its kept ones */
        __atomic_add_fetch(&m->removals, 1, __ATOMIC_RELEASE);
        if (before_free)
            before_free(gone);
    }
    pthread_rwlock_unlock(&m->lock);
    entry_free(m, gone);
}

/* The entry kept for key, or NULL; forgets them all when the map removed
 * one since they were found. */
static void *kept_entry(const qg_conn_map *m, qg_conn_map_kept *kept, const void *key)
{
    unsigned long removals = __atomic_load_n(&m->removals, __ATOMIC_ACQUIRE);
    if (removals != kept->removals) {
        memset(kept, 0, sizeof *kept);
        kept->removals = removals;
        return NULL;
    }
    for (unsigned i = 0; i < QG_CONN_MAP_KEPT; i++)
        if (kept->entry[i] && kept->key[i] == key) {
            kept->last = i;
            return kept->entry[i];
        }
    return NULL;
}

/* Keeps an entry found after kept_entry (which read the map's removals
 * first: a removal since makes the next look-up forget it). */
static void *keep(qg_conn_map_kept *kept, const void *key, void *entry)
{
    if (entry) {
        unsigned i = kept->next++ % QG_CONN_MAP_KEPT;
        kept->key[i] = key;
        kept->entry[i] = entry;
        kept->last = i;
    }
    return entry;
}

void *qg_conn_map_find_kept_slow(qg_conn_map *m, qg_conn_map_kept *kept, const void *key)
{
    void *e = kept_entry(m, kept, key);
    return e ? e : keep(kept, key, qg_conn_map_find(m, key));
}

void *qg_conn_map_get_or_add_kept_slow(qg_conn_map *m, qg_conn_map_kept *kept,
                                       const void *key)
{
    void *e = kept_entry(m, kept, key);
    return e ? e : keep(kept, key, qg_conn_map_get_or_add(m, key));
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
