/*
 * qg_encoding_char_len over every encoding: never reads past `avail`, returns
 * at most `avail`, is consistent under truncation, and agrees with reference
 * rules written separately from ../shared/ENCODINGS.md for the encodings an
 * attack can use.  Input: selector byte, then the bytes to measure.
 */
#include "fuzz_common.h"

static int in(unsigned char c, unsigned lo, unsigned hi)
{
    return c >= lo && c <= hi;
}

/* Reference rules.  Each returns the character length or 0 (invalid or cut). */

/* RFC 3629 (ENCODINGS.md A.4, B.4); surrogates valid only for MariaDB. */
static size_t ref_utf8(const unsigned char *p, size_t n, size_t max_len, int surrogates_ok)
{
    unsigned char c = p[0];
    if (c == 0)
        return 0;
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned lo = 0x80, hi = 0xbf;
    if (in(c, 0xc2, 0xdf))
        len = 2;
    else if (in(c, 0xe0, 0xef))
        len = 3;
    else if (in(c, 0xf0, 0xf4))
        len = 4;
    else
        return 0;
    if (len > max_len || n < len)
        return 0;
    if (c == 0xe0)
        lo = 0xa0;
    if (c == 0xed && !surrogates_ok)
        hi = 0x9f;
    if (c == 0xf0)
        lo = 0x90;
    if (c == 0xf4)
        hi = 0x8f;
    if (!in(p[1], lo, hi))
        return 0;
    for (size_t i = 2; i < len; i++)
        if (!in(p[i], 0x80, 0xbf))
            return 0;
    return len;
}

/* Shift_JIS family (A.2, B.3). */
static size_t ref_sjis(const unsigned char *p, size_t n)
{
    unsigned char c = p[0];
    if (c == 0)
        return 0;
    if (c < 0x80 || in(c, 0xa1, 0xdf))
        return 1;
    if (!(in(c, 0x81, 0x9f) || in(c, 0xe0, 0xfc)) || n < 2)
        return 0;
    return (in(p[1], 0x40, 0x7e) || in(p[1], 0x80, 0xfc)) ? 2 : 0;
}

/* EUC_JP / ujis / eucjpms (A.2, B.3). */
static size_t ref_eucjp(const unsigned char *p, size_t n)
{
    unsigned char c = p[0];
    if (c == 0)
        return 0;
    if (c < 0x80)
        return 1;
    if (c == 0x8e)
        return (n >= 2 && in(p[1], 0xa1, 0xdf)) ? 2 : 0;
    if (c == 0x8f)
        return (n >= 3 && in(p[1], 0xa1, 0xfe) && in(p[2], 0xa1, 0xfe)) ? 3 : 0;
    if (in(c, 0xa1, 0xfe))
        return (n >= 2 && in(p[1], 0xa1, 0xfe)) ? 2 : 0;
    return 0;
}

/* Two-byte EUC: [lead_lo-lead_hi][A1-FE] (EUC_KR, EUC_CN, gb2312). */
static size_t ref_euc2(const unsigned char *p, size_t n, unsigned lead_hi)
{
    unsigned char c = p[0];
    if (c == 0)
        return 0;
    if (c < 0x80)
        return 1;
    if (!in(c, 0xa1, lead_hi) || n < 2)
        return 0;
    return in(p[1], 0xa1, 0xfe) ? 2 : 0;
}

/* EUC_TW (A.2). */
static size_t ref_euctw(const unsigned char *p, size_t n)
{
    unsigned char c = p[0];
    if (c == 0)
        return 0;
    if (c < 0x80)
        return 1;
    if (c == 0x8e)
        return (n >= 4 && in(p[1], 0xa1, 0xa7) && in(p[2], 0xa1, 0xfe) && in(p[3], 0xa1, 0xfe))
                   ? 4
                   : 0;
    if (c == 0x8f)
        return 0;
    return (n >= 2 && in(p[1], 0xa1, 0xfe)) ? 2 : 0;
}

