/* The MySQL front's records of the client library's handles (mysql_conns.h). */
#include "mysql_conns.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "hot.h"
#include "mysql_escape.h"

qg_conn_map qg_my_conns = QG_CONN_MAP_INIT(qg_my_conn);
static qg_conn_map stmts = QG_CONN_MAP_INIT(qg_my_stmt);
/* Blocks set: zero means the error readers need no lookup. */
static unsigned long pending_blocks;
/* The connection last connected or queried, for mysql_escape_string. */
static qg_my_conn *last_used;
/* This thread's last look-ups (initial-exec: reading them never allocates). */
static __thread qg_conn_map_kept kept_conns __attribute__((tls_model("initial-exec")));
static __thread qg_conn_map_kept kept_stmts __attribute__((tls_model("initial-exec")));

static void lock_maps(void)
{
    qg_conn_map_write_lock(&qg_my_conns);
    qg_conn_map_write_lock(&stmts);
}

static void unlock_maps(void)
{
    qg_conn_map_unlock(&stmts);
    qg_conn_map_unlock(&qg_my_conns);
}

static void renew_map_locks(void)
{
    qg_conn_map_child_after_fork(&qg_my_conns);
    qg_conn_map_child_after_fork(&stmts);
}

/* A fork while another thread holds a map's lock must not leave it held in
 * the child. */
__attribute__((constructor)) static void keep_maps_across_fork(void)
{
    pthread_atfork(lock_maps, unlock_maps, renew_map_locks);
}

void qg_my_block_forget(qg_my_block *b)
{
    b->set = b->await_read = false;
    __atomic_sub_fetch(&pending_blocks, 1, __ATOMIC_RELEASE);
}

void qg_my_block_set(qg_my_block *b, const qg_decision *d, bool await_read)
{
    if (!b->set)
        __atomic_add_fetch(&pending_blocks, 1, __ATOMIC_RELEASE);
    b->set = true;
    b->await_read = await_read;
    snprintf(b->sqlstate, sizeof b->sqlstate, "%s",
             d->sqlstate && strlen(d->sqlstate) == 5 ? d->sqlstate : QG_MY_BLOCK_SQLSTATE);
    snprintf(b->message, sizeof b->message, "%s", d->message);
}

QG_HOT qg_my_conn *qg_my_conn_find(const void *mysql)
{
    return qg_conn_map_empty(&qg_my_conns) ? NULL
                                           : qg_conn_map_find_kept(&qg_my_conns, &kept_conns, mysql);
}

qg_my_stmt *qg_my_stmt_find(const void *stmt)
{
    return qg_conn_map_empty(&stmts) ? NULL : qg_conn_map_find_kept(&stmts, &kept_stmts, stmt);
}

QG_HOT qg_my_conn *qg_my_conn_use(const void *mysql)
{
    qg_my_conn *e = qg_conn_map_get_or_add_kept(&qg_my_conns, &kept_conns, mysql);
    if (e)
        __atomic_store_n(&last_used, e, __ATOMIC_RELAXED);
    return e;
}

qg_my_stmt *qg_my_stmt_add(const void *stmt, void *mysql)
{
    qg_my_stmt *s = qg_conn_map_get_or_add_kept(&stmts, &kept_stmts, stmt);
    if (s)
        s->mysql = mysql;
    return s;
}

static void forget_conn(void *entry)
{
    qg_my_conn *e = entry;
    if (__atomic_load_n(&last_used, __ATOMIC_RELAXED) == e)
        __atomic_store_n(&last_used, NULL, __ATOMIC_RELAXED);
    qg_my_block_clear(&e->block);
}

static void forget_stmt(void *entry)
{
    qg_my_block_clear(&((qg_my_stmt *)entry)->block);
}

void qg_my_conn_close(const void *mysql)
{
    qg_conn_map_remove(&qg_my_conns, mysql, forget_conn);
}

void qg_my_stmt_close(const void *stmt)
{
    qg_conn_map_remove(&stmts, stmt, forget_stmt);
}

static bool blocks_pending(void)
{
    return __atomic_load_n(&pending_blocks, __ATOMIC_ACQUIRE) != 0;
}

const qg_my_block *qg_my_conn_block(const void *mysql)
{
    const qg_my_conn *e = blocks_pending() ? qg_conn_map_find(&qg_my_conns, mysql) : NULL;
    return e && e->block.set ? &e->block : NULL;
}

const qg_my_block *qg_my_stmt_block(const void *stmt)
{
    const qg_my_stmt *s = blocks_pending() ? qg_conn_map_find(&stmts, stmt) : NULL;
    return s && s->block.set ? &s->block : NULL;
}

const qg_encoding *qg_my_last_used_escape(bool *quotes_only, bool *first)
{
    const qg_encoding *enc = NULL;
    *quotes_only = *first = false;
    /* decided under the lock: the entry may be closed by another thread */
    qg_conn_map_read_lock(&qg_my_conns);
    qg_my_conn *e = __atomic_load_n(&last_used, __ATOMIC_RELAXED);
    if (e) {
        enc = qg_my_escape_for_legacy(&e->session.state, quotes_only);
        if (enc)
            *first = !__atomic_exchange_n(&e->escape_upgrade_logged, true, __ATOMIC_RELAXED);
    }
    qg_conn_map_unlock(&qg_my_conns);
    return enc;
}
