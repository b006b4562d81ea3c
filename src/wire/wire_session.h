/* The state the server lexes a followed connection's next query with, as
 * the wire front keeps it (wire_frame.h, wire_mysql.h). */
#ifndef QG_WIRE_SESSION_H
#define QG_WIRE_SESSION_H

#include <stdbool.h>

#define QG_WIRE_CHARSET_MAX 64

typedef struct qg_wire_session {
    char encoding[QG_WIRE_CHARSET_MAX]; /* PG client_encoding / MySQL character_set_client */
    char server_encoding[QG_WIRE_CHARSET_MAX]; /* PG, as reported ("" before) */
    bool std_strings;                   /* PG standard_conforming_strings = on */
    bool no_backslash_escapes;          /* MySQL */
    bool ansi_quotes;                   /* MySQL */
} qg_wire_session;

#endif
