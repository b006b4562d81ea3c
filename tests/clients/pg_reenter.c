/* A libpq client that sends a query while another is in flight on the same
 * thread: from a signal handler, or from a notice processor.
 *
 * pg_reenter signal|notice ENCODING SQL
 *
 * Opens two connections with the PG* environment.  The second gets
 * client_encoding ENCODING and standard_conforming_strings off (with
 * backslash_quote on and escape_string_warning off, as a legacy program
 * sets them).  Then, on the first connection:
 *   signal  PQexec("SELECT pg_sleep(1)"), with SIGALRM arriving after
 *           200 ms; the handler runs SQL with PQexec on the second
 *   notice  PQexec of a DO block that raises a NOTICE; the notice processor
 *           runs SQL with PQexec on the second
 * Output (pg_print.h): "INNER:" then SQL's result, "OUTER:" then the outer
 * query's, then "FIRED: N", how many times the inner query ran.
 * Exit status: 0 when both connections worked, 2 otherwise.
 */
#include <libpq-fe.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "pg_print.h"

static PGconn *inner_conn;
static const char *inner_sql;
static volatile sig_atomic_t fired;

/* Not async-signal-safe, as the programs this stands for are not: the
 * signal arrives while the main line waits in poll(). */
static void run_inner(void)
{
    fired++;
    puts("INNER:");
    PGresult *res = PQexec(inner_conn, inner_sql);
    print_result(inner_conn, res);
    PQclear(res);
    fflush(stdout);
}

static void on_alarm(int sig)
{
    (void)sig;
    run_inner();
}

static void on_notice(void *arg, const char *message)
{
    (void)arg;
    (void)message;
    run_inner();
}

static PGconn *connect_or_die(void)
{
    PGconn *conn = PQconnectdb("");
    if (PQstatus(conn) != CONNECTION_OK) {
        print_line("CONNECT-FAILED: ", PQerrorMessage(conn));
        exit(2);
    }
    return conn;
}

static void setup(PGconn *conn, const char *sql)
{
    PGresult *res = PQexec(conn, sql);
    if (PQresultStatus(res) != PGRES_COMMAND_OK) {
        print_result(conn, res);
        exit(2);
    }
    PQclear(res);
}

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[1], "signal") != 0 && strcmp(argv[1], "notice") != 0)) {
        fprintf(stderr, "usage: pg_reenter signal|notice ENCODING SQL\n");
        return 2;
    }
    PGconn *outer = connect_or_die();
    inner_conn = connect_or_die();
    inner_sql = argv[3];
    char set[128];
    snprintf(set, sizeof set, "SET client_encoding TO '%s'", argv[2]);
    setup(inner_conn, set);
    setup(inner_conn, "SET standard_conforming_strings TO off");
    setup(inner_conn, "SET backslash_quote TO on");
    setup(inner_conn, "SET escape_string_warning TO off");

    const char *outer_sql;
    if (strcmp(argv[1], "signal") == 0) {
        struct sigaction sa = {.sa_handler = on_alarm};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGALRM, &sa, NULL);
        struct itimerval in_200ms = {.it_value = {.tv_sec = 0, .tv_usec = 200000}};
        setitimer(ITIMER_REAL, &in_200ms, NULL);
        outer_sql = "SELECT pg_sleep(1)";
    } else {
        PQsetNoticeProcessor(outer, on_notice, NULL);
        outer_sql = "DO $$BEGIN RAISE NOTICE 'quoteguard re-entry'; END$$";
    }
    PGresult *res = PQexec(outer, outer_sql);
    puts("OUTER:");
    print_result(outer, res);
    PQclear(res);
    printf("FIRED: %d\n", (int)fired);
    PQfinish(inner_conn);
    PQfinish(outer);
    return 0;
}
