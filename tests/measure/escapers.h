/*
 * Byte-exact models of the escapers the detection rule is measured with
 * (docs/DETECTION.md, "Measured error rates").  Each writes a whole literal,
 * quotes and prefix included, and returns its length.  The models of real
 * escapers are checked byte for byte against the real ones on a sample by
 * tests/t/80-rule-drivers.t (psycopg2, MySQLdb, DBD::Pg, DBD::mysql, PHP
 * pg_escape_string, pg_escape_literal and mysqli_real_escape_string); the byte-naive ones are the attack's
 * side and are what their names say.
 */
#ifndef QG_MEASURE_ESCAPERS_H
#define QG_MEASURE_ESCAPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "encoding_tables.h"
#include "quoteguard.h"

typedef enum escaper {
    /* correct escapers, for the connection's encoding and quoting rules */
    ESC_PQ_STRING,  /* PQescapeStringConn in '…' (psycopg2 with scs on, PHP pg_escape_string) */
    ESC_PQ_LITERAL, /* PQescapeLiteral (PHP pg_escape_literal) */
    ESC_PSYCOPG2,   /* psycopg2: PQescapeStringConn, E'…' when scs is off */
    ESC_DBD_PG,     /* DBD::Pg quote: byte by byte, so correct only where no
                       character has a trail byte 0x5c */
    ESC_MY_REAL,    /* libmariadb's mysql_real_escape_string in '…' (MySQLdb, DBD::mysql quote) */
    ESC_MY_REAL_DQ, /* the same in "…" (not under ANSI_QUOTES or NO_BACKSLASH_ESCAPES) */
    ESC_MYSQLND,    /* mysqlnd's escaper (PHP mysqli_real_escape_string, PDO::quote) */
    ESC_LEGIT_COUNT,
    /* byte-naive escapers: the attack's side */
    ESC_ADDSLASHES = ESC_LEGIT_COUNT, /* \ before \ ' " NUL, byte by byte */
    ESC_MY_ESCAPE,       /* mysql_escape_string with a single-byte idea of the charset */
    ESC_BACKSLASH_QUOTE, /* \ -> \\, ' -> \' */
    ESC_DOUBLER,         /* ' -> '' (a wrong idea of scs / NO_BACKSLASH_ESCAPES) */
    ESC_DOUBLE_BOTH,     /* ' -> '', \ -> \\ byte by byte (PQescapeString, wrong encoding) */
    ESC_AWARE_BACKSLASH, /* the connection's encoding, but \ escapes (wrong idea of scs / NBE) */
    ESC_WRONG_MB,        /* backslash escaping in another multibyte encoding */
    ESC_LEAD_TRUSTING,   /* backslash escaping that takes a lead byte's length on trust */
    ESC_COUNT
} escaper;

static const char *const escaper_name[ESC_COUNT] = {
    "PQescapeStringConn", "PQescapeLiteral", "psycopg2", "DBD::Pg", "mysql_real_escape",
    "mysql_real_escape\"", "mysqlnd", "addslashes", "mysql_escape_string", "backslash+quote", "doubler",
    "double-both", "aware-backslash", "wrong-multibyte", "lead-trusting",
};

/* The length a lead byte declares, to an escaper that trusts it (as
 * pg_mblen and MySQL's mbcharlen do): UTF-8's by its high bits, elsewhere
 * that of the encoding's first form the byte starts. */
static inline size_t declared_length(const qg_encoding *enc, unsigned char c)
{
    if (c < 0x80)
        return 1;
    if (enc->utf8)
        return c >= 0xf8 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    return enc->lead[c] >= L_FORM ? enc->forms[enc->lead[c] - L_FORM].len : 1;
}

/* Backslash escaping that copies what a lead byte declares without
 * looking at it. */
static inline size_t escape_lead_trusting(const qg_encoding *enc, const unsigned char *in, size_t n,
                                          unsigned char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t step = declared_length(enc, in[i]);
        if (step > 1) {
            step = step < n - i ? step : n - i;
            memcpy(out + o, in + i, step);
            o += step;
            i += step;
            continue;
        }
        unsigned char c = in[i++];
        if (c == '\\' || c == '\'' || c == '"')
            out[o++] = '\\';
        out[o++] = c;
    }
    return o;
}

/* Length of the character at p as an encoding-aware escaper steps: a valid
 * multibyte character whole, anything else one byte. */
static inline size_t escaper_step(const qg_encoding *enc, const unsigned char *p, size_t avail)
{
    if (!enc || p[0] < 0x80)
        return 1;
    size_t n = qg_encoding_char_len(enc, p, avail);
    return n ? n : 1;
}

