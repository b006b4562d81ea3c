/* ASCII helpers the shim's parsers share.  SQL words, encoding names and
 * settings are compared byte by byte in ASCII, never through the C library's
 * ctype or strcasecmp: those follow the process locale, and under a Turkish
 * one 'I' does not fold to 'i'. */
#ifndef QG_ASCII_H
#define QG_ASCII_H

#include <stdbool.h>
#include <stddef.h>

static inline unsigned char qg_ascii_lower(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c + ('a' - 'A')) : c;
}

static inline bool qg_ascii_is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static inline bool qg_ascii_is_alpha(unsigned char c)
{
    return qg_ascii_lower(c) >= 'a' && qg_ascii_lower(c) <= 'z';
}

static inline bool qg_ascii_is_alnum(unsigned char c)
{
    return qg_ascii_is_alpha(c) || qg_ascii_is_digit(c);
}

/* As strncasecmp, folding ASCII letters only: <0, 0 or >0. */
static inline int qg_ascii_ncasecmp(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int diff = qg_ascii_lower((unsigned char)a[i]) - qg_ascii_lower((unsigned char)b[i]);
        if (diff != 0 || a[i] == '\0')
            return diff;
    }
    return 0;
}

/* As strcasecmp, folding ASCII letters only. */
static inline int qg_ascii_casecmp(const char *a, const char *b)
{
    return qg_ascii_ncasecmp(a, b, (size_t)-1);
}

/* Value of a hexadecimal digit, or -1. */
static inline int qg_hex_digit(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

#endif
