/* A C client running a mixed OLTP corpus, for counting instructions per
 * query under callgrind (bench/bench_fronts.sh): the same work with and
 * without the shim, at two query counts, so that start-up and connection
 * cancel out in the difference.
 *
 *   bench_front pg QUERIES          libpq, connection from PG* variables
 *   bench_front my QUERIES SOCKET   libmariadb, database "bench"
 *
 * The corpus of bench/front_corpus.h, escaped by the library's escaper
 * (PQescapeStringConn, mysql_real_escape_string) on the connection of its
 * encoding: one in UTF-8, one in Shift_JIS.  Query i runs statement
 * i % CORPUS, so QUERIES that are multiples of CORPUS run whole passes.
 * Prints "QUERIES ok".
 *
 *   bench_front pg-paired PAIRS          the same statements timed in pairs
 *   bench_front my-paired PAIRS SOCKET   (bench/paired.h), under the shim
 *
 * Each round sends statement i % CORPUS twice: through the functions the
 * shim interposes (PQsendQuery, PQgetResult, PQclear as pgbench calls
 * them; mysql_real_query) and through the library's own (its PQsendQuery
 * and PQclear; mysql_send_query and mysql_read_query_result, which
 * mysql_real_query calls), the order alternating; the statements are
 * escaped before the timing.  Prints the median latencies, the trimmed
 * mean of the pairs' differences (what the shim adds) with its 95 %
 * interval, and one client's throughput ratio.  BENCH_FRONT_KIND (ascii,
 * chinese, korean, sjis) keeps the statements of that literal kind only. */
#include <libpq-fe.h>
#include <mysql.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front_corpus.h"
#include "paired.h"

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "bench_front: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

static entry corpus[CORPUS];

static PGconn *pg_connect(const char *encoding)
{
    PGconn *conn = PQconnectdb("");
    if (PQstatus(conn) != CONNECTION_OK)
        die("cannot connect", PQerrorMessage(conn));
    if (PQsetClientEncoding(conn, encoding) != 0)
        die("cannot set the client encoding", encoding);
    return conn;
}

static void run_pg(long queries)
{
    PGconn *conns[2] = {pg_connect("UTF8"), pg_connect("SJIS")};
    char escaped[2 * STATEMENT_MAX + 1], sql[STATEMENT_MAX];
    for (long q = 0; q < queries; q++) {
        const entry *e = &corpus[q % CORPUS];
        PGconn *conn = conns[e->kind == SJIS];
        int error = 0;
        PQescapeStringConn(conn, escaped, e->raw, strlen(e->raw), &error);
        if (error || corpus_statement(sql, e, escaped) >= STATEMENT_MAX)
            die("cannot build a statement", e->raw);
        PGresult *res = PQexec(conn, sql);
        ExecStatusType status = PQresultStatus(res);
        if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK)
            die("query failed", PQerrorMessage(conn));
        PQclear(res);
    }
    PQfinish(conns[0]);
    PQfinish(conns[1]);
}

static MYSQL *my_connect(const char *socket, const char *charset)
{
    MYSQL *db = mysql_init(NULL);
    if (!db || !mysql_real_connect(db, NULL, "root", "", "bench", 0, socket, 0))
        die("cannot connect", db ? mysql_error(db) : NULL);
    if (mysql_set_character_set(db, charset) != 0)
        die("cannot set the character set", mysql_error(db));
    return db;
}

static void run_my(long queries, const char *socket)
{
    MYSQL *dbs[2] = {my_connect(socket, "utf8mb4"), my_connect(socket, "sjis")};
    char escaped[2 * STATEMENT_MAX + 1], sql[STATEMENT_MAX];
    for (long q = 0; q < queries; q++) {
        const entry *e = &corpus[q % CORPUS];
        MYSQL *db = dbs[e->kind == SJIS];
        mysql_real_escape_string(db, escaped, e->raw, strlen(e->raw));
        int len = corpus_statement(sql, e, escaped);
        if (len >= STATEMENT_MAX)
            die("cannot build a statement", e->raw);
        if (mysql_real_query(db, sql, (unsigned long)len) != 0)
            die("query failed", mysql_error(db));
        MYSQL_RES *res = mysql_store_result(db);
        if (!res && mysql_field_count(db) != 0)
            die("no result", mysql_error(db));
        mysql_free_result(res);
    }
    mysql_close(dbs[0]);
    mysql_close(dbs[1]);
}

/* ------------------------------------------------------------------ paired */

typedef int (*pq_send_fn)(PGconn *, const char *);
typedef void (*pq_clear_fn)(PGresult *);
typedef int (*my_send_fn)(MYSQL *, const char *, unsigned long);
typedef my_bool (*my_read_fn)(MYSQL *);

static void *own_symbol(const char *library, const char *name, void *interposed)
{
    void *sym = paired_own_symbol(library, name, interposed);
    if (!sym)
        die("cannot find the library's own entry point (run under LD_PRELOAD=libquoteguard.so)",
            name);
    return sym;
}

/* The corpus's statements, escaped on their connections before the timing. */
static char statements[CORPUS][STATEMENT_MAX];

static bool pg_paired_query(PGconn *conn, const char *sql, bool direct, pq_send_fn send_direct,
                            pq_clear_fn clear_direct)
{
    if (!(direct ? send_direct : PQsendQuery)(conn, sql))
        return false;
    bool ok = true;
    PGresult *res;
    while ((res = PQgetResult(conn))) {
        ExecStatusType status = PQresultStatus(res);
        ok = ok && (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK);
        (direct ? clear_direct : PQclear)(res);
    }
    return ok;
}

