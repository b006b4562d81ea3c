/*
 * Helper of the conversion differential test (tests/t/18-diff-conversions-pg.t).
 *
 *   pg_conversions chars ENCODING
 *       prints how many characters of the PostgreSQL client encoding
 *       ENCODING the shim knows that are not ASCII, by length.
 *   pg_conversions compare CLIENT SERVER
 *       with the libpq environment (PGHOST …) of a server that has the
 *       function qg_convert_each (see the test): converts every character of
 *       CLIENT that is not ASCII (the shim's tables: every first byte, and
 *       for each form it starts every sequence its trail sets allow that the
 *       shim reads as one character; UTF-8's and MULE_INTERNAL's four-byte
 *       characters one in SAMPLE_STEP) through the server's conversion to
 *       SERVER, and compares each one that the server turns into bytes with
 *       an ASCII byte among them with what qg_conversion_to_ascii says.
 *       Prints "<converted> <failed> <made ascii>" counts and one line per
 *       disagreement; exits 1 on any disagreement.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "encoding_tables.h"
#include "quoteguard.h"

#define SAMPLE_STEP 64
#define CHUNK 1024

typedef struct charset {
    unsigned char (*chars)[4];
    unsigned char *lens;
    size_t count, cap;
    size_t by_len[5];
} charset;

static void add_char(charset *set, const unsigned char *seq, size_t n)
{
    if (set->count == set->cap) {
        set->cap = set->cap ? set->cap * 2 : 4096;
        set->chars = realloc(set->chars, set->cap * sizeof *set->chars);
        set->lens = realloc(set->lens, set->cap);
        if (!set->chars || !set->lens) {
            perror("pg_conversions");
            exit(2);
        }
    }
    memcpy(set->chars[set->count], seq, n);
    set->lens[set->count++] = (unsigned char)n;
    set->by_len[n]++;
}

/* Every sequence of `form` after the bytes in seq[0, at). */
static void add_form(const qg_encoding *enc, charset *set, unsigned char *seq, size_t at,
                     const mb_form *form, unsigned long *seen)
{
    bool sampled = enc->utf8 || strcmp(qg_encoding_name(enc), "MULE_INTERNAL") == 0;
    if (at == form->len) {
        if (qg_encoding_char_len(enc, seq, at) == at &&
            (at < 4 || !sampled || (*seen)++ % SAMPLE_STEP == 0))
            add_char(set, seq, at);
        return;
    }
    for (unsigned b = 0; b < 256; b++) {
        if (enc->trail[b] & form->trail[at - 1]) {
            seq[at] = (unsigned char)b;
            add_form(enc, set, seq, at + 1, form, seen);
        }
    }
}

static void enumerate(const qg_encoding *enc, charset *set)
{
    unsigned char seq[4];
    unsigned long seen = 0;
    for (unsigned lead = 0x80; lead < 256; lead++) {
        seq[0] = (unsigned char)lead;
        unsigned cls = enc->lead[lead];
        if (cls == L_SINGLE)
            add_char(set, seq, 1);
        for (; cls >= L_FORM; cls = enc->forms[cls - L_FORM].alt)
            add_form(enc, set, seq, 1, &enc->forms[cls - L_FORM], &seen);
    }
}

static void hex(char *out, const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
    out[2 * n] = '\0';
}

typedef struct tally {
    unsigned long converted, failed, ascii, wrong;
} tally;

/* One character's conversion (out NULL: the server rejected it) against
 * the shim's table. */
static void judge(const qg_ascii_conversion *table, const unsigned char *c, size_t n,
                  const unsigned char *out, size_t out_len, tally *t)
{
    if (!out) {
        t->failed++;
        return;
    }
    t->converted++;
    bool ascii = false;
    for (size_t i = 0; i < out_len; i++)
        ascii |= out[i] < 0x80;
    const qg_ascii_conversion *entry = NULL;
    for (size_t i = 0; table && table[i].len; i++)
        if (table[i].len == n && memcmp(table[i].bytes, c, n) == 0)
            entry = &table[i];
    t->ascii += ascii;
    bool agree = ascii ? entry && out_len == 1 && out[0] == entry->ascii : !entry;
    if (!agree) {
        char ch[9], conv[64];
        hex(ch, c, n);
        hex(conv, out, out_len < 31 ? out_len : 31);
        printf("DISAGREE %s -> %s, the shim says %s\n", ch, conv,
               entry ? "ASCII" : "not ASCII");
        t->wrong++;
    }
}

