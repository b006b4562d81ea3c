/* The start-up line that proves the shim is attached. */
#ifndef QG_ATTACH_H
#define QG_ATTACH_H

/* Logs the "attached" line once per process, as soon as a client library
 * is mapped (audit, enforce and rewrite modes; active programs only). */
void qg_attach_announce(void);

/* The same for a process without a client library whose database
 * connection the wire front recognised; `what` names it ("wire:mysql"). */
void qg_attach_announce_wire(const char *what);

#endif
