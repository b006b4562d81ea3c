/*
 * The shim's added latency per query on a real connection, measured in
 * pairs (end to end).  Run under LD_PRELOAD=libquoteguard.so.
 *
 * One process, one connection, one query shape.  Each pair sends the same
 * kind of query twice, back to back: once through the entry points the shim
 * interposes (what the application calls) and once through libpq's or
 * libmariadb's own functions, found with dlsym on the library's handle, which
 * the shim never sees.  The order within a pair alternates.  Two queries a
 * few hundred microseconds apart see the same machine, so the guest's drift
 * over seconds, which swamps a 1 % difference between whole runs, cancels in
 * each pair's difference.
 *
 * The API is each benchmark client's: pgbench's (PQsendQuery, PQgetResult,
 * PQclear) and sysbench's MariaDB driver's (mysql_real_query,
 * mysql_store_result, mysql_free_result).  Inside libpq, PQexec calls
 * PQsendQuery through the PLT, as mysql_real_query calls mysql_send_query
 * and mysql_read_query_result: the direct path therefore calls those inner
 * functions, the ones the shim would otherwise see.
 *
 *   bench_paired pg SHAPE PAIRS        connection from PG* variables
 *   bench_paired mysql SHAPE PAIRS SOCKET
 *
 * SHAPE: select (pgbench -S: an integer literal), string (a point select
 * with a short string literal of plain ASCII text, which rewrite mode sends
 * as it is unless QUOTEGUARD_REWRITE=all), quoted (the same literal with a
 * doubled quote, which rewrite mode sends as a parameter, PG), sjis
 * (pgbench_sjis's point select with a 4 KB Shift_JIS literal, PG,
 * client_encoding SJIS).  Prints one line: shape, pairs, median direct and
 * shim latency, the trimmed mean of the pair differences with its 95 %
 * interval, and the throughput ratio of one client (direct / shim time).
 *
 * For PG queries with a string literal each round has two more queries,
 * both sent directly with PQsendQueryParams and the literal as a
 * parameter: the statement with "$1" alone, whose difference to the direct
 * query is what the extended protocol itself costs (protocol_us), and the
 * statement as rewrite mode sends it, "$1" padded with a space for every
 * further character of the literal so that error positions stay the
 * original's, whose difference to the first is what that padding costs the
 * server (padding_us).  What the shim adds in rewrite mode beyond both is
 * its own work.
 */
#include <libpq-fe.h>
#include <mysql.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paired.h"
#include "sjis_literal.h"

static void die(const char *what)
{
    fprintf(stderr, "bench_paired: %s\n", what);
    exit(1);
}

static void *own_symbol(const char *library, const char *name, void *interposed)
{
    void *sym = paired_own_symbol(library, name, interposed);
    if (!sym)
        die("cannot find the library's own entry point (run under LD_PRELOAD=libquoteguard.so)");
    return sym;
}

/* ------------------------------------------------------------------ queries */

static char sjis_literal[sizeof sjis_phrase * SJIS_PHRASES + 2];

static void format_query(char *buf, size_t cap, bool pg, const char *shape, unsigned key)
{
    if (!strcmp(shape, "select"))
        snprintf(buf, cap,
                 pg ? "SELECT abalance FROM pgbench_accounts WHERE aid = %u;"
                    : "SELECT c FROM sbtest1 WHERE id=%u",
                 key);
    else if (!strcmp(shape, "string"))
        snprintf(buf, cap,
                 pg ? "SELECT abalance FROM pgbench_accounts WHERE aid = %u AND filler <> 'k%u';"
                    : "SELECT c FROM sbtest1 WHERE id=%u AND pad <> 'k%u'",
                 key, key);
    else if (!strcmp(shape, "quoted"))
        snprintf(buf, cap,
                 "SELECT abalance FROM pgbench_accounts WHERE aid = %u AND filler <> 'k''%u';", key,
                 key);
    else
        snprintf(buf, cap, SJIS_SELECT, key, sjis_literal);
}

/* The PG statement of `shape` with its literal as parameter $1 (in *value);
 * `padded`: as rewrite mode writes it, "$1" and a space for each further
 * character of the literal, quotes included (the Shift_JIS characters are
 * two bytes each). */
