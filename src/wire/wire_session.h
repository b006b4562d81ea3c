/* The state the server lexes a followed connection's next query with, as
 * the wire front keeps it (wire_frame.h, wire_mysql.h). */
#ifndef QG_WIRE_SESSION_H
#define QG_WIRE_SESSION_H

#include <stdbool.h>

#include "mysql_state.h"

#define QG_WIRE_CHARSET_MAX 64

struct qg_encoding;

typedef struct qg_wire_session {
    char encoding[QG_WIRE_CHARSET_MAX]; /* PG client_encoding / MySQL character_set_client */
    char server_encoding[QG_WIRE_CHARSET_MAX]; /* PG, as reported ("" before) */
    bool std_strings;                   /* PG standard_conforming_strings = on */
    bool no_backslash_escapes;          /* MySQL */
    bool ansi_quotes;                   /* MySQL */
    /* MySQL: the three above as the checker reads them (the charset in
     * lower case), set with them (qg_wire_my_set_charset,
     * qg_wire_my_set_flags) */
    qg_my_state my_state;
    /* the checker's table of the encoding (PG) or charset (MySQL) above,
     * looked up at the first query after it changed (NULL until then) */
    const struct qg_encoding *encoding_table;
} qg_wire_session;

#endif
