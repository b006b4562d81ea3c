/* What query shapes cost: CPU time per query of the checker alone, of the
 * shape fingerprint, and of the whole guard with shapes off and with shapes
 * enforced against a profile that knows every shape (the clean path).
 *
 *   bench_shape [--runs N] [--queries N]
 *
 * Built and run by `make bench-shape` (and `make bench`).
 * The queries are sysbench-OLTP-like statements with random values (PG and
 * MySQL), plus a 50-element IN list and a 100-row INSERT; each run times
 * every method over the same queries, methods interleaved; the best run of
 * each is printed (ns per query and ratio to the checker alone). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "guard.h"
#include "shape.h"
#include "shape_profile.h"

#define QUERY_MAX 4096

typedef struct bench_query {
    qg_query q;
    char text[QUERY_MAX];
} bench_query;

static unsigned rng_state = 12345;

static unsigned rnd(unsigned n)
{
    rng_state = rng_state * 1103515245u + 12345u;
    return (rng_state >> 8) % n;
}

/* One OLTP-like statement with fresh values into out. */
static size_t make_query(char *out, unsigned kind)
{
    unsigned id = rnd(1000000), k = rnd(100000);
    switch (kind) {
    case 0:
        return (size_t)snprintf(out, QUERY_MAX, "SELECT c FROM sbtest1 WHERE id=%u", id);
    case 1:
        return (size_t)snprintf(out, QUERY_MAX,
                                "SELECT c FROM sbtest1 WHERE id BETWEEN %u AND %u ORDER BY c", id,
                                id + 99);
    case 2:
        return (size_t)snprintf(out, QUERY_MAX,
                                "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN %u AND %u", id, id + 99);
    case 3:
        return (size_t)snprintf(out, QUERY_MAX, "UPDATE sbtest1 SET k=k+1 WHERE id=%u", id);
    case 4:
        return (size_t)snprintf(out, QUERY_MAX,
                                "UPDATE sbtest1 SET c='%08u-%08u-%08u-%08u-%08u' WHERE id=%u", k,
                                id, k, id, k, id);
    case 5:
        return (size_t)snprintf(out, QUERY_MAX, "DELETE FROM sbtest1 WHERE id=%u", id);
    case 6:
        return (size_t)snprintf(out, QUERY_MAX,
                                "INSERT INTO sbtest1 (id, k, c, pad) VALUES (%u, %u, "
                                "'%08u-%08u-%08u-%08u', '%08u-%08u')",
                                id, k, k, id, k, id, k, id);
    case 7: {
        size_t n = (size_t)snprintf(out, QUERY_MAX, "SELECT id, c FROM sbtest1 WHERE id IN (");
        for (int i = 0; i < 50; i++)
            n += (size_t)snprintf(out + n, QUERY_MAX - n, "%s%u", i ? ", " : "", rnd(1000000));
        return n + (size_t)snprintf(out + n, QUERY_MAX - n, ")");
    }
    default: {
        size_t n = (size_t)snprintf(out, QUERY_MAX, "INSERT INTO log (t, who, what) VALUES ");
        for (int i = 0; i < 100 && n + 64 < QUERY_MAX; i++)
            n += (size_t)snprintf(out + n, QUERY_MAX - n, "%s(%u, 'user%u', 'event %u')",
                                  i ? ", " : "", rnd(100000), rnd(1000), rnd(50));
        return n;
    }
    }
}

static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

enum { M_CHECK, M_SHAPE, M_SHAPE_LOOKUP, M_GUARD_OFF, M_GUARD_SHAPES, M_COUNT };
static const char *const method_names[M_COUNT] = {
    "qg_check (the checker alone)",
    "qg_shape_compute (fingerprint)",
    "shape + profile lookup",
    "guard, shapes off",
    "guard, shapes enforce (all known)",
};

static volatile uint64_t sink;

static double run_method(int method, bench_query *qs, size_t count, const qg_settings *off,
                         const qg_settings *on, const qg_context *ctx)
{
    double start = cpu_ns();
    qg_decision d;
    for (size_t i = 0; i < count; i++) {
        const qg_query *q = &qs[i].q;
        const qg_context *c = &ctx[q->dialect];
        switch (method) {
        case M_CHECK:
            sink += qg_check(c, q->sql, q->len, NULL);
            break;
        case M_SHAPE:
            sink += qg_shape_compute(c, q->sql, q->len, NULL, 0);
            break;
        case M_SHAPE_LOOKUP:
            sink += qg_shape_profile_contains(on, qg_shape_compute(c, q->sql, q->len, NULL, 0));
            break;
        case M_GUARD_OFF:
            sink += qg_guard_query_with(off, q, &d);
            break;
        default:
            sink += qg_guard_query_with(on, q, &d);
            break;
        }
    }
    return (cpu_ns() - start) / (double)count;
}

