/* Every implementation of the checker against the scalar reference, for
 * the unit tests and bench_checker --verify (needs lexer_internal.h and
 * quoteguard.h). */
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

/* Checks with every implementation this CPU runs (src/core/vectors.c): the
 * reference (result in *ref) and each build of the vector scans.  All the
 * same?  The implementation that ran before runs again after. */
static inline bool fast_agrees(const qg_context *ctx, const char *sql, size_t n, qg_result *ref)
{
    int was = qg_vectors_in_use();
    bool same = true;
    for (int build = QG_VECTORS_REFERENCE; build <= qg_cpu_vectors(); build++) {
        qg_result fast;
        qg_allow_vectors(build);
        qg_check(ctx, sql, n, build == QG_VECTORS_REFERENCE ? ref : &fast);
        same = same && (build == QG_VECTORS_REFERENCE || same_result(&fast, ref));
    }
    qg_allow_vectors(was);
    return same;
}

#endif
