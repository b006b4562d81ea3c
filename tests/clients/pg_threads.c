/* Threads, each with its own connection, mixing blocked and ordinary queries.
 *
 * pg_threads THREADS ROUNDS
 * Run under the shim: every round of every thread sends a blocked PQexec
 * (its result kept alive for a while, so that the registry holds results of
 * several threads at once), a blocked PQsendQuery and an ordinary query, and
 * checks that each answer is its own: the blocked messages name the byte
 * offset that differs per thread.  Prints "FAIL: …" lines and, at the end,
 * "THREADS: <threads> x <rounds> ok" or "THREADS: <n> failures".
 * Exit status: 0 when all passed, 1 on failures, 2 on usage/connection errors.
 */
#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 16
#define KEPT 4 /* blocked results each thread keeps alive at once */

static int rounds;
static int failures;
static pthread_mutex_t failures_lock = PTHREAD_MUTEX_INITIALIZER;

static void fail(int thread, int round, const char *what, const char *got)
{
    pthread_mutex_lock(&failures_lock);
    failures++;
    printf("FAIL: thread %d round %d: %s: %s\n", thread, round, what, got ? got : "(null)");
    pthread_mutex_unlock(&failures_lock);
}

static int starts_with(const char *text, const char *prefix)
{
    return text && strncmp(text, prefix, strlen(prefix)) == 0;
}

static void *worker(void *arg)
{
    int thread = (int)(long)arg;
    PGconn *conn = PQconnectdb("");
    if (PQstatus(conn) != CONNECTION_OK) {
        fail(thread, 0, "connect", PQerrorMessage(conn));
        PQfinish(conn);
        return NULL;
    }
    PQclear(PQexec(conn, "SET client_encoding TO 'SJIS'"));
    PQclear(PQexec(conn, "SET standard_conforming_strings TO off"));

    /* The padding moves the finding's offset: the message says whose it is. */
    char attack[128], expect[64];
    snprintf(attack, sizeof attack, "SELECT /*%*s*/ '\x95\x5c' OR 1=1 --'", thread, "");
    /* The input runs as SQL from the space after the quote after 0x95 0x5c. */
    size_t quote = (size_t)(strchr(attack, '\'') - attack);
    snprintf(expect, sizeof expect, " at byte %zu ", quote + 4);

    PGresult *kept[KEPT] = {0};
    for (int round = 0; round < rounds; round++) {
        PGresult *res = PQexec(conn, attack);
        if (PQresultStatus(res) != PGRES_FATAL_ERROR)
            fail(thread, round, "blocked PQexec status", PQresStatus(PQresultStatus(res)));
        const char *primary = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
        if (!starts_with(primary, "quoteguard: blocked") || !strstr(primary, expect))
            fail(thread, round, "blocked PQexec message", primary);
        if (!starts_with(PQerrorMessage(conn), "ERROR:  quoteguard: blocked"))
            fail(thread, round, "PQerrorMessage after blocked PQexec", PQerrorMessage(conn));
        PQclear(kept[round % KEPT]);
        kept[round % KEPT] = res;

        if (PQsendQuery(conn, attack) != 0)
            fail(thread, round, "blocked PQsendQuery", "returned 1");
        if (!starts_with(PQerrorMessage(conn), "ERROR:  quoteguard: blocked") ||
            !strstr(PQerrorMessage(conn), expect))
            fail(thread, round, "PQerrorMessage after blocked PQsendQuery", PQerrorMessage(conn));

        char sql[64], want[16];
        snprintf(sql, sizeof sql, "SELECT %d", thread * 100000 + round);
        snprintf(want, sizeof want, "%d", thread * 100000 + round);
        res = PQexec(conn, sql);
        if (PQresultStatus(res) != PGRES_TUPLES_OK || strcmp(PQgetvalue(res, 0, 0), want) != 0)
            fail(thread, round, "ordinary query", PQresultErrorMessage(res));
        if (PQerrorMessage(conn)[0] != '\0')
            fail(thread, round, "PQerrorMessage after ordinary query", PQerrorMessage(conn));
        PQclear(res);
    }
    for (int i = 0; i < KEPT; i++) {
        if (kept[i] && !strstr(PQresultErrorMessage(kept[i]), expect))
            fail(thread, rounds, "kept result's message", PQresultErrorMessage(kept[i]));
        PQclear(kept[i]);
    }
    PQfinish(conn);
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc == 3 ? atoi(argv[1]) : 0;
    rounds = argc == 3 ? atoi(argv[2]) : 0;
    if (threads < 1 || threads > MAX_THREADS || rounds < 1) {
        fprintf(stderr, "usage: pg_threads THREADS(1-%d) ROUNDS\n", MAX_THREADS);
        return 2;
    }
    pthread_t ids[MAX_THREADS];
    for (int i = 0; i < threads; i++)
        if (pthread_create(&ids[i], NULL, worker, (void *)(long)i) != 0)
            return 2;
    for (int i = 0; i < threads; i++)
        pthread_join(ids[i], NULL);
    if (failures) {
        printf("THREADS: %d failures\n", failures);
        return 1;
    }
    printf("THREADS: %d x %d ok\n", threads, rounds);
    return 0;
}
