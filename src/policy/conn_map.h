/* A map from a client library's handle (a connection, a statement, a
 * result: any pointer) to the front's entry for it: open addressing, keyed
 * by the pointer, under a read-write lock.  Entries are allocated when
 * added and freed when removed (so a pointer to one stays valid while the
 * table grows); each begins with a qg_conn_head.  Its first slots are in
 * the map itself, so a map of a few entries never allocates a table; a map
 * with a reserve takes entries from it when malloc fails, so that what it
 * must keep (a blocked query's message) is kept then too.  Pure logic: no
 * client library. */
#ifndef QG_CONN_MAP_H
#define QG_CONN_MAP_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct qg_conn_head {
    const void *key;
} qg_conn_head;

#define QG_CONN_MAP_FIRST_SLOTS 16

typedef struct qg_conn_map {
    pthread_rwlock_t lock;
    size_t entry_size;
    qg_conn_head **slots; /* first_slots, or allocated */
    size_t capacity;      /* a power of two, or 0 */
    size_t filled;        /* live entries and tombstones */
    size_t live;          /* read without the lock */
    unsigned long removals; /* entries removed so far: a kept look-up is good while unchanged */
    qg_conn_head *first_slots[QG_CONN_MAP_FIRST_SLOTS];
    void *reserve;      /* reserve_count entries of entry_size, or NULL */
    bool *reserve_used; /* one flag an entry, taken atomically */
    size_t reserve_count;
} qg_conn_map;

#define QG_CONN_MAP_INIT(entry_type)                                                            \
    {PTHREAD_RWLOCK_INITIALIZER, sizeof(entry_type), NULL, 0, 0, 0, 0, {NULL}, NULL, NULL, 0}
/* A map whose entries come from reserve (an array of entry_type, which
 * maps may share) when malloc fails; used holds a flag for each. */
#define QG_CONN_MAP_INIT_RESERVE(entry_type, reserve, used)                                     \
    {PTHREAD_RWLOCK_INITIALIZER, sizeof(entry_type), NULL, 0, 0, 0, 0, {NULL}, (reserve), (used), \
     sizeof(reserve) / sizeof((reserve)[0])}

/* The entry for key, or NULL. */
void *qg_conn_map_find(qg_conn_map *m, const void *key);
/* The entry for key, added zeroed (but for its key) when missing; NULL
 * without memory. */
void *qg_conn_map_get_or_add(qg_conn_map *m, const void *key);
/* Removes and frees the entry for key, if any; `before_free` (may be NULL)
 * runs on it first, under the write lock. */
void qg_conn_map_remove(qg_conn_map *m, const void *key, void (*before_free)(void *entry));
/* A thread's last look-ups in one map, kept so that a handle used again
 * (a connection's next query) is found without the lock.  An entry stays
 * its key's until it is removed, and a removal from the map forgets them
 * all, so a kept answer is the map's own (docs/PERFORMANCE.md, "Choices
 * in the code").  Zero-initialised: empty. */
#define QG_CONN_MAP_KEPT 4

typedef struct qg_conn_map_kept {
    unsigned long removals; /* the map's count when these were found */
    const void *key[QG_CONN_MAP_KEPT];
    void *entry[QG_CONN_MAP_KEPT]; /* NULL: an empty place */
    unsigned next;                 /* the place the next one takes */
    unsigned last;                 /* the place of the last answer */
} qg_conn_map_kept;

/* qg_conn_map_find and qg_conn_map_get_or_add, answered from `kept` (this
 * thread's, for this map) where they can be. */
void *qg_conn_map_find_kept_slow(qg_conn_map *m, qg_conn_map_kept *kept, const void *key);
void *qg_conn_map_get_or_add_kept_slow(qg_conn_map *m, qg_conn_map_kept *kept, const void *key);

/* The last answer from `kept` when it is key's and no entry was removed
 * since, else NULL: in line, since a handle is mostly used again by the
 * call after. */
static inline void *qg_conn_map_kept_last(const qg_conn_map *m, const qg_conn_map_kept *kept,
                                          const void *key)
{
    unsigned i = kept->last;
    return __atomic_load_n(&m->removals, __ATOMIC_ACQUIRE) == kept->removals &&
                   kept->key[i] == key
               ? kept->entry[i]
               : NULL;
}

static inline void *qg_conn_map_find_kept(qg_conn_map *m, qg_conn_map_kept *kept,
                                          const void *key)
{
    void *e = qg_conn_map_kept_last(m, kept, key);
    return e ? e : qg_conn_map_find_kept_slow(m, kept, key);
}

static inline void *qg_conn_map_get_or_add_kept(qg_conn_map *m, qg_conn_map_kept *kept,
                                                const void *key)
{
    void *e = qg_conn_map_kept_last(m, kept, key);
    return e ? e : qg_conn_map_get_or_add_kept_slow(m, kept, key);
}

/* Whether the map holds any entry (no lock: a hint for fast paths). */
static inline bool qg_conn_map_empty(const qg_conn_map *m)
{
    return __atomic_load_n(&m->live, __ATOMIC_RELAXED) == 0;
}

/* The lock, for readers that must see an entry stay alive, and for fork:
 * a fork while another thread holds it must not leave it held in the child
 * (pthread_atfork: write-lock before, unlock in the parent,
 * qg_conn_map_child_after_fork in the child). */
void qg_conn_map_read_lock(qg_conn_map *m);
void qg_conn_map_write_lock(qg_conn_map *m);
void qg_conn_map_unlock(qg_conn_map *m);
void qg_conn_map_child_after_fork(qg_conn_map *m);

#endif
