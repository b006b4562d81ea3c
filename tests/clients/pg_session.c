/* Runs a scripted libpq session, one step per argument, on one connection.
 *
 * pg_session STEP...
 *   exec:SQL                 PQexec
 *   params:SQL               PQexecParams without parameters
 *   params1:VALUE:SQL        PQexecParams with VALUE as $1 (VALUE has no ':')
 *   send:SQL                 PQsendQuery, then every PQgetResult
 *   sendparams:SQL           PQsendQueryParams without parameters, then results
 *   unread:SQL               PQsendQuery, its results left for the next step
 *   unreadparams:SQL         PQsendQueryParams, its results left unread
 *   unreadprepared:NAME      PQsendQueryPrepared, its results left unread
 *   prepare:NAME:SQL         PQprepare
 *   sendprepare:NAME:SQL     PQsendPrepare, then results
 *   execprepared:NAME        PQexecPrepared without parameters
 *   setenc:ENCODING          PQsetClientEncoding (libpq sends its own SET)
 *   connerr                  prints "CONNERR: " + PQerrorMessage
 *   null                     every checked entry with a NULL query
 *   nullconn                 PQexec and PQsendQuery on a NULL connection
 *   reconnect                PQfinish, then a new connection
 *   reset                    PQreset
 *   resetstart               PQresetStart, then PQresetPoll until it is done
 *   shell:COMMAND            system(COMMAND) (e.g. to change the database)
 * Each step prints "STEP: <n> <kind>" first; results as in pg_print.h; a
 * refused send prints "ERROR: - <PQerrorMessage>".
 * Exit status: 0 when every step ran, 2 on usage or connection errors.
 */
#include <libpq-fe.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg_print.h"

static PGconn *connect_or_die(void)
{
    PGconn *conn = PQconnectdb("");
    if (PQstatus(conn) != CONNECTION_OK) {
        print_line("CONNECT-FAILED: ", PQerrorMessage(conn));
        exit(2);
    }
    return conn;
}

static void show(PGconn *conn, PGresult *res)
{
    if (!res) {
        puts("RESULT: NULL");
        print_line("CONNERR: ", PQerrorMessage(conn));
        return;
    }
    print_result(conn, res);
    PQclear(res);
}

static void drain(PGconn *conn, int sent)
{
    if (!sent) {
        print_line("ERROR: - ", PQerrorMessage(conn));
        return;
    }
    PGresult *res;
    while ((res = PQgetResult(conn)) != NULL)
        show(conn, res);
}

/* Splits "NAME:REST" at the first ':'; NULL when there is none. */
static char *split(char *text)
{
    char *colon = strchr(text, ':');
    if (!colon)
        return NULL;
    *colon = '\0';
    return colon + 1;
}

static void null_queries(PGconn *conn)
{
    PGresult *res = PQexec(conn, NULL);
    printf("NULL-PQexec: %s\n", res ? PQresStatus(PQresultStatus(res)) : "NULL");
    PQclear(res);
    printf("NULL-PQsendQuery: %d\n", PQsendQuery(conn, NULL));
    res = PQexecParams(conn, NULL, 0, NULL, NULL, NULL, NULL, 0);
    printf("NULL-PQexecParams: %s\n", res ? PQresStatus(PQresultStatus(res)) : "NULL");
    PQclear(res);
    printf("NULL-PQsendQueryParams: %d\n",
           PQsendQueryParams(conn, NULL, 0, NULL, NULL, NULL, NULL, 0));
    res = PQprepare(conn, "pg_session_null", NULL, 0, NULL);
    printf("NULL-PQprepare: %s\n", res ? PQresStatus(PQresultStatus(res)) : "NULL");
    PQclear(res);
    printf("NULL-PQsendPrepare: %d\n", PQsendPrepare(conn, "pg_session_null", NULL, 0, NULL));
}

/* PQresetStart and PQresetPoll, waiting on the socket as libpq asks. */
static void reset_by_polling(PGconn *conn)
{
    if (!PQresetStart(conn)) {
        print_line("RESET: failed ", PQerrorMessage(conn));
        return;
    }
    PostgresPollingStatusType st = PGRES_POLLING_WRITING;
    while (st != PGRES_POLLING_OK && st != PGRES_POLLING_FAILED) {
        struct pollfd p = {.fd = PQsocket(conn),
                           .events = st == PGRES_POLLING_READING ? POLLIN : POLLOUT};
        poll(&p, 1, 10000);
        st = PQresetPoll(conn);
    }
    printf("RESET: %s\n", PQstatus(conn) == CONNECTION_OK ? "ok" : "failed");
}