static void format_params(char *buf, size_t cap, char *value, size_t value_cap, const char *shape,
                          unsigned key, bool padded)
{
    size_t chars;
    if (!strcmp(shape, "string")) {
        snprintf(value, value_cap, "k%u", key);
        chars = strlen(value) + 2;
    } else if (!strcmp(shape, "quoted")) {
        snprintf(value, value_cap, "k'%u", key);
        chars = strlen(value) + 3; /* the quote is doubled in the literal */
    } else {
        snprintf(value, value_cap, "%sx", sjis_literal);
        chars = strlen(sjis_literal) / 2 + 3;
    }
    snprintf(buf, cap, "SELECT abalance FROM pgbench_accounts WHERE aid = %u AND filler <> $1%*s;",
             key, padded ? (int)chars - 2 : 0, "");
}

/* ------------------------------------------------------------------- fronts */

typedef int (*pq_send_fn)(PGconn *, const char *);
typedef int (*pq_send_params_fn)(PGconn *, const char *, int, const Oid *, const char *const *,
                                 const int *, const int *, int);
typedef void (*pq_clear_fn)(PGresult *);
typedef int (*my_send_fn)(MYSQL *, const char *, unsigned long);
typedef my_bool (*my_read_fn)(MYSQL *);

static PGconn *pg;
static pq_send_fn pq_send_direct;
static pq_send_params_fn pq_send_params_direct;
static pq_clear_fn pq_clear_direct;
static MYSQL *my;
static my_send_fn my_send_direct;
static my_read_fn my_read_direct;

/* The way a query goes: through the shim, around it, or around it with its
 * literal as a parameter, in a statement of "$1" alone or padded. */
typedef enum path { PATH_DIRECT, PATH_SHIM, PATH_PARAMS, PATH_PADDED, PATHS } path;

/* One query through pgbench's calls; false when it fails. */
static bool pg_run(const char *sql, const char *value, path via)
{
    bool direct = via != PATH_SHIM;
    bool sent = via >= PATH_PARAMS
                    ? pq_send_params_direct(pg, sql, 1, NULL, &value, NULL, NULL, 0)
                    : (direct ? pq_send_direct : PQsendQuery)(pg, sql);
    if (!sent)
        return false;
    bool ok = true;
    PGresult *res;
    while ((res = PQgetResult(pg))) {
        ok = ok && PQresultStatus(res) == PGRES_TUPLES_OK;
        (direct ? pq_clear_direct : PQclear)(res);
    }
    return ok;
}

static bool my_run(const char *sql, path via)
{
    bool direct = via == PATH_DIRECT;
    unsigned long len = (unsigned long)strlen(sql);
    if (direct ? my_send_direct(my, sql, len) || my_read_direct(my)
               : mysql_real_query(my, sql, len) != 0)
        return false;
    MYSQL_RES *res = mysql_store_result(my);
    if (!res)
        return false;
    mysql_free_result(res);
    return true;
}

static void pg_open(const char *shape)
{
    pg = PQconnectdb("");
    if (PQstatus(pg) != CONNECTION_OK)
        die(PQerrorMessage(pg));
    if (!strcmp(shape, "sjis") && PQsetClientEncoding(pg, "SJIS") != 0)
        die("cannot set client_encoding SJIS");
    pq_send_direct = (pq_send_fn)own_symbol("libpq.so.5", "PQsendQuery", (void *)PQsendQuery);
    pq_clear_direct = (pq_clear_fn)own_symbol("libpq.so.5", "PQclear", (void *)PQclear);
    pq_send_params_direct = (pq_send_params_fn)own_symbol("libpq.so.5", "PQsendQueryParams",
                                                          (void *)PQsendQueryParams);
}

static void my_open(const char *socket_path)
{
    my = mysql_init(NULL);
    if (!my || !mysql_real_connect(my, NULL, "root", "", "sbtest", 0, socket_path, 0))
        die(my ? mysql_error(my) : "mysql_init failed");
    my_send_direct = (my_send_fn)own_symbol("libmariadb.so.3", "mysql_send_query",
                                            (void *)mysql_send_query);
    my_read_direct = (my_read_fn)own_symbol("libmariadb.so.3", "mysql_read_query_result",
                                            (void *)mysql_read_query_result);
}

