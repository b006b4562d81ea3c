/* What the wire front (src/front/front_wire.c) shares with the other fronts. */
#ifndef QG_FRONT_WIRE_H
#define QG_FRONT_WIRE_H

#include <stdbool.h>
#include <stddef.h>

/* src/front/front_wire.c: the libpq / libmariadb fronts call this with their
 * connection's socket before they check a query on it, so that the wire
 * front leaves that connection to them (one check per query). */
void qg_wire_library_guarded(int fd);

/* src/front/front_wire.c: the libmariadb front brackets the library's own
 * connect with these: a connection made inside is the library front's from
 * its first byte (its compression stays as the program asked). */
void qg_wire_library_connect_begin(void);
void qg_wire_library_connect_end(void);

#endif