/* The MySQL client libraries' own idea of a character set, where it is
 * not the server's: euckr takes trail bytes a1-fe only (MariaDB also reads
 * the extended syllables, trail 41-5a, 61-7a, 81-fe); libmariadb's eucjpms
 * check answers 2 for a three-byte character 8f xx xx (mysqlnd's, 3).
 * Returns the length of the valid character at p, 0 for none. */
static inline size_t client_char_len(escaper e, const qg_encoding *enc, const unsigned char *p,
                                     size_t avail)
{
    const char *name = qg_encoding_name(enc);
    if (!strcmp(name, "euckr"))
        return avail >= 2 && p[1] >= 0xa1 && p[1] <= 0xfe ? 2 : 0;
    if (!strcmp(name, "eucjpms") && p[0] == 0x8f && e != ESC_MYSQLND)
        return avail >= 3 && p[1] >= 0xa1 && p[1] <= 0xfe && p[2] >= 0xa1 && p[2] <= 0xfe ? 2 : 0;
    return qg_encoding_char_len(enc, p, avail);
}

/* Whether the client libraries take byte c for a lead byte (their
 * mbcharlen > 1): a lead that starts no valid character they write with a
 * backslash before it.  They do so in these character sets only. */
static inline bool client_lead(const qg_encoding *enc, unsigned char c)
{
    static const struct {
        const char *name;
        unsigned char from, to;
    } leads[] = {
        {"sjis", 0x81, 0x9f},    {"sjis", 0xe0, 0xfc},    {"cp932", 0x81, 0x9f},
        {"cp932", 0xe0, 0xfc},   {"gbk", 0x81, 0xfe},     {"big5", 0xa1, 0xf9},
        {"gb2312", 0xa1, 0xf7},  {"euckr", 0xa1, 0xfe},   {"ujis", 0x8e, 0x8f},
        {"ujis", 0xa1, 0xfe},    {"eucjpms", 0x8e, 0x8f}, {"eucjpms", 0xa1, 0xfe},
    };
    const char *name = qg_encoding_name(enc);
    for (size_t i = 0; i < sizeof leads / sizeof leads[0]; i++)
        if (!strcmp(name, leads[i].name) && c >= leads[i].from && c <= leads[i].to)
            return true;
    return false;
}

/* The body as libmariadb's mysql_real_escape_string and mysqlnd's escaper
 * write it with backslash escapes: a character valid to the library whole,
 * a lead byte that starts none with a backslash before it, and NUL, \n,
 * \r, \, ', ", ^Z escaped. */
static inline size_t escape_mysql_client_body(escaper e, const qg_encoding *enc,
                                              const unsigned char *in, size_t n,
                                              unsigned char *out)
{
    static const char names[] = {['\0'] = '0', ['\n'] = 'n', ['\r'] = 'r', ['\\'] = '\\',
                                 ['\''] = '\'', ['"'] = '"', [0x1a] = 'Z'};
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t step = in[i] < 0x80 ? 1 : client_char_len(e, enc, in + i, n - i);
        if (step > 1) {
            memcpy(out + o, in + i, step);
            o += step;
            i += step;
            continue;
        }
        unsigned char c = in[i++];
        if (c < sizeof names && names[c]) {
            out[o++] = '\\';
            out[o++] = (unsigned char)names[c];
        } else {
            if (c >= 0x80 && client_lead(enc, c))
                out[o++] = '\\';
            out[o++] = c;
        }
    }
    return o;
}

/* The body of a literal, backslash-style: the bytes in `set` get a
 * backslash (the MySQL escaper's NUL, newline, CR and ^Z become 0 n r Z). */
static inline size_t escape_backslash_body(const qg_encoding *enc, const unsigned char *in, size_t n,
                                           unsigned char *out, const char *set, bool mysql_names)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t step = escaper_step(enc, in + i, n - i);
        if (step > 1) {
            memcpy(out + o, in + i, step);
            o += step;
            i += step;
            continue;
        }
        unsigned char c = in[i++];
        bool hit = c == 0 ? strchr(set, '0') != NULL : (c != '0' && strchr(set, c) != NULL);
        if (!hit) {
            out[o++] = c;
            continue;
        }
        out[o++] = '\\';
        if (mysql_names && c == 0)
            c = '0';
        else if (mysql_names && c == '\n')
            c = 'n';
        else if (mysql_names && c == '\r')
            c = 'r';
        else if (mysql_names && c == 0x1a)
            c = 'Z';
        out[o++] = c;
    }
    return o;
}

