/* The client encoding of a libpq connection (pg_encoding.h). */
#include "pg_encoding.h"

#include <pthread.h>
#include <string.h>

#include "encoding_tables.h"

/* "SQL_ASCII": the first two letters tell most other names from it. */
static bool is_sql_ascii(const char *name)
{
    return name[0] == 'S' && name[1] == 'Q' && strcmp(name, "SQL_ASCII") == 0;
}

qg_pg_client_encoding qg_pg_client_encoding_named(const char *name)
{
    qg_pg_client_encoding c = {.name = name ? name : ""};
    c.enc = qg_encoding_find(QG_DIALECT_POSTGRES, c.name);
    c.server_decides = c.enc && (is_sql_ascii(qg_encoding_name(c.enc)) ||
                                 qg_encoding_pg_client_only(c.enc));
    c.converts_to_ascii = c.enc && qg_encoding_converts_to_ascii(c.enc);
    return c;
}

/* libpq numbers fewer than 64 encodings. */
#define KEPT_IDS 64

enum { SERVER_DECIDES = 1, CONVERTS_TO_ASCII = 2 };

/* An entry is read once its generation matches (acquire); it is written
 * under the lock, fields first, generation last (release).  Every field is
 * read and written atomically: another thread may be filling it. */
static struct {
    const qg_encoding *enc;
    const char *name;
    unsigned flags;
    unsigned generation;
} kept[KEPT_IDS];
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

__thread qg_pg_encoding_hit qg_pg_encoding_hits[QG_PG_ENCODING_HITS]
    __attribute__((tls_model("initial-exec")));

static void remember(int id, unsigned generation, const qg_pg_client_encoding *c)
{
    qg_pg_encoding_hit *hit = &qg_pg_encoding_hits[(unsigned)id % QG_PG_ENCODING_HITS];
    hit->generation = 0;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    hit->id = id;
    hit->encoding = *c;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    hit->generation = generation;
}

bool qg_pg_client_encoding_kept(int id, unsigned generation, qg_pg_encoding_name_fn name_of,
                                qg_pg_client_encoding *out)
{
    if (id <= 0 || id >= KEPT_IDS || generation == 0)
        return false;
    if (__atomic_load_n(&kept[id].generation, __ATOMIC_ACQUIRE) == generation) {
        unsigned flags = __atomic_load_n(&kept[id].flags, __ATOMIC_RELAXED);
        out->enc = __atomic_load_n(&kept[id].enc, __ATOMIC_RELAXED);
        out->name = __atomic_load_n(&kept[id].name, __ATOMIC_RELAXED);
        out->server_decides = flags & SERVER_DECIDES;
        out->converts_to_ascii = flags & CONVERTS_TO_ASCII;
        remember(id, generation, out);
        return true;
    }
    qg_pg_client_encoding c = qg_pg_client_encoding_named(name_of(id));
    if (!c.enc)
        return false;
    unsigned flags = (c.server_decides ? SERVER_DECIDES : 0) |
                     (c.converts_to_ascii ? CONVERTS_TO_ASCII : 0);
    pthread_mutex_lock(&kept_lock);
    __atomic_store_n(&kept[id].enc, c.enc, __ATOMIC_RELAXED);
    __atomic_store_n(&kept[id].name, c.name, __ATOMIC_RELAXED);
    __atomic_store_n(&kept[id].flags, flags, __ATOMIC_RELAXED);
    __atomic_store_n(&kept[id].generation, generation, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&kept_lock);
    *out = c;
    remember(id, generation, out);
    return true;
}
const char *qg_pg_checked_encoding(const qg_pg_client_encoding *client, const char *server)
{
    if (!client->server_decides)
        return client->name;
    bool ascii_server = is_sql_ascii(server);
    if (is_sql_ascii(qg_encoding_name(client->enc)))
        return ascii_server ? client->name : server;
    return ascii_server ? QG_PG_ASCII_ONLY : client->name;
}
