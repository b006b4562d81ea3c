/*
 * qg_check: no crash, deterministic, findings inside the query, verdict and
 * count consistent with the findings and the configured actions, every NUL
 * byte found; the reference implementation agrees.
 * Input: encoding selector, flags byte, two action bytes, then the query.
 */
#include "fuzz_common.h"
#include "lexer_internal.h"

/* Pure ASCII without a backslash or NUL reads the same byte-wise and by
 * characters: only unterminated tokens can be found there. */
static bool plain_ascii(const unsigned char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] == 0 || s[i] >= 0x80 || s[i] == '\\')
            return false;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    qg_dialect dialect;
    const qg_encoding *enc = fuzz_pick_encoding(data[0], &dialect);
    unsigned flags = data[1] & (QG_STD_STRINGS | QG_NO_BACKSLASH_ESCAPES | QG_ANSI_QUOTES);
    qg_context ctx;
    qg_context_init(&ctx, dialect, enc, flags);
    /* Half of the inputs keep the defaults; the others pick every action. */
    unsigned action_bits = (unsigned)data[2] | (unsigned)data[3] << 8;
    bool custom = action_bits & 1;
    if (custom)
        for (int r = 1; r < QG_REASON_COUNT; r++)
            ctx.action[r] = (qg_action)((action_bits >> (2 * r - 1)) & 3) % 3;

    size_t len = size - 4;
    unsigned char *sql = fuzz_exact_copy(data + 4, len);
    const char *name = qg_encoding_name(enc);

    qg_result first, again;
    memset(&first, 0xa5, sizeof first); /* stale contents must not leak through */
    memset(&again, 0x5a, sizeof again);
    qg_verdict v1 = qg_check(&ctx, (const char *)sql, len, &first);
    qg_verdict v2 = qg_check(&ctx, (const char *)sql, len, &again);
    qg_verdict v3 = qg_check(&ctx, (const char *)sql, len, NULL);

    FUZZ_CHECK(v1 == first.verdict, "%s: returned %d, stored %d", name, v1, first.verdict);
    FUZZ_CHECK(v1 == v2 && v1 == v3, "%s: verdicts %d %d %d for one query", name, v1, v2, v3);
    FUZZ_CHECK(first.count == again.count, "%s: counts %u and %u", name, first.count, again.count);
    size_t kept = first.count < QG_MAX_FINDINGS ? first.count : QG_MAX_FINDINGS;
    FUZZ_CHECK(memcmp(first.findings, again.findings, kept * sizeof first.findings[0]) == 0,
               "%s: findings differ between two runs", name);

    qg_action worst = QG_ACTION_IGNORE;
    for (size_t i = 0; i < kept; i++) {
        const qg_finding *f = &first.findings[i];
        FUZZ_CHECK(f->reason > QG_REASON_NONE && f->reason < QG_REASON_COUNT, "%s: reason %d",
                   name, (int)f->reason);
        FUZZ_CHECK(f->action == ctx.action[f->reason] && f->action != QG_ACTION_IGNORE,
                   "%s: %s has action %d, configured %d", name, qg_reason_name(f->reason),
                   f->action, ctx.action[f->reason]);
        FUZZ_CHECK(f->offset < len, "%s: %s at %zu of %zu", name, qg_reason_name(f->reason),
                   f->offset, len);
        FUZZ_CHECK(f->span_start <= f->span_end && f->span_end <= len,
                   "%s: %s span [%zu,%zu) of %zu", name, qg_reason_name(f->reason), f->span_start,
                   f->span_end, len);
        /* A structure mismatch may part before S's token starts. */
        if (f->span_start < f->span_end && f->reason != QG_REASON_STRUCTURE_MISMATCH)
            FUZZ_CHECK(f->span_start <= f->offset && f->offset <= f->span_end,
                       "%s: %s at %zu outside its span [%zu,%zu)", name,
                       qg_reason_name(f->reason), f->offset, f->span_start, f->span_end);
        if (f->action > worst)
            worst = f->action;
    }
    FUZZ_CHECK((first.count == 0) == (v1 == QG_VERDICT_CLEAN), "%s: %u findings, verdict %d",
               name, first.count, v1);
    if (worst == QG_ACTION_BLOCK)
        FUZZ_CHECK(v1 == QG_VERDICT_BLOCK, "%s: a blocking finding, verdict %d", name, v1);
    if (first.count <= QG_MAX_FINDINGS)
        FUZZ_CHECK(v1 == (worst == QG_ACTION_BLOCK   ? QG_VERDICT_BLOCK
                          : worst == QG_ACTION_LOG ? QG_VERDICT_LOG
                                                   : QG_VERDICT_CLEAN),
                   "%s: verdict %d, worst action %d", name, v1, worst);
    /* Every NUL byte is a finding, wherever it is. */
    if (!custom && memchr(sql, 0, len)) {
        bool nul_found = first.count > QG_MAX_FINDINGS;
        for (size_t i = 0; i < kept; i++)
            nul_found |= first.findings[i].reason == QG_REASON_NUL_BYTE;
        FUZZ_CHECK(nul_found, "%s flags %u: NUL byte in the query, no nul_byte finding", name,
                   flags);
    }
    /* The reference implementation, and the narrower builds of the vector
     * scans, find exactly the same. */
    qg_result ref;
    qg_allow_vectors(QG_VECTORS_REFERENCE);
    qg_check(&ctx, (const char *)sql, len, &ref);
    qg_allow_vectors(QG_VECTORS_WIDEST);
    FUZZ_CHECK(ref.verdict == v1 && ref.count == first.count &&
                   memcmp(ref.findings, first.findings, kept * sizeof ref.findings[0]) == 0,
               "%s flags %u: fast %d/%u findings, reference %d/%u", name, flags, v1, first.count,
               ref.verdict, ref.count);
    for (int build = QG_VECTORS_SSE2; build < qg_cpu_vectors(); build++) {
        qg_result narrow;
        qg_allow_vectors(build);
        qg_check(&ctx, (const char *)sql, len, &narrow);
        qg_allow_vectors(QG_VECTORS_WIDEST);
        FUZZ_CHECK(narrow.verdict == v1 && narrow.count == first.count &&
                       memcmp(narrow.findings, first.findings, kept * sizeof narrow.findings[0]) ==
                           0,
                   "%s flags %u: fast %d/%u findings, build %d %d/%u", name, flags, v1,
                   first.count, build, narrow.verdict, narrow.count);
    }
    if (plain_ascii(sql, len))
        for (size_t i = 0; i < kept; i++)
            FUZZ_CHECK(first.findings[i].reason == QG_REASON_UNTERMINATED,
                       "%s flags %u: %s in plain ASCII", name, flags,
                       qg_reason_name(first.findings[i].reason));
    free(sql);
    return 0;
}