/* GB18030 (A.2, B.3). */
static size_t ref_gb18030(const unsigned char *p, size_t n)
{
    unsigned char c = p[0];
    if (c == 0)
        return 0;
    if (c < 0x80)
        return 1;
    if (!in(c, 0x81, 0xfe) || n < 2)
        return 0;
    if (in(p[1], 0x40, 0x7e) || in(p[1], 0x80, 0xfe))
        return 2;
    if (in(p[1], 0x30, 0x39) && n >= 4 && in(p[2], 0x81, 0xfe) && in(p[3], 0x30, 0x39))
        return 4;
    return 0;
}

/* MariaDB big5 / gbk / euckr (B.3): a lead range and a list of trail ranges. */
static size_t ref_lead_trail(const unsigned char *p, size_t n, unsigned lead_lo,
                             unsigned lead_hi, const unsigned (*trails)[2], size_t ntrails)
{
    unsigned char c = p[0];
    if (c == 0)
        return 0;
    if (c < 0x80)
        return 1;
    if (!in(c, lead_lo, lead_hi) || n < 2)
        return 0;
    for (size_t i = 0; i < ntrails; i++)
        if (in(p[1], trails[i][0], trails[i][1]))
            return 2;
    return 0;
}

static const unsigned big5_trails[][2] = {{0x40, 0x7e}, {0xa1, 0xfe}};
static const unsigned gbk_trails[][2] = {{0x40, 0x7e}, {0x80, 0xfe}};
static const unsigned euckr_trails[][2] = {{0x41, 0x5a}, {0x61, 0x7a}, {0x81, 0xfe}};

/* PostgreSQL's BIG5/GBK/UHC verifier (A.2): lead >= 0x80, any non-NUL next
 * byte.  The library is deliberately stricter (docs/DETECTION.md), so it may
 * only reject more, never accept something this rejects. */
static size_t ref_pg_permissive(const unsigned char *p, size_t n)
{
    if (p[0] == 0)
        return 0;
    if (p[0] < 0x80)
        return 1;
    return (n >= 2 && p[1] != 0) ? 2 : 0;
}

/* Returns the reference length, or -1 when the encoding has no reference
 * beyond the generic checks. */
static long reference(const char *name, const unsigned char *p, size_t n)
{
    if (!strcmp(name, "UTF8"))
        return (long)ref_utf8(p, n, 4, 0);
    if (!strcmp(name, "utf8mb4"))
        return (long)ref_utf8(p, n, 4, 1);
    if (!strcmp(name, "utf8mb3"))
        return (long)ref_utf8(p, n, 3, 1);
    if (!strcmp(name, "SJIS") || !strcmp(name, "SHIFT_JIS_2004") || !strcmp(name, "sjis") ||
        !strcmp(name, "cp932"))
        return (long)ref_sjis(p, n);
    if (!strcmp(name, "EUC_JP") || !strcmp(name, "EUC_JIS_2004") || !strcmp(name, "ujis") ||
        !strcmp(name, "eucjpms"))
        return (long)ref_eucjp(p, n);
    if (!strcmp(name, "EUC_KR") || !strcmp(name, "EUC_CN"))
        return (long)ref_euc2(p, n, 0xfe);
    if (!strcmp(name, "gb2312"))
        return (long)ref_euc2(p, n, 0xf7);
    if (!strcmp(name, "EUC_TW"))
        return (long)ref_euctw(p, n);
    if (!strcmp(name, "GB18030") || !strcmp(name, "gb18030"))
        return (long)ref_gb18030(p, n);
    if (!strcmp(name, "big5") || !strcmp(name, "BIG5"))
        return (long)ref_lead_trail(p, n, 0xa1, 0xf9, big5_trails, 2);
    if (!strcmp(name, "gbk") || !strcmp(name, "GBK"))
        return (long)ref_lead_trail(p, n, 0x81, 0xfe, gbk_trails, 2);
    if (!strcmp(name, "euckr") || !strcmp(name, "UHC"))
        return (long)ref_lead_trail(p, n, 0x81, 0xfe, euckr_trails, 3);
    return -1;
}

