/* The states a libpq connection's pipeline may leave (pg_pipeline.h). */
#include "pg_pipeline.h"

#include <pthread.h>
#include <string.h>

qg_conn_map qg_pg_pipelines = QG_CONN_MAP_INIT(qg_pg_pipeline);

static void lock_pipelines(void)
{
    qg_conn_map_write_lock(&qg_pg_pipelines);
}

static void unlock_pipelines(void)
{
    qg_conn_map_unlock(&qg_pg_pipelines);
}

static void renew_pipelines_lock(void)
{
    qg_conn_map_child_after_fork(&qg_pg_pipelines);
}

/* A fork while another thread holds the map's lock must not leave it held
 * in the child. */
__attribute__((constructor)) static void keep_pipelines_across_fork(void)
{
    pthread_atfork(lock_pipelines, unlock_pipelines, renew_pipelines_lock);
}

qg_pg_pipeline *qg_pg_pipeline_of(const void *conn)
{
    return qg_conn_map_get_or_add(&qg_pg_pipelines, conn);
}

void qg_pg_pipeline_ended_kept(const void *conn)
{
    qg_pg_pipeline *p = qg_conn_map_find(&qg_pg_pipelines, conn);
    if (p && p->prepared_sets_state)
        memset(&p->pending, 0, sizeof p->pending);
    else if (p)
        qg_conn_map_remove(&qg_pg_pipelines, conn, NULL);
}

void qg_pg_pipeline_forget(const void *conn)
{
    qg_conn_map_remove(&qg_pg_pipelines, conn, NULL);
}

void qg_pg_pipeline_prepared(const void *conn, const char *sql, size_t len)
{
    qg_pg_effect effect = qg_pg_statement_effect(sql, len);
    if (effect.encoding == QG_PG_KEEPS && effect.scs == QG_PG_KEEPS)
        return;
    qg_pg_pipeline *p = qg_pg_pipeline_of(conn);
    if (p)
        p->prepared_sets_state = true;
}

void qg_pg_pipeline_executes_prepared(const void *conn)
{
    static const qg_pg_effect any = {.encoding = QG_PG_UNKNOWN, .scs = QG_PG_UNKNOWN};
    qg_pg_pipeline *p =
        qg_conn_map_empty(&qg_pg_pipelines) ? NULL : qg_conn_map_find(&qg_pg_pipelines, conn);
    if (p && p->prepared_sets_state)
        qg_pg_pending_add_effect(&p->pending, &any);
}
