/* An extension module the way PHP's pgsql.so or Perl's Pg.so is one: a
 * shared object linked to libpq that a program dlopen()s after start-up
 * (tests/clients/both_ext.c).  Its calls into libpq go through its own
 * PLT, so they reach the preloaded shim, which must find the real libpq
 * even when it was loaded RTLD_LOCAL.
 *
 * qgext_pg_query: connects with the PG* environment, sets client_encoding,
 * runs sql with PQexec; 0 and the first value in out, or 1 and the error
 * message (PQresultErrorMessage) in out. */
#include <libpq-fe.h>
#include <stdio.h>

__attribute__((visibility("default"))) int qgext_pg_query(const char *encoding, const char *sql,
                                                          char *out, size_t cap)
{
    PGconn *conn = PQconnectdb("");
    if (PQstatus(conn) != CONNECTION_OK) {
        snprintf(out, cap, "connect: %s", PQerrorMessage(conn));
        PQfinish(conn);
        return 1;
    }
    char set[96];
    snprintf(set, sizeof set, "SET client_encoding TO '%s'", encoding);
    PQclear(PQexec(conn, set));
    PQclear(PQexec(conn, "SET standard_conforming_strings TO off"));
    PGresult *res = PQexec(conn, sql);
    int failed = PQresultStatus(res) != PGRES_TUPLES_OK;
    snprintf(out, cap, "%s", failed ? PQresultErrorMessage(res) : PQgetvalue(res, 0, 0));
    PQclear(res);
    PQfinish(conn);
    return failed;
}