static void hex_context(char *out, size_t cap, const unsigned char *p, size_t n)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && i < 4 && used + 4 < cap; i++)
        used += (size_t)snprintf(out + used, cap - used, "%02x ", p[i]);
}

/* cut_buffer[k] is a heap block of exactly k bytes (k = 1..4). */
static unsigned char *cut_buffer[5];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (!cut_buffer[1])
        for (size_t k = 1; k <= 4; k++)
            cut_buffer[k] = fuzz_exact_copy((const uint8_t *)"\0\0\0\0", k);
    qg_dialect dialect;
    const qg_encoding *enc = fuzz_pick_encoding(data[0], &dialect);
    const char *name = qg_encoding_name(enc);
    bool single = qg_encoding_is_single_byte(enc);
    bool pg_permissive = dialect == QG_DIALECT_POSTGRES &&
                         (!strcmp(name, "BIG5") || !strcmp(name, "GBK") || !strcmp(name, "UHC"));
    size_t len = size - 1;
    unsigned char *bytes = fuzz_exact_copy(data + 1, len);
    char ctx[32];

    for (size_t i = 0; i < len; i++) {
        const unsigned char *p = bytes + i;
        size_t avail = len - i;
        size_t n = qg_encoding_char_len(enc, p, avail);
        hex_context(ctx, sizeof ctx, p, avail);
        FUZZ_CHECK(n <= avail, "%s: %zu > avail %zu at [%s]", name, n, avail, ctx);
        FUZZ_CHECK(n <= 4, "%s: length %zu at [%s]", name, n, ctx);
        if (p[0] == 0)
            FUZZ_CHECK(n == 0, "%s: NUL accepted", name);
        else if (p[0] < 0x80)
            FUZZ_CHECK(n == 1, "%s: ASCII %02x has length %zu", name, p[0], n);
        if (single)
            FUZZ_CHECK(n == (p[0] != 0), "%s: single-byte encoding gave %zu at [%s]", name, n, ctx);
        if (n > 1)
            for (size_t k = 1; k < n; k++)
                FUZZ_CHECK(p[k] != 0, "%s: NUL inside a character at [%s]", name, ctx);

        long want = reference(name, p, avail);
        if (want >= 0 && !pg_permissive)
            FUZZ_CHECK((long)n == want, "%s: library %zu, reference %ld at [%s]", name, n, want,
                       ctx);
        if (pg_permissive) {
            FUZZ_CHECK((long)n == want || n == 0, "%s: library %zu, ranges %ld at [%s]", name, n,
                       want, ctx);
            size_t loose = ref_pg_permissive(p, avail);
            FUZZ_CHECK(n == 0 || n == loose, "%s: accepts %zu where the verifier says %zu [%s]",
                       name, n, loose, ctx);
        }
        if (!single && qg_encoding_has_ascii_trail(enc) == false && n > 1)
            for (size_t k = 1; k < n; k++)
                FUZZ_CHECK(p[k] >= 0x80, "%s claims no ASCII trail but [%s] is valid", name, ctx);

        /* Truncation: with fewer bytes a character is whole or invalid, and
         * an exact-size buffer shows any read past `avail`. */
        for (size_t cut = 1; cut <= avail && cut <= 4; cut++) {
            memcpy(cut_buffer[cut], p, cut);
            size_t m = qg_encoding_char_len(enc, cut_buffer[cut], cut);
            size_t expect = (n > 0 && cut >= n) ? n : 0;
            FUZZ_CHECK(m == expect, "%s: [%s] is %zu long, cut to %zu bytes gives %zu", name,
                       ctx, n, cut, m);
        }
    }
    FUZZ_CHECK(qg_encoding_char_len(enc, bytes, 0) == 0, "%s: avail 0 gave a character", name);
    free(bytes);
    return 0;
}
