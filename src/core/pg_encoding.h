/* The client encoding of a libpq connection as the libpq front checks it.
 * libpq names the encoding by a number (PQclientEncoding) that its own
 * table fixes, so what the shim derives from the name (the encoding's
 * table, whether the server encoding decides) is kept per number and
 * looked up once.  Pure logic: the front passes libpq's functions in. */
#ifndef QG_PG_ENCODING_H
#define QG_PG_ENCODING_H

#include <stdbool.h>

#include "quoteguard.h"

typedef struct qg_pg_client_encoding {
    const qg_encoding *enc; /* NULL: a name the shim does not know */
    const char *name;       /* as libpq or the server names it */
    /* SQL_ASCII, or an encoding no server runs in: the server encoding
     * decides what is checked (qg_pg_checked_encoding). */
    bool server_decides;
    /* PostgreSQL's conversion of it to some server encoding makes ASCII of
     * a character (qg_encoding_converts_to_ascii). */
    bool converts_to_ascii;
} qg_pg_client_encoding;

/* The encoding the server of a connection reports for itself ("" when it
 * reports none): the front's reader of it. */
typedef const char *(*qg_pg_server_encoding_fn)(const void *conn);

/* The client encoding the server names `name` (NULL: ""). */
qg_pg_client_encoding qg_pg_client_encoding_named(const char *name);

/* libpq's name of its encoding number id (pg_encoding_to_char). */
typedef char *(*qg_pg_encoding_name_fn)(int id);

/* qg_pg_client_encoding_by_id past this thread's last numbers. */
bool qg_pg_client_encoding_kept(int id, unsigned generation, qg_pg_encoding_name_fn name_of,
                                qg_pg_client_encoding *out);

/* The numbers this thread looked up last, one place each by the number's
 * low bits (a program mostly uses one encoding, or one per connection):
 * answered in line, without the table (docs/PERFORMANCE.md, "Choices in
 * the code").  generation 0 while a place is being written; a signal
 * handler's query may rewrite a place while it is copied, so the number is
 * compared again after the copy.  initial-exec: reading them never
 * allocates. */
enum { QG_PG_ENCODING_HITS = 4 };
typedef struct qg_pg_encoding_hit {
    unsigned generation;
    int id;
    qg_pg_client_encoding encoding;
} qg_pg_encoding_hit;
extern __thread qg_pg_encoding_hit qg_pg_encoding_hits[QG_PG_ENCODING_HITS]
    __attribute__((tls_model("initial-exec")));

/* The client encoding libpq numbers id, into *out, kept per number:
 * name_of is called once per number and `generation` (a new one when a
 * library may have been replaced).  False for a number out of the kept
 * range (SQL_ASCII is 0: libpq takes every name it does not know for it, so
 * its number says nothing) or a name the shim does not know: the caller
 * reads the name. */
static inline bool qg_pg_client_encoding_by_id(int id, unsigned generation,
                                               qg_pg_encoding_name_fn name_of,
                                               qg_pg_client_encoding *out)
{
    const qg_pg_encoding_hit *hit = &qg_pg_encoding_hits[(unsigned)id % QG_PG_ENCODING_HITS];
    if (hit->generation == generation && hit->id == id && generation != 0) {
        *out = hit->encoding;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        if (hit->generation == generation && hit->id == id)
            return true;
    }
    return qg_pg_client_encoding_kept(id, generation, name_of, out);
}

/* The name of the encoding the server checks a client's text against, for
 * a client encoding that server_decides, given the server encoding's name
 * ("" when the server reports none): a SQL_ASCII client's text is checked
 * against the server encoding (the server does not convert it, but
 * verifies it as its own); a SQL_ASCII server verifies an encoding it
 * cannot convert from as ASCII only.  A server that reports no encoding
 * leaves it unknown (""): blocked, not guessed. */
const char *qg_pg_checked_encoding(const qg_pg_client_encoding *client, const char *server);

#endif
