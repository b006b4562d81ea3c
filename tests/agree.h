/* The fast checker against the scalar reference, for the unit tests and
 * bench_checker --verify (needs lexer_internal.h and quoteguard.h). */
#ifndef QG_TESTS_AGREE_H
#define QG_TESTS_AGREE_H

#include <stdbool.h>
#include <string.h>

static inline bool same_result(const qg_result *a, const qg_result *b)
{
    size_t kept = a->count < QG_MAX_FINDINGS ? a->count : QG_MAX_FINDINGS;
    return a->verdict == b->verdict && a->count == b->count &&
           memcmp(a->findings, b->findings, kept * sizeof a->findings[0]) == 0;
}

/* Checks with the reference (result in *ref) and with the fast checker in
 * every build of the vector scans this CPU runs: all the same? */
static inline bool fast_agrees(const qg_context *ctx, const char *sql, size_t n, qg_result *ref)
{
    qg_force_reference(true);
    qg_check(ctx, sql, n, ref);
    qg_force_reference(false);
    bool same = true;
    for (int build = 0; build <= qg_cpu_vectors(); build++) {
        qg_result fast;
        qg_allow_vectors(build);
        qg_check(ctx, sql, n, &fast);
        same = same && same_result(&fast, ref);
    }
    qg_allow_vectors(QG_VECTOR_BUILDS - 1);
    return same;
}

#endif
