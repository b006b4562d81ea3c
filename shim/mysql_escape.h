/* Escaping a string for a MySQL / MariaDB string literal the way the server
 * will read it.  Pure logic: no client library. */
#ifndef QG_MYSQL_ESCAPE_H
#define QG_MYSQL_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>

#include "quoteguard.h"

/* escape_string_for_mysql for the character set enc: whole valid characters
 * are copied, an ill-formed byte >= 0x80 is escaped itself (so that it
 * cannot swallow the backslash of the next escape), and with quotes_only
 * (the server has NO_BACKSLASH_ESCAPES) only ' is doubled.  `to` holds
 * 2 * len + 1 bytes; returns the length written before its NUL. */
size_t qg_my_escape(const qg_encoding *enc, bool quotes_only, char *to, const char *from,
                    size_t len);

#endif
