/*
 * What one check costs right after a round trip, and again at once (end
 * to end).  Between two queries a client sleeps in poll() until the
 * server answers, and meanwhile the caches, TLBs and branch predictors
 * serve other work: the shim's code and data come back from memory at every
 * query.  bench_paired shows the whole of that cost and the guest's noise
 * with it; this shows the checker's share alone, in nanoseconds.
 *
 *   bench_cold ROUNDS        connection from the PG* variables
 *   bench_cold --trace       no connection: for bench/lines_touched.sh
 *
 * For each statement, ROUNDS times: a round trip (PQexec of SELECT 1), then
 * one check as the guard makes it (encoding lookup, context, qg_check),
 * timed ("cold"), then the same check again ("warm").  For the statements
 * marked `rewrite` (a short literal with a doubled quote, pgbench_sjis's 4
 * KB Shift_JIS literal), the check and then rewrite mode's work on a query
 * sent with parameters (qg_rewrite_query into buffers on the stack, as the
 * front's).  The fronts' mixed corpus (bench/front_corpus.h) is timed per
 * dialect and literal kind, and all kinds in turn, as bench_front sends it:
 * a group's statements one after the other, one a round.  A round trip
 * followed by two clock readings gives the timer's own cost.  Prints one
 * line per statement or group with the medians and the 90th percentile of
 * the cold checks.
 *
 * --trace checks every statement of the corpus once, then each group's
 * statements once more, each after a store to a marker, so that a trace of
 * the memory accesses (valgrind --tool=lackey) shows what each check
 * touches: prints the marker's address, the texts' (which the program
 * writes just before it sends them) and a local variable's (the stack),
 * then the group of each check in order.
 */
#include <libpq-fe.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "front_corpus.h"
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

/* The fronts' corpus, escaped as libpq's PQescapeStringConn (a quote
 * doubled, standard_conforming_strings on) and libmariadb's
 * mysql_real_escape_string (a backslash before it) escape it on the
 * connection of its encoding, each Shift_JIS character copied whole: [0]
 * PostgreSQL's, [1] MariaDB's.  Its literals hold no other byte they
 * escape. */
static entry corpus[CORPUS];
static char corpus_sql[2][CORPUS][STATEMENT_MAX];
static struct statement corpus_checks[2][CORPUS];

static void escape_as_library(char *out, const char *raw, bool mysql, bool sjis)
{
    for (const unsigned char *p = (const unsigned char *)raw; *p; p++) {
        if (sjis && ((*p >= 0x81 && *p <= 0x9f) || (*p >= 0xe0 && *p <= 0xfc)) && p[1]) {
            *out++ = (char)*p++;
            *out++ = (char)*p;
            continue;
        }
        if (*p == '\'')
            *out++ = mysql ? '\\' : '\'';
        *out++ = (char)*p;
    }
    *out = '\0';
}

/* What is timed: one statement, or a group of the corpus's statements
 * (one dialect's, of one kind or of all), checked in turn. */
typedef struct group {
    char name[40];
    const struct statement *members[CORPUS];
    size_t count;
} group;
enum { CORPUS_GROUPS = 2 * (KINDS + 1), GROUPS = STATEMENTS + CORPUS_GROUPS };
static group groups[GROUPS];

static void build_groups(void)
{
    for (size_t k = 0; k < STATEMENTS; k++) {
        snprintf(groups[k].name, sizeof groups[k].name, "%s", statements[k].name);
        groups[k].members[0] = &statements[k];
        groups[k].count = 1;
    }
    build_corpus(corpus);
    group *g = &groups[STATEMENTS];
    for (int mysql = 0; mysql < 2; mysql++) {
        for (unsigned i = 0; i < CORPUS; i++) {
            bool sjis = corpus[i].kind == SJIS;
            char escaped[2 * STATEMENT_MAX + 1];
            escape_as_library(escaped, corpus[i].raw, mysql, sjis);
            if (corpus_statement(corpus_sql[mysql][i], &corpus[i], escaped) >= STATEMENT_MAX) {
                fprintf(stderr, "bench_cold: a corpus statement is too long\n");
                exit(1);
            }
            corpus_checks[mysql][i] = (struct statement){
                "corpus", mysql ? QG_DIALECT_MYSQL : QG_DIALECT_POSTGRES,
                mysql ? (sjis ? "sjis" : "utf8mb4") : (sjis ? "SJIS" : "UTF8"),
                mysql ? 0 : QG_STD_STRINGS, false, corpus_sql[mysql][i]};
        }
        for (int kind = 0; kind <= KINDS; kind++, g++) {
            snprintf(g->name, sizeof g->name, "front_%s_%s", mysql ? "my" : "pg",
                     kind == KINDS ? "mixed" : kind_names[kind]);
            for (unsigned i = 0; i < CORPUS; i++)
                if (kind == KINDS || corpus[i].kind == (text_kind)kind)
                    g->members[g->count++] = &corpus_checks[mysql][i];
        }
    }
}

