/* The MySQL / MariaDB session state the server lexes a connection's queries
 * with (character_set_client and the quoting modes of sql_mode), and how to
 * read it from what the server says: a session-tracking report (the OK
 * packet's name/value pairs) or the answer to a state query.  Pure logic: no
 * client library. */
#ifndef QG_MYSQL_STATE_H
#define QG_MYSQL_STATE_H

#include <stdbool.h>
#include <stddef.h>

#define QG_MY_CHARSET_MAX 64

/* Server status flags of the MySQL protocol (OK and EOF packets,
 * mariadb_get_info's MARIADB_CONNECTION_SERVER_STATUS). */
enum {
    QG_MY_STATUS_MORE_RESULTS_EXIST = 0x0008,
    QG_MY_STATUS_CURSOR_EXISTS = 0x0040,
    QG_MY_STATUS_NO_BACKSLASH_ESCAPES = 0x0200,
    QG_MY_STATUS_SESSION_STATE_CHANGED = 0x4000,
    QG_MY_STATUS_ANSI_QUOTES = 0x8000 /* MariaDB */
};

/* The type of a session-state change that carries a system variable. */
#define QG_MY_SESSION_TRACK_SYSTEM_VARIABLES 0

typedef struct qg_my_state {
    char charset[QG_MY_CHARSET_MAX]; /* character_set_client, lower case */
    unsigned flags;                  /* QG_NO_BACKSLASH_ESCAPES | QG_ANSI_QUOTES */
} qg_my_state;

/* The variables the shim needs the server to report in every OK packet that
 * changes them (session_track_system_variables); the list itself is one of
 * them, so that an application's change of it that keeps it is seen. */
#define QG_MY_TRACKED_VARIABLES "character_set_client,sql_mode,session_track_system_variables"

/* The oldest MariaDB with the table value constructor, VALUES (…), which
 * the shim asks the state with: unlike a SELECT, it leaves FOUND_ROWS() as
 * it was. */
#define QG_MY_VALUES_MIN_VERSION 100303ul

/* Whether word[0, len) is want, ASCII letters in any case (never the
 * locale's case rules). */
bool qg_my_word_is(const char *word, size_t len, const char *want);

/* Stores name[0, len) lower-cased (cut to fit). */
void qg_my_state_set_charset(qg_my_state *st, const char *name, size_t len);

/* The quoting flags of a sql_mode value: a comma-separated list of mode
 * names (letters, digits, '_'; any case; spaces around names ignored), each
 * combination mode counted for the modes it sets (ANSI, ORACLE … set
 * ANSI_QUOTES).  False when the text is not such a list, or holds a
 * number (SET sql_mode = 2097152 sets the modes by their bits). */
bool qg_my_sql_mode_flags(const char *text, size_t len, unsigned *flags);

/* Applies one reported system variable to *st.  Returns false when the
 * value cannot be read (the state must then be asked for); variables the
 * state does not hold are ignored (true).  *tracking_list is set when the
 * variable was session_track_system_variables (the caller checks the list
 * with qg_my_tracking_covers). */
bool qg_my_state_apply(qg_my_state *st, const char *name, size_t name_len, const char *value,
                       size_t value_len, bool *tracking_list);

/* Whether a session_track_system_variables value makes the server report
 * both character_set_client and sql_mode ("*" reports every variable). */
bool qg_my_tracking_covers(const char *list, size_t len);

/* Whether two states read queries alike. */
bool qg_my_state_equal(const qg_my_state *a, const qg_my_state *b);

/* "charset=gbk no_backslash_escapes=0 ansi_quotes=1": for the debug log. */
void qg_my_state_describe(const qg_my_state *st, char *out, size_t cap);

#endif
