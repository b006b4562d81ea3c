/* The one place that picks which implementation of the scans runs and
 * calls through it: the scalar reference or a build of the vector scans
 * (src/core/block_skip.c and quick_scan.c, built for SSE2, AVX2 and
 * AVX-512), each a
 * complete table (lexer_internal.h, qg_scans), the widest the CPU has,
 * chosen once per process.  Tests narrow it to compare them all: in process with
 * qg_allow_vectors, a whole process (a real client under the shim) with
 * QUOTEGUARD_FORCE_VECTORS=reference|sse2|avx2|avx512. */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "encoding_tables.h"
#include "hot.h"
#include "lexer_internal.h"
#include "pg_state.h"
#include "quoteguard.h"

int qg_cpu_vectors(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    static int widest = -1; /* unknown yet; races only store the same answer */
    int found = __atomic_load_n(&widest, __ATOMIC_RELAXED);
    if (found < 0) {
        __builtin_cpu_init();
        found = QG_VECTORS_SSE2;
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2") &&
            __builtin_cpu_supports("pclmul"))
            found = __builtin_cpu_supports("avx512bw") ? QG_VECTORS_AVX512 : QG_VECTORS_AVX2;
        __atomic_store_n(&widest, found, __ATOMIC_RELAXED);
    }
    return found;
#else
    return QG_VECTORS_SSE2; /* the narrowest: on x86-64 only are there wider */
#endif
}

static const char *const build_names[QG_IMPLEMENTATIONS] = {"reference", "sse2", "avx2", "avx512"};

const char *qg_vectors_name(int build)
{
    return build >= 0 && build < QG_IMPLEMENTATIONS ? build_names[build] : "?";
}

int qg_vectors_named(const char *name)
{
    for (int build = 0; name && build < QG_IMPLEMENTATIONS; build++)
        if (strcmp(name, build_names[build]) == 0)
            return build;
    return -1;
}

/* The widest build the environment lets run (any build when unset). */
static int forced_widest(void)
{
    int named = qg_vectors_named(secure_getenv("QUOTEGUARD_FORCE_VECTORS"));
    return named < 0 ? QG_VECTORS_WIDEST : named;
}

static int widest_allowed = -1; /* -1: the environment not read yet */
int qg_vectors_picked = -1;     /* -1: not picked yet; races only store the same answer */

/* The widest implementation that can run here and is not turned off for a
 * test. */
static int widest_runnable(void)
{
    int allowed = __atomic_load_n(&widest_allowed, __ATOMIC_RELAXED);
    if (allowed < 0) {
        allowed = forced_widest();
        __atomic_store_n(&widest_allowed, allowed, __ATOMIC_RELAXED);
    }
    int found = qg_cpu_vectors();
    return found < allowed ? found : allowed;
}

int qg_pick_vectors(void)
{
    int in_use = widest_runnable();
    __atomic_store_n(&qg_vectors_picked, in_use, __ATOMIC_RELAXED);
    return in_use;
}

int qg_allow_vectors(int widest)
{
    int forced = forced_widest();
    __atomic_store_n(&widest_allowed, widest < forced ? widest : forced, __ATOMIC_RELAXED);
    return qg_pick_vectors();
}

/* The reference implementation: the lexer reads every byte. */
static qg_quick_reading settles_nothing(const qg_context *ctx, const char *sql, size_t len)
{
    (void)ctx, (void)sql, (void)len;
    return QG_QUICK_UNSETTLED;
}

static qg_quick_reading settles_no_utf8(const qg_context *ctx, const encoding_dfa_t *dfa,
                                        const char *sql, size_t len)
{
    (void)ctx, (void)dfa, (void)sql, (void)len;
    return QG_QUICK_UNSETTLED;
}

static bool no_pair_letters(const encoding_dfa_t *dfa, const unsigned char *s, size_t len,
                            unsigned char *copy)
{
    (void)dfa, (void)s, (void)len, (void)copy;
    return false;
}

static void skips_nothing(qg_lexer *lx)
{
    (void)lx;
}

static size_t counts_nothing(const encoding_dfa_t *dfa, const unsigned char *s, size_t pos,
                             size_t limit, size_t *chars)
{
    (void)dfa, (void)s, (void)limit, (void)chars;
    return pos;
}

#ifndef __SSE2__
/* The quick scan's classes of bytes: a single quote, a dash (two make a
 * comment a quote could hide in), a hash (MySQL's comment), and what needs
 * the lexer in any case. */
enum { QUICK_QUOTE = 1, QUICK_DASH = 2, QUICK_HASH = 4, QUICK_OTHER = 8 };

