/*
 * What one check costs right after a round trip, and again at once (end
 * to end).  Between two queries a client sleeps in poll() until the
 * server answers, and meanwhile the caches, TLBs and branch predictors
 * serve other work: the shim's code and data come back from memory at every
 * query.  bench_paired shows the whole of that cost and the guest's noise
 * with it; this shows the checker's share alone, in nanoseconds.
 *
 *   bench_cold ROUNDS        connection from the PG* variables
 *
 * For each statement, ROUNDS times: a round trip (PQexec of SELECT 1), then
 * one check as the guard makes it (encoding lookup, context, qg_check),
 * timed ("cold"), then the same check again ("warm").  For the statements
 * marked `rewrite` (a short literal with a doubled quote, pgbench_sjis's 4
 * KB Shift_JIS literal), the check and then rewrite mode's work on a query
 * sent with parameters (qg_rewrite_query into buffers on the stack, as the
 * front's).  A round trip followed by two clock readings gives the timer's
 * own cost.  Prints one line per statement with the medians and the 90th
 * percentile of the cold checks.
 */
#include <libpq-fe.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "quoteguard.h"
#include "rewriter.h"
#include "sjis_literal.h"

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* pgbench_sjis's point select, written by main(). */
static char sjis_select[sizeof sjis_phrase * SJIS_PHRASES + 128];

static const struct statement {
    const char *name;
    qg_dialect dialect;
    const char *encoding;
    unsigned flags;
    bool rewrite;
    const char *sql;
} statements[] = {
    {"pg_select", QG_DIALECT_POSTGRES, "UTF8", QG_STD_STRINGS, false,
     "SELECT abalance FROM pgbench_accounts WHERE aid = 48213;"},
    {"pg_string", QG_DIALECT_POSTGRES, "UTF8", QG_STD_STRINGS, false,
     "SELECT abalance FROM pgbench_accounts WHERE aid = 48213 AND filler <> 'k48213';"},
    {"my_select", QG_DIALECT_MYSQL, "utf8mb4", 0, false, "SELECT c FROM sbtest1 WHERE id=4821"},
    {"my_string", QG_DIALECT_MYSQL, "utf8mb4", 0, false,
     "SELECT c FROM sbtest1 WHERE id=4821 AND pad <> 'k4821'"},
    {"pg_update", QG_DIALECT_POSTGRES, "UTF8", QG_STD_STRINGS, false,
     "UPDATE pgbench_accounts SET abalance = abalance + 4821, filler = 'k4821 x' "
     "WHERE aid = 48213 AND bid = 'b1';"},
    {"pg_insert", QG_DIALECT_POSTGRES, "UTF8", QG_STD_STRINGS, false,
     "INSERT INTO customer (id, name, city, note, created_at) VALUES (48213, 'Ana Lopez', "
     "'Valparaiso', 'called twice about the invoice, wants a copy by mail', "
     "'2024-01-01 10:00:00');"},
    /* a comment after its strings: the quick scan reads it all, then gives up */
    {"pg_comment", QG_DIALECT_POSTGRES, "UTF8", QG_STD_STRINGS, false,
     "SELECT count(*) FROM events WHERE kind = 'abcdef' AND created_at > '2024-01-01' "
     "-- dashboard\n"},
    /* rewrite mode, a literal with a doubled quote: sent as a parameter */
    {"pg_quoted_rewrite", QG_DIALECT_POSTGRES, "UTF8", QG_STD_STRINGS, true,
     "SELECT abalance FROM pgbench_accounts WHERE aid = 48213 AND filler <> 'it''s k48213';"},
    {"pg_sjis_rewrite", QG_DIALECT_POSTGRES, "SJIS", QG_STD_STRINGS, true, sjis_select},
};
#define STATEMENTS (sizeof statements / sizeof statements[0])

static qg_verdict check_as_guard(const struct statement *st)
{
    qg_context ctx;
    qg_context_init(&ctx, st->dialect, qg_encoding_find(st->dialect, st->encoding), st->flags);
    qg_result result;
    return qg_check(&ctx, st->sql, strlen(st->sql), &result);
}

