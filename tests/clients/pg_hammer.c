/* Many threads, each with its own libpq connection, mixing attacks and
 * ordinary queries; optionally forking and exec'ing while they run.
 *
 * pg_hammer THREADS ROUNDS [FORKS [EXEC]]
 *
 * Every round of every thread (client_encoding SJIS,
 * standard_conforming_strings off) sends:
 *   - an attack through PQexec: addslashes output of 95 27 (SJIS 0x95 0x5c
 *     swallows the backslash); it must come back as a FATAL_ERROR result
 *     whose message starts with "quoteguard:";
 *   - the same attack through PQsendQuery: it must return 0 with the message
 *     in PQerrorMessage;
 *   - an ordinary query with SJIS text (trail bytes 0x5c included) escaped by
 *     PQescapeStringConn: the server must echo it byte for byte;
 *   - an ordinary PQexecParams: the answer must be the thread's own number.
 * Every 8 rounds a thread closes its connection and opens a new one.
 * FORKS > 0: while the threads run, the main thread forks that many
 * children, one after the other; each opens a new connection, must block an
 * attack and answer an ordinary query, and must finish within 20 s (a lock
 * a worker held at fork time would hang it).
 * EXEC = 1: at the end a child execs this program ("2 2 0 0"); it inherits
 * LD_PRELOAD and must pass on its own.
 * Prints "FAIL: …" lines and then
 *   "HAMMER: T threads x R rounds: A attacks blocked, C clean ok, F forks ok, E exec ok, N failures".
 * Exit status: 0 when nothing failed, 1 on failures, 2 on usage errors.
 */
#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64
/* Connections come and go while other threads query. */
#define RECONNECT_EVERY 8

static int rounds;
static int failures, attacks_blocked, clean_ok;

static void fail(int thread, int round, const char *what, const char *got)
{
    __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
    /* one write per line: threads and children share stdout */
    char line[512];
    int n = snprintf(line, sizeof line, "FAIL: [%d] thread %d round %d: %s: %.300s\n",
                     (int)getpid(), thread, round, what, got ? got : "(null)");
    fwrite(line, 1, n < (int)sizeof line ? (size_t)n : sizeof line - 1, stdout);
    fflush(stdout);
}

static int starts_with(const char *text, const char *prefix)
{
    return text && strncmp(text, prefix, strlen(prefix)) == 0;
}

/* "SELECT 'tag<95 5c 27> OR 1=1 --'": input 95 27 after addslashes. */
static void attack_sql(char *out, size_t cap, int thread)
{
    snprintf(out, cap, "SELECT 't%d\x95\x5c' OR 1=1 --'", thread);
}

static PGconn *open_sjis(int thread)
{
    PGconn *conn = PQconnectdb("");
    if (PQstatus(conn) != CONNECTION_OK) {
        fail(thread, 0, "connect", PQerrorMessage(conn));
        PQfinish(conn);
        return NULL;
    }
    static const char *const setup[] = {"SET client_encoding TO 'SJIS'",
                                        "SET standard_conforming_strings TO off",
                                        "SET escape_string_warning TO off"};
    for (size_t i = 0; i < sizeof setup / sizeof setup[0]; i++) {
        PGresult *res = PQexec(conn, setup[i]);
        if (PQresultStatus(res) != PGRES_COMMAND_OK)
            fail(thread, 0, setup[i], PQresultErrorMessage(res));
        PQclear(res);
    }
    return conn;
}