/* The body, doubling: quotes always, backslashes when `backslashes`. */
static inline size_t escape_doubling_body(const qg_encoding *enc, const unsigned char *in, size_t n,
                                          unsigned char *out, bool backslashes)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t step = escaper_step(enc, in + i, n - i);
        if (step > 1) {
            memcpy(out + o, in + i, step);
            o += step;
            i += step;
            continue;
        }
        unsigned char c = in[i++];
        out[o++] = c;
        if (c == '\'' || (backslashes && c == '\\'))
            out[o++] = c;
    }
    return o;
}

static inline bool has_byte(const unsigned char *in, size_t n, unsigned char b)
{
    return memchr(in, b, n) != NULL;
}

/* Whether a backslash stands as a character of its own, as an
 * encoding-aware escaper steps through the text. */
static inline bool has_backslash_char(const qg_encoding *enc, const unsigned char *in, size_t n)
{
    for (size_t i = 0; i < n; i += escaper_step(enc, in + i, n - i))
        if (in[i] == '\\')
            return true;
    return false;
}

/* Writes the literal for `in` as escaper `e` does for a connection in
 * `enc` with `flags`; `other` is the wrong encoding of ESC_WRONG_MB.
 * `out` holds at least 2 * n + 4 bytes. */
static inline size_t escape_literal(escaper e, qg_dialect dialect, const qg_encoding *enc,
                                    const qg_encoding *other, unsigned flags,
                                    const unsigned char *in, size_t n, unsigned char *out)
{
    bool pg = dialect == QG_DIALECT_POSTGRES;
    bool scs = flags & QG_STD_STRINGS, nbe = flags & QG_NO_BACKSLASH_ESCAPES;
    size_t o = 0;
    unsigned char quote = e == ESC_MY_REAL_DQ ? '"' : '\'';
    switch (e) {
    case ESC_PQ_LITERAL:
        /* PQescapeLiteral: " E'" when the value holds a backslash that is
         * not a byte of a multibyte character */
        if (has_backslash_char(enc, in, n)) {
            out[o++] = ' ';
            out[o++] = 'E';
        }
        break;
    case ESC_DBD_PG:
        /* DBD::Pg: E'' when any byte is a backslash */
        if (has_byte(in, n, '\\'))
            out[o++] = 'E';
        break;
    case ESC_PSYCOPG2:
        if (!scs)
            out[o++] = 'E';
        break;
    default:
        break;
    }
    out[o++] = quote;
    unsigned char *body = out + o;
    switch (e) {
    case ESC_PQ_STRING:
    case ESC_PSYCOPG2:
        o += escape_doubling_body(enc, in, n, body, !scs);
        break;
    case ESC_PQ_LITERAL:
        o += escape_doubling_body(enc, in, n, body, true);
        break;
    case ESC_DBD_PG:
        o += escape_doubling_body(NULL, in, n, body, true);
        break;
    case ESC_MY_REAL:
    case ESC_MY_REAL_DQ:
    case ESC_MYSQLND:
        if (nbe)
            o += escape_doubling_body(enc, in, n, body, false);
        else
            o += escape_mysql_client_body(e, enc, in, n, body);
        break;
    case ESC_ADDSLASHES:
        o += escape_backslash_body(NULL, in, n, body, "0\\'\"", false);
        break;
    case ESC_MY_ESCAPE:
        o += escape_backslash_body(NULL, in, n, body, "0\n\r\\'\"\x1a", true);
        break;
    case ESC_BACKSLASH_QUOTE:
        o += escape_backslash_body(NULL, in, n, body, "\\'", false);
        break;
    case ESC_DOUBLER:
        o += escape_doubling_body(NULL, in, n, body, false);
        break;
    case ESC_DOUBLE_BOTH:
        o += escape_doubling_body(NULL, in, n, body, true);
        break;
    case ESC_AWARE_BACKSLASH:
        o += pg ? escape_backslash_body(enc, in, n, body, "\\'", false)
                : escape_backslash_body(enc, in, n, body, "0\n\r\\'\"\x1a", true);
        break;
    case ESC_LEAD_TRUSTING:
        o += escape_lead_trusting(enc, in, n, body);
        break;
    case ESC_WRONG_MB:
        o += pg ? escape_doubling_body(other, in, n, body, true)
                : escape_backslash_body(other, in, n, body, "0\n\r\\'\"\x1a", true);
        break;
    default:
        break;
    }
    out[o++] = quote;
    return o;
}

#endif