/* Rewrite mode on a statement that passed: true when it was rewritten. */
static bool rewrite_as_front(const struct statement *st)
{
    qg_context ctx;
    qg_context_init(&ctx, st->dialect, qg_encoding_find(st->dialect, st->encoding), st->flags);
    size_t len = strlen(st->sql);
    const char *params[64];
    char text[sizeof sjis_select], values[sizeof sjis_select];
    if (len >= sizeof text)
        return false;
    qg_rewrite out = {.params = params, .params_cap = sizeof params / sizeof params[0],
                      .text = text, .text_cap = sizeof text,
                      .values = values, .values_cap = sizeof values};
    unsigned options = QG_REWRITE_PLAIN_AS_IS | QG_REWRITE_SERVER_UTF8;
    return qg_rewrite_query(&ctx, options, st->sql, len, &out) == QG_REWRITE_DONE;
}

/* What the shim does for the statement: false when it is not clean (or,
 * marked `rewrite`, not rewritten). */
static bool as_shim(const struct statement *st)
{
    return check_as_guard(st) == QG_VERDICT_CLEAN && (!st->rewrite || rewrite_as_front(st));
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* v sorted by sort_values. */
static double percentile(const double *v, size_t n, double p)
{
    return v[(size_t)(p * (double)(n - 1))];
}

static void sort_values(double *v, size_t n)
{
    qsort(v, n, sizeof *v, by_value);
}

static void round_trip(PGconn *conn)
{
    PGresult *res = PQexec(conn, "SELECT 1");
    if (PQresultStatus(res) != PGRES_TUPLES_OK) {
        fprintf(stderr, "bench_cold: %s", PQerrorMessage(conn));
        exit(1);
    }
    PQclear(res);
}

int main(int argc, char **argv)
{
    long rounds = argc == 2 ? strtol(argv[1], NULL, 10) : 0;
    if (rounds < 1) {
        fprintf(stderr, "usage: bench_cold ROUNDS (connection from the PG* variables)\n");
        return 2;
    }
    char literal[sizeof sjis_phrase * SJIS_PHRASES];
    sjis_literal_fill(literal);
    snprintf(sjis_select, sizeof sjis_select, SJIS_SELECT, 48213u, literal);
    PGconn *conn = PQconnectdb("");
    if (PQstatus(conn) != CONNECTION_OK) {
        fprintf(stderr, "bench_cold: %s", PQerrorMessage(conn));
        return 1;
    }
    size_t n = (size_t)rounds;
    double *timer = malloc(n * sizeof *timer);
    double *cold = malloc(STATEMENTS * n * sizeof *cold);
    double *warm = malloc(STATEMENTS * n * sizeof *warm);
    if (!timer || !cold || !warm)
        return 1;
    unsigned unclean = 0;
    for (size_t i = 0; i < n; i++) {
        round_trip(conn);
        uint64_t t0 = now_ns();
        timer[i] = (double)(now_ns() - t0);
    }
    /* One statement after the other, as a program that sends only that
     * one: checks of other statements would warm or cool its code. */
    for (size_t k = 0; k < STATEMENTS; k++)
        for (size_t i = 0; i < n; i++) {
            round_trip(conn);
            uint64_t a = now_ns();
            unclean += !as_shim(&statements[k]);
            uint64_t b = now_ns();
            unclean += !as_shim(&statements[k]);
            uint64_t c = now_ns();
            cold[k * n + i] = (double)(b - a);
            warm[k * n + i] = (double)(c - b);
        }
    if (unclean) {
        fprintf(stderr, "bench_cold: %u checks were not clean or not rewritten\n", unclean);
        return 1;
    }
    sort_values(timer, n);
    double timer_ns = percentile(timer, n, 0.5);
    for (size_t k = 0; k < STATEMENTS; k++) {
        double *c = cold + k * n, *w = warm + k * n;
        sort_values(c, n);
        sort_values(w, n);
        double cold_ns = percentile(c, n, 0.5), cold_p90 = percentile(c, n, 0.9);
        printf("cold %s bytes=%zu rounds=%zu cold_median_ns=%.0f cold_p90_ns=%.0f "
               "warm_median_ns=%.0f timer_ns=%.0f\n",
               statements[k].name, strlen(statements[k].sql), n, cold_ns, cold_p90,
               percentile(w, n, 0.5), timer_ns);
    }
    PQfinish(conn);
    free(timer);
    free(cold);
    free(warm);
    return 0;
}
