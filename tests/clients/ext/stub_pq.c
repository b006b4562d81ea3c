/* A stand-in for libpq (soname libpq.so.5) with only what the fail-safe
 * test needs: PQexec, which counts what was sent and never talks to a
 * server, and PQparameterStatus, which reports client_encoding from
 * $STUB_PQ_ENCODING (NULL when unset).  PQclientEncoding,
 * pg_encoding_to_char and PQmakeEmptyPGresult are missing on purpose: the
 * shim must then neither crash nor send.  stub_pq_sent() tells how many
 * queries reached it. */
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

static int sent;
static char result_token;

EXPORT void *PQexec(void *conn, const char *query)
{
    (void)conn;
    (void)query;
    sent++;
    return &result_token;
}

EXPORT const char *PQparameterStatus(const void *conn, const char *name)
{
    (void)conn;
    return strcmp(name, "client_encoding") == 0 ? getenv("STUB_PQ_ENCODING") : NULL;
}

EXPORT char *PQerrorMessage(const void *conn)
{
    (void)conn;
    return (char *)"stub: no error\n";
}

EXPORT int stub_pq_sent(void)
{
    return sent;
}