/* One round of attacks and ordinary queries on conn. */
static void one_round(PGconn *conn, int thread, int round)
{
    char attack[96];
    attack_sql(attack, sizeof attack, thread);

    PGresult *res = PQexec(conn, attack);
    if (PQresultStatus(res) == PGRES_FATAL_ERROR &&
        starts_with(PQresultErrorMessage(res), "ERROR:  quoteguard: blocked") &&
        starts_with(PQerrorMessage(conn), "ERROR:  quoteguard: blocked"))
        __atomic_add_fetch(&attacks_blocked, 1, __ATOMIC_RELAXED);
    else
        fail(thread, round, "attack through PQexec not blocked",
             PQresultStatus(res) == PGRES_FATAL_ERROR ? PQresultErrorMessage(res)
                                                      : PQresStatus(PQresultStatus(res)));
    PQclear(res);

    if (PQsendQuery(conn, attack) == 0 && starts_with(PQerrorMessage(conn), "ERROR:  quoteguard: blocked")) {
        __atomic_add_fetch(&attacks_blocked, 1, __ATOMIC_RELAXED);
    } else {
        fail(thread, round, "attack through PQsendQuery not blocked", PQerrorMessage(conn));
        while ((res = PQgetResult(conn)) != NULL)
            PQclear(res);
    }

    /* SJIS text: ソ (83 5c), 表 (95 5c), a quote and a backslash. */
    char text[96], escaped[200], sql[256];
    snprintf(text, sizeof text, "\x83\x5c%d'\x95\x5c\\%d\x95\x5c", thread, round);
    int error = 0;
    PQescapeStringConn(conn, escaped, text, strlen(text), &error);
    snprintf(sql, sizeof sql, "SELECT '%s'", escaped);
    res = PQexec(conn, sql);
    if (!error && PQresultStatus(res) == PGRES_TUPLES_OK && strcmp(PQgetvalue(res, 0, 0), text) == 0)
        __atomic_add_fetch(&clean_ok, 1, __ATOMIC_RELAXED);
    else
        fail(thread, round, "SJIS text query", PQresultErrorMessage(res));
    PQclear(res);

    char number[32];
    snprintf(number, sizeof number, "%d", thread * 100000 + round);
    const char *values[1] = {number};
    res = PQexecParams(conn, "SELECT $1::int + 0", 1, NULL, values, NULL, NULL, 0);
    if (PQresultStatus(res) == PGRES_TUPLES_OK && strcmp(PQgetvalue(res, 0, 0), number) == 0)
        __atomic_add_fetch(&clean_ok, 1, __ATOMIC_RELAXED);
    else
        fail(thread, round, "PQexecParams", PQresultErrorMessage(res));
    PQclear(res);
}

static void *worker(void *arg)
{
    int thread = (int)(long)arg;
    PGconn *conn = open_sjis(thread);
    if (!conn)
        return NULL;
    for (int round = 0; round < rounds; round++) {
        one_round(conn, thread, round);
        if (round % RECONNECT_EVERY == RECONNECT_EVERY - 1 && round + 1 < rounds) {
            PQfinish(conn);
            if (!(conn = open_sjis(thread)))
                return NULL;
        }
    }
    PQfinish(conn);
    return NULL;
}

/* A forked child: new connection, one round, exit status = its failures. */
static void child_round(int child)
{
    failures = 0; /* the child's own: not an earlier child's, counted by the parent */
    alarm(20);
    int thread = 1000 + child;
    PGconn *conn = open_sjis(thread);
    if (conn) {
        one_round(conn, thread, 0);
        PQfinish(conn);
    }
    fflush(stdout);
    _exit(failures ? 1 : 0);
}

/* Waits for pid; true when it exited with status 0. */
static int child_passed(pid_t pid, const char *what, int index)
{
    int status;
    if (waitpid(pid, &status, 0) != pid) {
        fail(index, 0, what, "waitpid failed");
        return 0;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 1;
    char why[64];
    if (WIFSIGNALED(status))
        snprintf(why, sizeof why, "killed by signal %d%s", WTERMSIG(status),
                 WTERMSIG(status) == SIGALRM ? " (hung)" : "");
    else
        snprintf(why, sizeof why, "exit status %d", WEXITSTATUS(status));
    fail(index, 0, what, why);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 5) {
        fprintf(stderr, "usage: pg_hammer THREADS ROUNDS [FORKS [EXEC]]\n");
        return 2;
    }
    int threads = atoi(argv[1]);
    rounds = atoi(argv[2]);
    int forks = argc > 3 ? atoi(argv[3]) : 0;
    int do_exec = argc > 4 && atoi(argv[4]) == 1;
    if (threads < 1 || threads > MAX_THREADS || rounds < 1 || forks < 0) {
        fprintf(stderr, "usage: pg_hammer THREADS(1-%d) ROUNDS [FORKS [EXEC]]\n", MAX_THREADS);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);

    pthread_t ids[MAX_THREADS];
    for (int i = 0; i < threads; i++)
        if (pthread_create(&ids[i], NULL, worker, (void *)(long)i) != 0)
            return 2;
    int forks_ok = 0;
    for (int i = 0; i < forks; i++) {
        nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0)
            child_round(i);
        forks_ok += pid > 0 && child_passed(pid, "forked child", i);
    }
    for (int i = 0; i < threads; i++)
        pthread_join(ids[i], NULL);

    int exec_ok = 0;
    if (do_exec) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            execl(argv[0], argv[0], "2", "2", "0", "0", (char *)NULL);
            _exit(127);
        }
        exec_ok = pid > 0 && child_passed(pid, "exec'd child", 0);
    }
    printf("HAMMER: %d threads x %d rounds: %d attacks blocked, %d clean ok, %d forks ok, "
           "%d exec ok, %d failures\n",
           threads, rounds, attacks_blocked, clean_ok, forks_ok, exec_ok, failures);
    return failures ? 1 : 0;
}