static void null_connection(void)
{
    PGresult *res = PQexec(NULL, "SELECT 1");
    printf("NULLCONN-PQexec: %s\n", res ? PQresStatus(PQresultStatus(res)) : "NULL");
    PQclear(res);
    printf("NULLCONN-PQsendQuery: %d\n", PQsendQuery(NULL, "SELECT 1"));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: pg_session STEP...\n");
        return 2;
    }
    PGconn *conn = connect_or_die();
    for (int i = 1; i < argc; i++) {
        char *step = argv[i];
        char *arg = split(step);
        printf("STEP: %d %s\n", i, step);
        if (strcmp(step, "exec") == 0 && arg) {
            show(conn, PQexec(conn, arg));
        } else if (strcmp(step, "params") == 0 && arg) {
            show(conn, PQexecParams(conn, arg, 0, NULL, NULL, NULL, NULL, 0));
        } else if (strcmp(step, "params1") == 0 && arg && strchr(arg, ':')) {
            const char *value = arg, *sql = split(arg);
            show(conn, PQexecParams(conn, sql, 1, NULL, &value, NULL, NULL, 0));
        } else if (strcmp(step, "send") == 0 && arg) {
            drain(conn, PQsendQuery(conn, arg));
        } else if (strcmp(step, "sendparams") == 0 && arg) {
            drain(conn, PQsendQueryParams(conn, arg, 0, NULL, NULL, NULL, NULL, 0));
        } else if (strcmp(step, "unread") == 0 && arg) {
            printf("SENT: %d\n", PQsendQuery(conn, arg));
        } else if (strcmp(step, "unreadparams") == 0 && arg) {
            printf("SENT: %d\n", PQsendQueryParams(conn, arg, 0, NULL, NULL, NULL, NULL, 0));
        } else if (strcmp(step, "unreadprepared") == 0 && arg) {
            printf("SENT: %d\n", PQsendQueryPrepared(conn, arg, 0, NULL, NULL, NULL, 0));
        } else if (strcmp(step, "prepare") == 0 && arg && strchr(arg, ':')) {
            const char *name = arg, *sql = split(arg);
            show(conn, PQprepare(conn, name, sql, 0, NULL));
        } else if (strcmp(step, "sendprepare") == 0 && arg && strchr(arg, ':')) {
            const char *name = arg, *sql = split(arg);
            drain(conn, PQsendPrepare(conn, name, sql, 0, NULL));
        } else if (strcmp(step, "execprepared") == 0 && arg) {
            show(conn, PQexecPrepared(conn, arg, 0, NULL, NULL, NULL, 0));
        } else if (strcmp(step, "setenc") == 0 && arg) {
            printf("SETENC: %d\n", PQsetClientEncoding(conn, arg));
        } else if (strcmp(step, "connerr") == 0 && !arg) {
            print_line("CONNERR: ", PQerrorMessage(conn));
        } else if (strcmp(step, "null") == 0 && !arg) {
            null_queries(conn);
        } else if (strcmp(step, "nullconn") == 0 && !arg) {
            null_connection();
        } else if (strcmp(step, "reconnect") == 0 && !arg) {
            PQfinish(conn);
            conn = connect_or_die();
        } else if (strcmp(step, "reset") == 0 && !arg) {
            PQreset(conn);
            printf("RESET: %s\n", PQstatus(conn) == CONNECTION_OK ? "ok" : "failed");
        } else if (strcmp(step, "resetstart") == 0 && !arg) {
            reset_by_polling(conn);
        } else if (strcmp(step, "shell") == 0 && arg) {
            fflush(stdout);
            printf("SHELL: %d\n", system(arg));
        } else {
            fprintf(stderr, "pg_session: bad step %d: %s\n", i, argv[i]);
            return 2;
        }
        fflush(stdout);
    }
    PQfinish(conn);
    return 0;
}
