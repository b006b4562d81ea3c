/* The statements a server runs in place of a blocked one: each fails there
 * with an ordinary error whose message names quoteguard, so the program
 * reads an error as for any statement the server rejects, and the
 * protocol stays in step.  Pure logic. */
#ifndef QG_REPLACEMENT_H
#define QG_REPLACEMENT_H

#include <stddef.h>

/* Writes message to out (cap bytes) made safe inside a single-quoted SQL
 * literal in any quoting mode, a backquoted name and a dollar quote:
 * printable ASCII, a quote, backslash or backquote becomes '"', a dollar
 * sign and any other byte '?'.  At most max bytes; a longer message keeps
 * its head "quoteguard: blocked REASON at byte N (ENCODING)" and leaves the
 * explanation to the log.  Returns the length written before its NUL. */
size_t qg_replacement_message(char *out, size_t cap, const char *message, size_t max);
/* The longest message a PostgreSQL replacement carries. */
#define QG_REPLACEMENT_MESSAGE_MAX 500

/* PostgreSQL: a DO block that raises message with sqlstate (5 characters
 * of [0-9A-Z]; otherwise 42501) at once, so it also aborts an open
 * transaction.  Returns its length (< cap). */
size_t qg_replacement_pg_raise(char *out, size_t cap, const char *message, const char *sqlstate);
/* Room for any qg_replacement_pg_raise. */
#define QG_REPLACEMENT_PG_RAISE_MAX 640

/* MySQL: SIGNAL SQLSTATE '45000' with error 1105 and (the head of)
 * message.  Returns its length (< cap). */
size_t qg_replacement_mysql_signal(char *out, size_t cap, const char *message);
/* Room for any qg_replacement_mysql_signal. */
#define QG_REPLACEMENT_MYSQL_SIGNAL_MAX 256

#endif
