/*
 * Helper for the encoding differential tests (tests/t/60-*.t, 61-*.t).
 *
 *   encoding_verdicts generate SEED COUNT
 *       prints COUNT random byte strings (hex, one a line, fixed by SEED),
 *       biased towards high bytes and the ASCII bytes that matter, then
 *       edge cases: every single byte, every high lead with a set of
 *       interesting next bytes, and 3- and 4-byte forms.
 *   encoding_verdicts check DIALECT ENCODING [ICONV_CHARSET]
 *       reads hex strings from stdin; for each prints
 *       "<qg> <iconv> <bad> <qg_nul_as_space>": qg is 1 when
 *       qg_encoding_char_len walks the whole string (the checker's verdict),
 *       iconv 1 when glibc iconv converts it to UTF-8 without error ("-" when
 *       no charset was given); the last two read every NUL byte as a space
 *       (for servers and iconv, which take NUL as a character): bad is the
 *       offset of the first byte that starts no valid character (the length
 *       when valid), qg_nul_as_space the verdict.
 *   encoding_verdicts dash ENCODING
 *       prints the high bytes (hex, on one line) that the checker reads as
 *       starting a comment after "--" in the MySQL ENCODING: those for which
 *       SELECT 1 --<byte>', 2 is clean.
 */
#include <errno.h>
#include <iconv.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quoteguard.h"

#define MAX_BYTES 64

/* Next bytes that separate the encodings' ranges. */
static const unsigned char interesting[] = {
    0x00, 0x01, 0x20, 0x22, 0x27, 0x2f, 0x30, 0x39, 0x3a, 0x3f, 0x40, 0x41, 0x5a, 0x5b,
    0x5c, 0x60, 0x61, 0x7a, 0x7b, 0x7e, 0x7f, 0x80, 0x81, 0x8d, 0x8e, 0x8f, 0x90, 0x9f,
    0xa0, 0xa1, 0xa7, 0xa8, 0xbf, 0xc0, 0xdf, 0xe0, 0xef, 0xf0, 0xf7, 0xf8, 0xf9, 0xfa,
    0xfc, 0xfd, 0xfe, 0xff,
};
#define N_INTERESTING (sizeof interesting / sizeof interesting[0])

static uint64_t rng_state;

static uint32_t rng(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(rng_state >> 33);
}

static void print_hex(const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        printf("%02x", b[i]);
    putchar('\n');
}

static unsigned char random_byte(void)
{
    switch (rng() % 4) {
    case 0:
        return interesting[rng() % N_INTERESTING];
    case 1:
        return (unsigned char)(0x20 + rng() % 0x5f); /* printable ASCII */
    default:
        return (unsigned char)(0x80 + rng() % 0x80);
    }
}

static int generate(unsigned long seed, unsigned long count)
{
    unsigned char b[8];
    rng_state = seed;
    for (unsigned long k = 0; k < count; k++) {
        size_t n = 1 + rng() % 8;
        for (size_t i = 0; i < n; i++)
            b[i] = random_byte();
        print_hex(b, n);
    }
    for (unsigned v = 0; v < 256; v++) {
        b[0] = (unsigned char)v;
        print_hex(b, 1);
    }
    for (unsigned lead = 0x80; lead < 0x100; lead++)
        for (size_t i = 0; i < N_INTERESTING; i++) {
            b[0] = (unsigned char)lead;
            b[1] = interesting[i];
            print_hex(b, 2);
        }
    /* 3- and 4-byte forms: leads that open them, then sampled next bytes. */
    static const unsigned char long_leads[] = {0x81, 0x8e, 0x8f, 0x90, 0x9a, 0x9c, 0xa1, 0xe0,
                                               0xe1, 0xed, 0xef, 0xf0, 0xf1, 0xf4, 0xf5, 0xfe};
    for (size_t l = 0; l < sizeof long_leads; l++)
        for (int k = 0; k < 60; k++) {
            b[0] = long_leads[l];
            for (int i = 1; i < 4; i++)
                b[i] = interesting[rng() % N_INTERESTING];
            print_hex(b, 3);
            print_hex(b, 4);
        }
    return 0;
}

