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
 * both block-skip builds (the one this CPU runs, and SSE2): all the same? */
static inline bool fast_agrees(const qg_context *ctx, const char *sql, size_t n, qg_result *ref)
{
    qg_result fast, sse2;
    qg_check(ctx, sql, n, &fast);
    qg_force_sse2(true);
    qg_check(ctx, sql, n, &sse2);
    qg_force_sse2(false);
    qg_force_reference(true);
    qg_check(ctx, sql, n, ref);
    qg_force_reference(false);
    return same_result(&fast, ref) && same_result(&sse2, ref);
}

#endif