int main(int argc, char **argv)
{
    bool is_pg = argc == 4 && !strcmp(argv[1], "pg");
    bool is_my = argc == 5 && !strcmp(argv[1], "mysql");
    const char *shape = argc > 2 ? argv[2] : "";
    long rounds = argc > 3 ? atol(argv[3]) : 0;
    bool known = !strcmp(shape, "select") || !strcmp(shape, "string") ||
                 (is_pg && (!strcmp(shape, "quoted") || !strcmp(shape, "sjis")));
    if ((!is_pg && !is_my) || !known || rounds < 100)
        die("usage: bench_paired pg select|string|quoted|sjis PAIRS (>= 100)\n"
            "       bench_paired mysql select|string PAIRS SOCKET");
    sjis_literal_fill(sjis_literal);
    if (is_pg)
        pg_open(shape);
    else
        my_open(argv[4]);

    /* PG queries with a literal also go with it as a parameter. */
    int ways = is_pg && strcmp(shape, "select") ? PATHS : 2;
    enum { WARMUP = 500 };
    size_t n = (size_t)rounds;
    double *t[PATHS], *scratch = malloc(n * sizeof *scratch);
    for (int w = 0; w < PATHS; w++)
        if (!(t[w] = malloc(n * sizeof *t[w])))
            die("out of memory");
    if (!scratch)
        die("out of memory");
    static char sql[sizeof sjis_literal + 256], value[sizeof sjis_literal + 16];
    unsigned seed = 12345;
    for (long i = -WARMUP; i < rounds; i++) {
        for (int k = 0; k < ways; k++) {
            /* The two simple queries, then the two with a parameter, each
             * pair in one order and then the other: every way follows a
             * simple query as often as an extended one.  (A simple query
             * after an extended one also drops the server's unnamed
             * statement, in exec_simple_query; where the ways took each
             * place in turn, the direct query came after more of those,
             * and the shim read 0.2-0.7 us faster than no shim.) */
            bool swapped = (i + WARMUP) & 1;
            path via = (path)(k / 2 * 2 + ((k & 1) ^ swapped));
            seed = seed * 1103515245u + 12345u;
            unsigned key = 1 + (seed >> 8) % 10000;
            if (via >= PATH_PARAMS)
                format_params(sql, sizeof sql, value, sizeof value, shape, key,
                              via == PATH_PADDED);
            else
                format_query(sql, sizeof sql, is_pg, shape, key);
            uint64_t start = paired_now_ns();
            bool ok = is_pg ? pg_run(sql, value, via) : my_run(sql, via);
            uint64_t end = paired_now_ns();
            if (!ok)
                die(is_pg ? PQerrorMessage(pg) : mysql_error(my));
            if (i >= 0)
                t[via][i] = (double)(end - start);
        }
    }

    paired_difference shim = paired_compare(t[PATH_DIRECT], t[PATH_SHIM], n, scratch);
    printf("%s %s pairs=%ld direct_median_us=%.2f shim_median_us=%.2f added_us=%.3f "
           "added_ci95_us=%.3f ratio=%.4f",
           argv[1], shape, rounds, paired_median(t[PATH_DIRECT], n, scratch) / 1e3,
           paired_median(t[PATH_SHIM], n, scratch) / 1e3, shim.mean / 1e3, shim.ci95 / 1e3,
           shim.ratio);
    if (ways == PATHS) {
        paired_difference protocol = paired_compare(t[PATH_DIRECT], t[PATH_PARAMS], n, scratch);
        paired_difference padding = paired_compare(t[PATH_PARAMS], t[PATH_PADDED], n, scratch);
        printf(" protocol_us=%.3f protocol_ci95_us=%.3f padding_us=%.3f padding_ci95_us=%.3f",
               protocol.mean / 1e3, protocol.ci95 / 1e3, padding.mean / 1e3, padding.ci95 / 1e3);
    }
    printf("\n");
    for (int w = 0; w < PATHS; w++)
        free(t[w]);
    free(scratch);
    if (is_pg)
        PQfinish(pg);
    else
        mysql_close(my);
    return 0;
}