int main(int argc, char **argv)
{
    int runs = 5;
    size_t count = 20000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--queries") == 0 && i + 1 < argc)
            count = (size_t)atol(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_shape [--runs N] [--queries N]\n");
            return 2;
        }
    }
    if (runs < 1 || count < 1) {
        fprintf(stderr, "bench_shape: --runs and --queries must be positive\n");
        return 2;
    }

    char profile[] = "/tmp/qg-bench-shape-XXXXXX";
    int fd = mkstemp(profile);
    if (fd < 0) {
        perror("mkstemp");
        return 1;
    }
    close(fd);
    qg_settings off, on;
    qg_settings_defaults(&off);
    qg_settings_set_program(&off, "bench_shape");
    off.log_sink = QG_LOG_STDERR;
    on = off;
    on.shapes = QG_SHAPES_LEARN;
    snprintf(on.shapes_file, sizeof on.shapes_file, "%s", profile);

    qg_context ctx[2];
    qg_context_init(&ctx[QG_DIALECT_POSTGRES], QG_DIALECT_POSTGRES,
                    qg_encoding_find(QG_DIALECT_POSTGRES, "UTF8"), QG_STD_STRINGS);
    qg_context_init(&ctx[QG_DIALECT_MYSQL], QG_DIALECT_MYSQL,
                    qg_encoding_find(QG_DIALECT_MYSQL, "utf8mb4"), 0);

    bench_query *qs = calloc(count, sizeof *qs);
    if (!qs) {
        perror("calloc");
        return 1;
    }
    size_t bytes = 0;
    for (size_t i = 0; i < count; i++) {
        bench_query *b = &qs[i];
        /* Mostly short OLTP statements; one in 50 a long list. */
        unsigned kind = rnd(50) == 0 ? 7 + rnd(2) : rnd(7);
        b->q.dialect = i % 2 ? QG_DIALECT_MYSQL : QG_DIALECT_POSTGRES;
        b->q.encoding_name = b->q.dialect == QG_DIALECT_MYSQL ? "utf8mb4" : "UTF8";
        b->q.flags = b->q.dialect == QG_DIALECT_POSTGRES ? QG_STD_STRINGS : 0;
        b->q.api = "bench";
        b->q.len = make_query(b->text, kind);
        b->q.sql = b->text;
        bytes += b->q.len;
    }
    /* Learn every shape once, then enforce: the clean path is measured. */
    qg_decision d;
    for (size_t i = 0; i < count; i++)
        qg_guard_query_with(&on, &qs[i].q, &d);
    on.shapes = QG_SHAPES_ENFORCE;

    double best[M_COUNT];
    for (int m = 0; m < M_COUNT; m++)
        best[m] = 1e300;
    for (int r = -1; r < runs; r++) { /* run -1 warms caches up and is not counted */
        for (int m = 0; m < M_COUNT; m++) {
            double ns = run_method(m, qs, count, &off, &on, ctx);
            if (r >= 0 && ns < best[m])
                best[m] = ns;
        }
    }
    size_t blocked = 0;
    for (size_t i = 0; i < count; i++)
        blocked += !qg_guard_query_with(&on, &qs[i].q, &d);

    printf("%zu queries (PG and MySQL, %.0f bytes on average), best of %d runs, CPU time\n",
           count, (double)bytes / (double)count, runs);
    printf("%-36s %10s %8s\n", "method", "ns/query", "ratio");
    for (int m = 0; m < M_COUNT; m++)
        printf("%-36s %10.1f %8.2f\n", method_names[m], best[m], best[m] / best[M_CHECK]);
    printf("guard with shapes enforced / guard without: %.2fx (+%.0f ns per query); "
           "%zu of %zu queries blocked (must be 0)\n",
           best[M_GUARD_SHAPES] / best[M_GUARD_OFF], best[M_GUARD_SHAPES] - best[M_GUARD_OFF],
           blocked, count);
    unlink(profile);
    free(qs);
    return blocked ? 1 : 0;
}
