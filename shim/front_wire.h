/* What the wire front (shim/front_wire.c) shares with the other fronts. */
#ifndef QG_FRONT_WIRE_H
#define QG_FRONT_WIRE_H

#include <stdbool.h>
#include <stddef.h>

/* shim/front_mysql.c: what a MySQL text the server accepted does to the
 * charset (in place, `cap` bytes) and quoting flags (QG_NO_BACKSLASH_ESCAPES,
 * QG_ANSI_QUOTES).  *changed: whether it changes them.  False when the
 * effect cannot be known without asking the server. */
bool qg_mysql_text_effect(char *charset, size_t cap, unsigned *flags, const char *sql,
                          size_t len, bool *changed);

/* shim/front_wire.c: the libpq / libmariadb fronts call this with their
 * connection's socket before they check a query on it, so that the wire
 * front leaves that connection to them (one check per query). */
void qg_wire_library_guarded(int fd);

#endif