static size_t parse_hex(const char *line, unsigned char *out)
{
    size_t n = 0;
    for (const char *p = line; p[0] && p[1] && p[0] != '\n' && n < MAX_BYTES; p += 2) {
        unsigned v;
        if (sscanf(p, "%2x", &v) != 1)
            break;
        out[n++] = (unsigned char)v;
    }
    return n;
}

/* Offset of the first byte that starts no valid character, or n. */
static size_t checker_bad_offset(const qg_encoding *enc, const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t len = qg_encoding_char_len(enc, b + i, n - i);
        if (len == 0)
            return i;
        i += len;
    }
    return n;
}

static int iconv_valid(iconv_t cd, const unsigned char *b, size_t n)
{
    char out[MAX_BYTES * 8];
    char *in = (char *)b, *o = out;
    size_t in_left = n, out_left = sizeof out;
    iconv(cd, NULL, NULL, NULL, NULL);
    if (iconv(cd, &in, &in_left, &o, &out_left) == (size_t)-1)
        return 0;
    /* A stateful converter may hold an incomplete sequence back. */
    return in_left == 0 && iconv(cd, NULL, NULL, &o, &out_left) != (size_t)-1;
}

static int check(const char *dialect_name, const char *encoding, const char *charset)
{
    qg_dialect dialect = strcmp(dialect_name, "mysql") == 0 ? QG_DIALECT_MYSQL
                                                              : QG_DIALECT_POSTGRES;
    const qg_encoding *enc = qg_encoding_find(dialect, encoding);
    if (!enc) {
        fprintf(stderr, "encoding_verdicts: %s unknown to quoteguard\n", encoding);
        return 1;
    }
    iconv_t cd = (iconv_t)-1;
    if (charset && (cd = iconv_open("UTF-8", charset)) == (iconv_t)-1) {
        fprintf(stderr, "encoding_verdicts: iconv has no %s\n", charset);
        return 1;
    }
    char line[MAX_BYTES * 2 + 8];
    unsigned char b[MAX_BYTES];
    while (fgets(line, sizeof line, stdin)) {
        size_t n = parse_hex(line, b);
        int qg = checker_bad_offset(enc, b, n) == n;
        int iconv_ok = cd == (iconv_t)-1 ? -1 : iconv_valid(cd, b, n);
        /* 0x20 is no trail byte anywhere, so it stands for NUL exactly. */
        for (size_t i = 0; i < n; i++)
            if (b[i] == 0)
                b[i] = ' ';
        size_t bad = checker_bad_offset(enc, b, n);
        if (iconv_ok < 0)
            printf("%d - %zu %d\n", qg, bad, bad == n);
        else
            printf("%d %d %zu %d\n", qg, iconv_ok, bad, bad == n);
    }
    if (cd != (iconv_t)-1)
        iconv_close(cd);
    return 0;
}

static int dash(const char *encoding)
{
    const qg_encoding *enc = qg_encoding_find(QG_DIALECT_MYSQL, encoding);
    if (!enc) {
        fprintf(stderr, "encoding_verdicts: %s unknown to quoteguard\n", encoding);
        return 1;
    }
    qg_context ctx;
    qg_context_init(&ctx, QG_DIALECT_MYSQL, enc, 0);
    const char *sep = "";
    for (unsigned b = 0x80; b <= 0xff; b++) {
        char sql[] = "SELECT 1 --?', 2";
        sql[11] = (char)b;
        if (qg_check(&ctx, sql, strlen(sql), NULL) == QG_VERDICT_CLEAN) {
            printf("%s%02x", sep, b);
            sep = " ";
        }
    }
    printf("\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "generate") == 0)
        return generate(strtoul(argv[2], NULL, 10), strtoul(argv[3], NULL, 10));
    if ((argc == 4 || argc == 5) && strcmp(argv[1], "check") == 0)
        return check(argv[2], argv[3], argc == 5 ? argv[4] : NULL);
    if (argc == 3 && strcmp(argv[1], "dash") == 0)
        return dash(argv[2]);
    fprintf(stderr, "usage: encoding_verdicts generate SEED COUNT | "
                    "check pg|mysql ENCODING [ICONV_CHARSET] | dash ENCODING\n");
    return 2;
}
