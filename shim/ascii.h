/* Small ASCII helpers the shim's parsers share. */
#ifndef QG_ASCII_H
#define QG_ASCII_H

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