static unsigned quick_class(unsigned char c)
{
    switch (c) {
    case '\'':
        return QUICK_QUOTE;
    case '-':
        return QUICK_DASH;
    case '#':
        return QUICK_HASH;
    case 0:
    case '"':
    case '`':
    case '\\':
    case '$':
    case '/':
        return QUICK_OTHER;
    default:
        return c >= 0x80 ? QUICK_OTHER : 0;
    }
}

/* Without SSE2 the narrowest build is this byte loop, which settles only
 * text without a backslash, slash or comment where there are quotes. */
static qg_quick_reading quick_scan_bytes(const qg_context *ctx, const char *sql, size_t len)
{
    (void)ctx;
    unsigned quotes = 0, comment = 0, other = 0, last = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned c = quick_class((unsigned char)sql[i]);
        quotes += c & QUICK_QUOTE;
        comment |= (c & QUICK_HASH) | (c & last & QUICK_DASH);
        other |= c & QUICK_OTHER;
        last = c;
    }
    /* An odd count leaves the last string open; a quote in a comment would
     * be miscounted. */
    return !other && (!quotes || (!comment && quotes % 2 == 0)) ? QG_QUICK_CLEAN
                                                                : QG_QUICK_UNSETTLED;
}
#endif

static const qg_scans implementations[QG_IMPLEMENTATIONS] = {
    [QG_VECTORS_REFERENCE] = {settles_nothing, settles_no_utf8, no_pair_letters, settles_nothing,
                              skips_nothing, counts_nothing, qg_pg_may_set_bytes},
#ifdef __SSE2__
    [QG_VECTORS_SSE2] = {qg_quick_scan_sse2, settles_no_utf8, no_pair_letters, settles_nothing,
                         qg_skip_quiet_sse2, counts_nothing, qg_pg_may_set_sse2},
#else
    [QG_VECTORS_SSE2] = {quick_scan_bytes, settles_no_utf8, no_pair_letters, settles_nothing,
                         skips_nothing, counts_nothing, qg_pg_may_set_bytes},
#endif
#if defined(__x86_64__) && defined(__GNUC__)
    [QG_VECTORS_AVX2] = {qg_quick_scan_avx2, qg_quick_scan_utf8_avx2, qg_pair_letters_avx2,
                         qg_quick_scan_letters_avx2, qg_skip_quiet_avx2, qg_count_chars_avx2,
                         qg_pg_may_set_avx2},
    [QG_VECTORS_AVX512] = {qg_quick_scan_avx512, qg_quick_scan_utf8_avx2, qg_pair_letters_avx2,
                           qg_quick_scan_letters_avx512, qg_skip_quiet_avx2, qg_count_chars_avx2,
                           qg_pg_may_set_avx2},
#endif
};

const qg_scans *qg_scans_of(int implementation)
{
    int runnable = qg_cpu_vectors();
    if (implementation < 0)
        implementation = QG_VECTORS_REFERENCE;
    return &implementations[implementation < runnable ? implementation : runnable];
}

QG_HOT qg_quick_reading qg_only_plain_strings(const qg_context *ctx, const char *sql, size_t len)
{
    return implementations[qg_vectors_in_use()].quick_scan(ctx, sql, len);
}

bool qg_pg_may_set(const char *sql, size_t len)
{
    return implementations[qg_vectors_in_use()].pg_may_set(sql, len);
}

qg_quick_reading qg_only_plain_strings_as_letters(const qg_context *ctx, const char *sql,
                                                  size_t len, char *copy)
{
    const encoding_dfa_t *dfa = encoding_dfa(ctx->encoding); /* none for the one-byte encodings */
    if (!dfa || dfa->quote_trail)
        return QG_QUICK_UNSETTLED;
    const qg_scans *scans = &implementations[qg_vectors_in_use()];
    if (dfa->utf8)
        return scans->utf8_scan(ctx, dfa, sql, len);
    if (dfa->pairs && copy && scans->pair_letters(dfa, (const unsigned char *)sql, len,
                                                  (unsigned char *)copy))
        return scans->quick_scan_letters(ctx, copy, len);
    return QG_QUICK_UNSETTLED;
}

size_t qg_count_chars(const encoding_dfa_t *dfa, const unsigned char *s, size_t pos, size_t limit,
                      size_t *chars)
{
    return implementations[qg_vectors_in_use()].count_chars(dfa, s, pos, limit, chars);
}

/* The build the lexer runs on from its start (lx->vectors, picked at
 * qg_lexer_init). */
QG_HOT void qg_lexer_skip_quiet(qg_lexer *lx)
{
    if (lx->vectors == QG_VECTORS_REFERENCE || lx->reading != QG_READ_SERVER ||
        lx->exec_comment_depth || lx->pos < lx->quiet_from || lx->pos >= lx->len)
        return;
    implementations[lx->vectors].skip_quiet(lx);
}
