/* What the MySQL front's files share: the client library's types and
 * constants, and the calls the session makes on the library
 * (front_mysql_server.c).  The shim never includes the library's headers. */
#ifndef QG_FRONT_MYSQL_H
#define QG_FRONT_MYSQL_H

#include <stdbool.h>
#include <stddef.h>

#include "client_libraries.h"
#include "mysql_state.h"
#include "real.h"

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

/* The calls each query makes, in line where the front calls them. */
QG_REAL_FN(unsigned long, mysql_thread_id, (MYSQL *), qg_mysql_sonames)
QG_REAL_FN(unsigned int, mysql_field_count, (MYSQL *), qg_mysql_sonames)
QG_REAL_FN(my_bool, mariadb_get_infov, (MYSQL *, int, void *, ...), qg_mysql_sonames)

static inline unsigned long qg_my_lib_thread_id(void *conn)
{
    mysql_thread_id_fn fn = real_mysql_thread_id();
    return fn ? fn(conn) : 0;
}

static inline unsigned qg_my_lib_status(void *conn)
{
    mariadb_get_infov_fn get_info = real_mariadb_get_infov();
    unsigned status = 0;
    if (!get_info || get_info(conn, MARIADB_CONNECTION_SERVER_STATUS, &status) != 0)
        return 0;
    return status;
}

static inline bool qg_my_lib_result_set(void *conn)
{
    mysql_field_count_fn field_count = real_mysql_field_count();
    return field_count && field_count(conn) != 0;
}

#endif
