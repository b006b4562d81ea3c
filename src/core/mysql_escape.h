/* Escaping a string for a MySQL / MariaDB string literal the way the server
 * will read it.  Pure logic: no client library. */
#ifndef QG_MYSQL_ESCAPE_H
#define QG_MYSQL_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>

#include "mysql_state.h"
#include "quoteguard.h"

/* escape_string_for_mysql for the character set enc: whole valid characters
 * are copied, an ill-formed byte >= 0x80 is escaped itself (so that it
 * cannot swallow the backslash of the next escape), and with quotes_only
 * (the server has NO_BACKSLASH_ESCAPES) only ' is doubled.  `to` holds
 * 2 * len + 1 bytes; returns the length written before its NUL. */
size_t qg_my_escape(const qg_encoding *enc, bool quotes_only, char *to, const char *from,
                    size_t len);

/* The encoding mysql_real_escape_string must escape for, given the server's
 * state and what the library believes (its charset name, and whether it
 * saw NO_BACKSLASH_ESCAPES), with *quotes_only; NULL when the library
 * escapes right, or the state's charset is unknown. */
const qg_encoding *qg_my_escape_for_server(const qg_my_state *st, const char *lib_charset,
                                           bool lib_quotes_only, bool *quotes_only);

/* The encoding mysql_escape_string (latin1 rules, backslashes) must escape
 * for on a connection in state st, with *quotes_only; NULL when latin1
 * rules are right there: no charset whose trail bytes can be ASCII, no
 * NO_BACKSLASH_ESCAPES. */
const qg_encoding *qg_my_escape_for_legacy(const qg_my_state *st, bool *quotes_only);

#endif