/* The chunk one character at a time, on the server (qg_convert_each). */
static void each(PGconn *conn, const qg_ascii_conversion *table, const charset *set, size_t from,
                 size_t to, const char *client, const char *server, tally *t)
{
    size_t cap = (to - from) * 12 + 8;
    char *array = malloc(cap), *p = array;
    p += sprintf(p, "{");
    for (size_t i = from; i < to; i++) {
        char h[9];
        hex(h, set->chars[i], set->lens[i]);
        p += sprintf(p, "%s\"%s\"", i > from ? "," : "", h);
    }
    sprintf(p, "}");
    const char *params[3] = {array, client, server};
    PGresult *res = PQexecParams(conn, "SELECT converted FROM qg_convert_each($1::text[], $2, $3)", 3,
                                 NULL, params, NULL, NULL, 1);
    free(array);
    if (PQresultStatus(res) != PGRES_TUPLES_OK || (size_t)PQntuples(res) != to - from) {
        fprintf(stderr, "pg_conversions: %s", PQerrorMessage(conn));
        exit(2);
    }
    for (size_t i = from; i < to; i++) {
        int row = (int)(i - from);
        bool null = PQgetisnull(res, row, 0);
        judge(table, set->chars[i], set->lens[i],
              null ? NULL : (const unsigned char *)PQgetvalue(res, row, 0),
              null ? 0 : (size_t)PQgetlength(res, row, 0), t);
    }
    PQclear(res);
}

/* A chunk in one conversion, its characters apart by newlines: when it
 * converts and holds no ASCII byte but those, no character of it made ASCII;
 * otherwise it goes one character at a time. */
static void chunk(PGconn *conn, const qg_ascii_conversion *table, const charset *set, size_t from,
                  size_t to, const char *client, const char *server, tally *t)
{
    unsigned char *text = malloc((to - from) * 5), *p = text;
    for (size_t i = from; i < to; i++) {
        memcpy(p, set->chars[i], set->lens[i]);
        p += set->lens[i];
        *p++ = '\n';
    }
    char len_text[32];
    snprintf(len_text, sizeof len_text, "%zu", (size_t)(p - text));
    const char *params[3] = {(const char *)text, client, server};
    int lengths[3] = {(int)(p - text), 0, 0}, formats[3] = {1, 0, 0};
    PGresult *res = PQexecParams(conn, "SELECT convert($1::bytea, $2, $3)", 3, NULL, params,
                                 lengths, formats, 1);
    free(text);
    bool clean = PQresultStatus(res) == PGRES_TUPLES_OK;
    if (clean) {
        const unsigned char *out = (const unsigned char *)PQgetvalue(res, 0, 0);
        size_t n = (size_t)PQgetlength(res, 0, 0), ascii = 0;
        for (size_t i = 0; i < n; i++)
            ascii += out[i] < 0x80;
        clean = ascii == to - from;
    }
    PQclear(res);
    if (!clean) {
        each(conn, table, set, from, to, client, server, t);
        return;
    }
    for (size_t i = from; i < to; i++)
        judge(table, set->chars[i], set->lens[i], (const unsigned char *)"\x80", 1, t);
}

static int compare(const qg_encoding *enc, const char *client, const char *server)
{
    charset set = {0};
    enumerate(enc, &set);
    PGconn *conn = PQconnectdb("");
    if (PQstatus(conn) != CONNECTION_OK) {
        fprintf(stderr, "pg_conversions: %s", PQerrorMessage(conn));
        return 2;
    }
    const qg_ascii_conversion *table = qg_conversion_to_ascii(enc, server);
    tally t = {0};
    for (size_t from = 0; from < set.count; from += CHUNK)
        chunk(conn, table, &set, from, from + CHUNK < set.count ? from + CHUNK : set.count, client,
              server, &t);
    PQfinish(conn);
    printf("%lu %lu %lu\n", t.converted, t.failed, t.ascii);
    free(set.chars);
    free(set.lens);
    return t.wrong ? 1 : 0;
}

int main(int argc, char **argv)
{
    const qg_encoding *enc = argc >= 3 ? qg_encoding_find(QG_DIALECT_POSTGRES, argv[2]) : NULL;
    if (!enc) {
        fprintf(stderr, "usage: pg_conversions chars ENCODING | compare CLIENT SERVER\n");
        return 2;
    }
    if (strcmp(argv[1], "chars") == 0) {
        charset set = {0};
        enumerate(enc, &set);
        printf("%zu %zu %zu %zu\n", set.by_len[1], set.by_len[2], set.by_len[3], set.by_len[4]);
        return 0;
    }
    if (strcmp(argv[1], "compare") == 0 && argc == 4)
        return compare(enc, argv[2], argv[3]);
    fprintf(stderr, "pg_conversions: unknown command %s\n", argv[1]);
    return 2;
}
