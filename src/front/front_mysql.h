/* What the MySQL front's files share: the client library's types and
 * constants, and the calls the session makes on the library
 * (front_mysql_server.c).  The shim never includes the library's headers. */
#ifndef QG_FRONT_MYSQL_H
#define QG_FRONT_MYSQL_H

#include <stdbool.h>
#include <stddef.h>

#include "mysql_state.h"

/* The client library's types and constants, as far as the shim needs them
 * (their values are part of the library's ABI). */
typedef struct st_mysql MYSQL;
typedef struct st_mysql_res MYSQL_RES;
typedef struct st_mysql_stmt MYSQL_STMT;
typedef char **MYSQL_ROW;
typedef char my_bool;
enum {
    MYSQL_OPT_RECONNECT = 20,             /* enum mysql_option */
    MARIADB_CONNECTION_SERVER_STATUS = 30 /* enum mariadb_value */
};

/* The connection whose library call this thread is in (a query, the
 * shim's own state query): a reconnect inside it makes a session on a
 * handle of the library's own (its mysql_real_connect, init commands,
 * mysql_set_character_set, and mysql_close of the old session), which
 * passes straight to the library.  initial-exec: reading it never
 * allocates. */
extern __thread MYSQL *qg_my_sending __attribute__((tls_model("initial-exec")));

/* The library calls of qg_my_server (mysql_session.h); conn is a MYSQL. */
bool qg_my_lib_ask(void *conn, qg_my_state *st, bool *covered);
bool qg_my_lib_request_tracking(void *conn);
bool qg_my_lib_report_item(void *conn, bool first, const char **data, size_t *len);

#endif
