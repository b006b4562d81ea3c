/* A libpq connection whose socket is duplicated, and a Query written raw
 * through the duplicate: the bytes libpq's front never sees.
 *
 * pg_dup HOW SQL
 *   HOW: dup | dup2 | dup3 | F_DUPFD | F_DUPFD_CLOEXEC | SCM_RIGHTS, or fdopen |
 *   splice: the socket itself through stdio or a pipe (raw_dup.h)
 * Sets standard_conforming_strings off and client_encoding SJIS through
 * PQexec, writes Query(SQL) through the duplicate and reads its answer
 * there (ROW: first column, ERROR: message), then runs SELECT 'alive'
 * through libpq (ROW: alive).  WRITE-FAILED: strerror when the write fails.
 */
#include <libpq-fe.h>
#include <stdint.h>
#include <stdlib.h>

#include "raw_dup.h"
#include "pg_print.h"

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Reads messages until ReadyForQuery, printing rows and errors. */
static void answers(int fd)
{
    for (;;) {
        unsigned char head[5];
        if (!read_exact(fd, head, 5))
            return;
        uint32_t len = be32(head + 1);
        unsigned char *body = malloc(len);
        if (!body || len < 4 || !read_exact(fd, body, len - 4))
            exit(2);
        if (head[0] == 'D' && len >= 10) {
            uint32_t size = be32(body + 2);
            printf("ROW: %.*s\n", (int)size, (const char *)body + 6);
        } else if (head[0] == 'E') {
            for (unsigned char *f = body; f < body + len - 4 && *f; f += strlen((char *)f) + 1)
                if (*f == 'M')
                    printf("ERROR: %s\n", (const char *)f + 1);
        }
        free(body);
        if (head[0] == 'Z')
            return;
    }
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    PGconn *conn = PQconnectdb("");
    if (PQstatus(conn) != CONNECTION_OK)
        return 2;
    PQclear(PQexec(conn, "SET standard_conforming_strings TO off"));
    PQclear(PQexec(conn, "SET client_encoding TO 'SJIS'"));
    int copy = duplicate(PQsocket(conn), argv[1]);
    if (copy < 0)
        return 2;
    size_t sql_len = strlen(argv[2]);
    unsigned char *msg = malloc(sql_len + 6);
    if (!msg)
        return 2;
    uint32_t len = (uint32_t)sql_len + 5;
    msg[0] = 'Q';
    msg[1] = (unsigned char)(len >> 24), msg[2] = (unsigned char)(len >> 16);
    msg[3] = (unsigned char)(len >> 8), msg[4] = (unsigned char)len;
    memcpy(msg + 5, argv[2], sql_len + 1);
    if (raw_write(copy, argv[1], msg, sql_len + 6))
        answers(copy);
    free(msg);
    release(copy, argv[1]);
    PGresult *res = PQexec(conn, "SELECT 'alive'");
    if (PQresultStatus(res) == PGRES_TUPLES_OK)
        printf("ROW: %s\n", PQgetvalue(res, 0, 0));
    PQclear(res);
    PQfinish(conn);
    return 0;
}
