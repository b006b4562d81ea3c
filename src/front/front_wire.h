/* What the wire front (src/front/front_wire.c) shares with the other fronts. */
#ifndef QG_FRONT_WIRE_H
#define QG_FRONT_WIRE_H

#include <stdbool.h>
#include <stddef.h>

#include "front_wire_fd.h" /* the descriptors' table and its markers */

/* src/front/front_wire.c: qg_wire_library_guarded past the marker. */
void qg_wire_library_takes(int fd);

/* The libpq / libmariadb fronts call this with their connection's socket
 * before they check a query on it, so that the wire front leaves that
 * connection to them (one check per query).  A socket left to them
 * already is told in line, by its marker (docs/PERFORMANCE.md, "Choices
 * in the code"). */
static inline void qg_wire_library_guarded(int fd)
{
    if (qg_wire_fd_entry(fd) != QG_WIRE_LIBRARY)
        qg_wire_library_takes(fd);
}

/* src/front/front_wire.c: the libmariadb front brackets the library's own
 * connect with these: a connection made inside is the library front's from
 * its first byte (its compression stays as the program asked). */
void qg_wire_library_connect_begin(void);
void qg_wire_library_connect_end(void);

#endif