static bool my_paired_query(MYSQL *db, const char *sql, bool direct, my_send_fn send_direct,
                            my_read_fn read_direct)
{
    unsigned long len = (unsigned long)strlen(sql);
    if (direct ? send_direct(db, sql, len) || read_direct(db) : mysql_real_query(db, sql, len) != 0)
        return false;
    MYSQL_RES *res = mysql_store_result(db);
    if (!res && mysql_field_count(db) != 0)
        return false;
    mysql_free_result(res);
    return true;
}

static void run_paired(bool pg, long pairs, const char *socket)
{
    PGconn *conns[2] = {NULL, NULL};
    MYSQL *dbs[2] = {NULL, NULL};
    pq_send_fn pq_send_direct = NULL;
    pq_clear_fn pq_clear_direct = NULL;
    my_send_fn my_send_direct = NULL;
    my_read_fn my_read_direct = NULL;
    if (pg) {
        conns[0] = pg_connect("UTF8");
        conns[1] = pg_connect("SJIS");
        pq_send_direct = (pq_send_fn)own_symbol("libpq.so.5", "PQsendQuery", (void *)PQsendQuery);
        pq_clear_direct = (pq_clear_fn)own_symbol("libpq.so.5", "PQclear", (void *)PQclear);
    } else {
        dbs[0] = my_connect(socket, "utf8mb4");
        dbs[1] = my_connect(socket, "sjis");
        my_send_direct = (my_send_fn)own_symbol("libmariadb.so.3", "mysql_send_query",
                                                (void *)mysql_send_query);
        my_read_direct = (my_read_fn)own_symbol("libmariadb.so.3", "mysql_read_query_result",
                                                (void *)mysql_read_query_result);
    }
    char escaped[2 * STATEMENT_MAX + 1];
    for (unsigned i = 0; i < CORPUS; i++) {
        const entry *e = &corpus[i];
        size_t len = strlen(e->raw);
        int error = 0;
        if (pg)
            PQescapeStringConn(conns[e->kind == SJIS], escaped, e->raw, len, &error);
        else
            mysql_real_escape_string(dbs[e->kind == SJIS], escaped, e->raw, (unsigned long)len);
        if (error || corpus_statement(statements[i], e, escaped) >= STATEMENT_MAX)
            die("cannot build a statement", e->raw);
    }

    const char *only = getenv("BENCH_FRONT_KIND");
    int kind = only ? -1 : KINDS;
    for (int k = 0; only && k < KINDS; k++)
        if (strcmp(only, kind_names[k]) == 0)
            kind = k;
    if (kind < 0)
        die("BENCH_FRONT_KIND: not ascii, chinese, korean or sjis", only);
    /* The statements run in turn: all of them, or those of one kind. */
    unsigned order[CORPUS], count = 0;
    for (unsigned i = 0; i < CORPUS; i++)
        if (kind == KINDS || corpus[i].kind == (text_kind)kind)
            order[count++] = i;

    enum { WARMUP = 2 * CORPUS };
    size_t n = (size_t)pairs;
    double *t[2] = {malloc(n * sizeof(double)), malloc(n * sizeof(double))};
    double *scratch = malloc(n * sizeof(double));
    if (!t[0] || !t[1] || !scratch)
        die("out of memory", NULL);
    for (long i = -WARMUP; i < pairs; i++) {
        unsigned which = order[(i + WARMUP) % count];
        bool sjis = corpus[which].kind == SJIS;
        for (int k = 0; k < 2; k++) {
            bool direct = (k ^ (int)((i + WARMUP) / count)) & 1;
            uint64_t start = paired_now_ns();
            bool ok = pg ? pg_paired_query(conns[sjis], statements[which], direct, pq_send_direct,
                                           pq_clear_direct)
                         : my_paired_query(dbs[sjis], statements[which], direct, my_send_direct,
                                           my_read_direct);
            uint64_t end = paired_now_ns();
            if (!ok)
                die("query failed", pg ? PQerrorMessage(conns[sjis]) : mysql_error(dbs[sjis]));
            if (i >= 0)
                t[!direct][i] = (double)(end - start);
        }
    }
    paired_difference shim = paired_compare(t[0], t[1], n, scratch);
    printf("%s %s pairs=%ld direct_median_us=%.2f shim_median_us=%.2f added_us=%.3f "
           "added_ci95_us=%.3f ratio=%.4f\n",
           pg ? "pg" : "mysql", only ? only : "mixed", pairs, paired_median(t[0], n, scratch) / 1e3,
           paired_median(t[1], n, scratch) / 1e3, shim.mean / 1e3, shim.ci95 / 1e3, shim.ratio);
    free(t[0]);
    free(t[1]);
    free(scratch);
    for (int c = 0; c < 2; c++) {
        if (pg)
            PQfinish(conns[c]);
        else
            mysql_close(dbs[c]);
    }
}

int main(int argc, char **argv)
{
    bool my = argc > 1 && (strcmp(argv[1], "my") == 0 || strcmp(argv[1], "my-paired") == 0);
    if (argc < 3 || (my && argc < 4))
        die("usage: bench_front pg|pg-paired QUERIES | bench_front my|my-paired QUERIES SOCKET",
            NULL);
    long queries = strtol(argv[2], NULL, 10);
    build_corpus(corpus);
    if (strcmp(argv[1], "pg") == 0)
        run_pg(queries);
    else if (strcmp(argv[1], "my") == 0)
        run_my(queries, argv[3]);
    else if (strcmp(argv[1], "pg-paired") == 0 || strcmp(argv[1], "my-paired") == 0) {
        if (queries < 100)
            die("pairs: at least 100", argv[2]);
        run_paired(!my, queries, my ? argv[3] : NULL);
        return 0;
    } else
        die("unknown client", argv[1]);
    printf("%ld ok\n", queries);
    return 0;
}
