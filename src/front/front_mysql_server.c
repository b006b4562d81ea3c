/* The MySQL front's calls on the client library for the session: the state
 * query, the tracking request, and what the last answer says. */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "client_libraries.h"
#include "front_mysql.h"
#include "guard.h"
#include "mysql_state.h"
#include "real.h"

__thread MYSQL *qg_my_sending __attribute__((tls_model("initial-exec")));

QG_REAL_FN(int, mysql_real_query, (MYSQL *, const char *, unsigned long), qg_mysql_sonames)
QG_REAL_FN(MYSQL_RES *, mysql_store_result, (MYSQL *), qg_mysql_sonames)
QG_REAL_FN(MYSQL_ROW, mysql_fetch_row, (MYSQL_RES *), qg_mysql_sonames)
QG_REAL_FN(void, mysql_free_result, (MYSQL_RES *), qg_mysql_sonames)
QG_REAL_FN(const char *, mysql_get_server_info, (MYSQL *), qg_mysql_sonames)
QG_REAL_FN(unsigned long, mysql_get_server_version, (MYSQL *), qg_mysql_sonames)
QG_REAL_FN(int, mysql_session_track_get_first, (MYSQL *, int, const char **, size_t *),
           qg_mysql_sonames)
QG_REAL_FN(int, mysql_session_track_get_next, (MYSQL *, int, const char **, size_t *),
           qg_mysql_sonames)

/* Sends a statement of the shim's own; true when the server took it. */
static bool own_statement(MYSQL *mysql, mysql_real_query_fn run, const char *sql, size_t len)
{
    /* the library's inner calls for this text are not queries to check */
    bool entered = qg_guard_enter(mysql, sql, len);
    MYSQL *outer = qg_my_sending;
    qg_my_sending = mysql;
    int rc = run(mysql, sql, len);
    qg_my_sending = outer;
    if (entered)
        qg_guard_leave_call(mysql, sql, len);
    return rc == 0;
}

/* Whether the server takes MariaDB's table value constructor. */
static bool server_has_values(MYSQL *mysql)
{
    mysql_get_server_info_fn info_of = real_mysql_get_server_info();
    mysql_get_server_version_fn version_of = real_mysql_get_server_version();
    const char *info = info_of ? info_of(mysql) : NULL;
    return info && strstr(info, "MariaDB") && version_of &&
           version_of(mysql) >= QG_MY_VALUES_MIN_VERSION;
}

#define ASKED_VARIABLES \
    "@@character_set_client, @@session.sql_mode, @@session.session_track_system_variables"

bool qg_my_lib_ask(void *conn, qg_my_state *st, bool *covered)
{
    static const char values[] = "VALUES (" ASKED_VARIABLES ")";
    static const char select[] = "SELECT " ASKED_VARIABLES;
    MYSQL *mysql = conn;
    bool as_values = server_has_values(mysql);
    const char *query = as_values ? values : select;
    size_t query_len = as_values ? sizeof values - 1 : sizeof select - 1;
    mysql_real_query_fn run = real_mysql_real_query();
    mysql_store_result_fn store = real_mysql_store_result();
    mysql_fetch_row_fn fetch = real_mysql_fetch_row();
    mysql_free_result_fn release = real_mysql_free_result();
    MYSQL_RES *res;
    if (!run || !store || !fetch || !release || !own_statement(mysql, run, query, query_len) ||
        !(res = store(mysql)))
        return false;
    MYSQL_ROW row = fetch(res);
    bool list, ok = row && row[0] && row[1] &&
                    qg_my_state_apply(st, "character_set_client", 20, row[0], strlen(row[0]), &list) &&
                    qg_my_state_apply(st, "sql_mode", 8, row[1], strlen(row[1]), &list);
    *covered = ok && row[2] && qg_my_tracking_covers(row[2], strlen(row[2]));
    release(res);
    return ok;
}

bool qg_my_lib_request_tracking(void *conn)
{
    static const char sql[] = "SET SESSION session_track_system_variables = CONCAT("
                              "@@session.session_track_system_variables, '," QG_MY_TRACKED_VARIABLES
                              "')";
    mysql_real_query_fn run = real_mysql_real_query();
    return run && own_statement(conn, run, sql, sizeof sql - 1);
}

/* Without the library's report functions every item is missing: the state
 * is then asked for. */
bool qg_my_lib_report_item(void *conn, bool first, const char **data, size_t *len)
{
    mysql_session_track_get_first_fn get_first = real_mysql_session_track_get_first();
    mysql_session_track_get_next_fn get_next = real_mysql_session_track_get_next();
    if (!get_first || !get_next)
        return false;
    return (first ? get_first : get_next)(conn, QG_MY_SESSION_TRACK_SYSTEM_VARIABLES, data, len) == 0;
}