static size_t mean_bytes(const group *g)
{
    size_t bytes = 0;
    for (size_t m = 0; m < g->count; m++)
        bytes += strlen(g->members[m]->sql);
    return bytes / g->count;
}

/* --trace: every corpus statement checked once, then each group's once
 * more, each after a store to `marker` (the order printed first, so that
 * no output falls between two stores). */
static int trace(void)
{
    static volatile unsigned marker;
    int local = 0;
    printf("marker %p\ntexts %p %zu\nstack %p\n", (void *)&marker, (void *)corpus_sql,
           sizeof corpus_sql, (void *)&local);
    unsigned unclean = 0;
    for (int mysql = 0; mysql < 2; mysql++)
        for (unsigned i = 0; i < CORPUS; i++)
            unclean += !as_shim(&corpus_checks[mysql][i]);
    for (size_t k = STATEMENTS; k < GROUPS; k++)
        for (size_t m = 0; m < groups[k].count; m++)
            printf("check %s\n", groups[k].name);
    fflush(stdout);
    for (size_t k = STATEMENTS; k < GROUPS; k++)
        for (size_t m = 0; m < groups[k].count; m++) {
            marker = marker + 1;
            unclean += !as_shim(groups[k].members[m]);
        }
    marker = marker + 1;
    if (unclean) {
        fprintf(stderr, "bench_cold: %u checks were not clean\n", unclean);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    bool tracing = argc == 2 && strcmp(argv[1], "--trace") == 0;
    long rounds = argc == 2 && !tracing ? strtol(argv[1], NULL, 10) : 0;
    if (rounds < 1 && !tracing) {
        fprintf(stderr, "usage: bench_cold ROUNDS (connection from the PG* variables) | "
                        "bench_cold --trace\n");
        return 2;
    }
    char literal[sizeof sjis_phrase * SJIS_PHRASES];
    sjis_literal_fill(literal);
    snprintf(sjis_select, sizeof sjis_select, SJIS_SELECT, 48213u, literal);
    build_groups();
    if (tracing)
        return trace();
    PGconn *conn = PQconnectdb("");
    if (PQstatus(conn) != CONNECTION_OK) {
        fprintf(stderr, "bench_cold: %s", PQerrorMessage(conn));
        return 1;
    }
    size_t n = (size_t)rounds;
    double *timer = malloc(n * sizeof *timer);
    double *cold = malloc(GROUPS * n * sizeof *cold);
    double *warm = malloc(GROUPS * n * sizeof *warm);
    if (!timer || !cold || !warm)
        return 1;
    unsigned unclean = 0;
    for (size_t i = 0; i < n; i++) {
        round_trip(conn);
        uint64_t t0 = now_ns();
        timer[i] = (double)(now_ns() - t0);
    }
    /* One group after the other, as a program that sends only its
     * statements: checks of others would warm or cool its code. */
    for (size_t k = 0; k < GROUPS; k++)
        for (size_t i = 0; i < n; i++) {
            const struct statement *st = groups[k].members[i % groups[k].count];
            round_trip(conn);
            uint64_t a = now_ns();
            unclean += !as_shim(st);
            uint64_t b = now_ns();
            unclean += !as_shim(st);
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
    for (size_t k = 0; k < GROUPS; k++) {
        double *c = cold + k * n, *w = warm + k * n;
        sort_values(c, n);
        sort_values(w, n);
        double cold_ns = percentile(c, n, 0.5), cold_p90 = percentile(c, n, 0.9);
        printf("cold %s bytes=%zu rounds=%zu cold_median_ns=%.0f cold_p90_ns=%.0f "
               "warm_median_ns=%.0f timer_ns=%.0f\n",
               groups[k].name, mean_bytes(&groups[k]), n, cold_ns, cold_p90,
               percentile(w, n, 0.5), timer_ns);
    }
    PQfinish(conn);
    free(timer);
    free(cold);
    free(warm);
    return 0;
}
