/* A legacy-style libmariadb client: pastes an escaped string into SQL text.
 *
 * my_legacy SOCKET STEP...
 *
 * Steps run in order on one connection (connected before the first step
 * that needs it):
 *   db=NAME            database to connect to (before the connection)
 *   charset=NAME       mysql_options(MYSQL_SET_CHARSET_NAME) (before it)
 *   init=SQL           mysql_options(MYSQL_INIT_COMMAND) (before it)
 *   multi              CLIENT_MULTI_STATEMENTS (before it)
 *   reconnect          MYSQL_OPT_RECONNECT on (before it)
 *   via=query|real|send|queue|direct|async  how statements are sent:
 *                      mysql_query, mysql_real_query, mysql_send_query
 *                      followed by mysql_read_query_result, mysql_send_query
 *                      alone (the answer is read by a later `read`),
 *                      mariadb_stmt_execute_direct, or the non-blocking
 *                      mysql_real_query_start / _cont with poll(2) (the
 *                      connection made with MYSQL_OPT_NONBLOCK) (default real)
 *   read               reads the answer of every statement queued by
 *                      via=queue, in order
 *   sql=TEXT           runs TEXT as it is
 *   sqlhex=HEX         runs the bytes HEX
 *   stmt=TEXT          runs TEXT through the prepared-statement API
 *                      (mysql_stmt_prepare, mysql_stmt_execute)
 *   undrained=TEXT     runs TEXT and reads only its first result
 *   state              prints the server's character_set_client and sql_mode
 *   reset              mysql_reset_connection
 *   change-user        mysql_change_user (to root again)
 *   kill               KILLs this connection's server thread from a second one
 *   set-names=NAME     runs "SET NAMES NAME" as a plain query
 *   set-charset=NAME   mysql_set_character_set
 *   escape=bytewise|real|legacy|none  how input is escaped: a backslash
 *                      before ' " \ byte by byte (addslashes),
 *                      mysql_real_escape_string, mysql_escape_string, raw
 *   template=TEXT      the query the input goes into, at its one %s
 *                      (default: SELECT secret FROM users WHERE name = '%s')
 *   input=HEX          escapes the bytes HEX, pastes them, runs the query
 *   show-charset       prints the client library's charset
 *   locale=NAME        setlocale(LC_ALL, NAME), as a program that follows
 *                      its environment does; exits 2 when NAME is missing
 *
 * Output, one item per line:
 *   SENT: HEX          the query text built from an input
 *   ROW: v1|v2         a result row (NULL as \N, other bytes < 0x20 or
 *                      >= 0x7f and the backslash as \xNN)
 *   ROWS: N            the end of a result set of N rows
 *   OK: N              a statement without result set, N affected rows
 *   ERROR: ERRNO SQLSTATE MESSAGE   a failed statement
 *   CHARSET: NAME      mysql_character_set_name
 *   LOCALE: NAME       the locale set by locale=
 *   (state prints its answer as ROW: CHARSET|SQL_MODE)
 * Exit status: 0 when the connection worked, 2 on usage or connection errors.
 */
#include <locale.h>
#include <mysql.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "my_print.h"
#include "my_wait.h"

typedef enum send_api { VIA_QUERY, VIA_REAL, VIA_SEND, VIA_QUEUE, VIA_DIRECT, VIA_ASYNC } send_api;
typedef enum escape_kind { ESC_BYTEWISE, ESC_REAL, ESC_LEGACY, ESC_NONE } escape_kind;

typedef struct client {
    const char *socket;
    const char *db;
    const char *charset;
    const char *init;
    unsigned long flags;
    bool reconnect;
    MYSQL *mysql;
    int queued; /* answers still to be read (via=queue) */
    send_api via;
    escape_kind escape;
    const char *template_sql;
} client;

static void usage(void)
{
    fprintf(stderr, "usage: my_legacy SOCKET STEP... (see the source)\n");
    exit(2);
}

static bool starts(const char *arg, const char *prefix, const char **value)
{
    size_t n = strlen(prefix);
    if (strncmp(arg, prefix, n) != 0)
        return false;
    *value = arg + n;
    return true;
}

static void print_bytes(const char *p, unsigned long len)
{
    for (unsigned long i = 0; i < len; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c < 0x20 || c >= 0x7f || c == '\\')
            printf("\\x%02x", c);
        else
            putchar(c);
    }
}

static void connect_once(client *c)
{
    if (c->mysql)
        return;
    c->mysql = mysql_init(NULL);
    if (!c->mysql) {
        fprintf(stderr, "my_legacy: mysql_init failed\n");
        exit(2);
    }
    if (c->charset)
        mysql_options(c->mysql, MYSQL_SET_CHARSET_NAME, c->charset);
    if (c->init)
        mysql_options(c->mysql, MYSQL_INIT_COMMAND, c->init);
    if (c->via == VIA_ASYNC)
        mysql_options(c->mysql, MYSQL_OPT_NONBLOCK, 0);
    if (c->reconnect) {
        my_bool on = 1;
        mysql_options(c->mysql, MYSQL_OPT_RECONNECT, &on);
    }
    if (!mysql_real_connect(c->mysql, NULL, "root", "", c->db, 0, c->socket, c->flags)) {
        printf("CONNERR: %u %s\n", mysql_errno(c->mysql), mysql_error(c->mysql));
        exit(2);
    }
}

static void print_results(MYSQL *mysql)
{
    do {
        MYSQL_RES *res = mysql_store_result(mysql);
        if (res) {
            unsigned fields = mysql_num_fields(res);
            MYSQL_ROW row;
            unsigned long long rows = 0;
            while ((row = mysql_fetch_row(res))) {
                rows++;
                unsigned long *lengths = mysql_fetch_lengths(res);
                fputs("ROW: ", stdout);
                for (unsigned i = 0; i < fields; i++) {
                    if (i)
                        putchar('|');
                    if (row[i])
                        print_bytes(row[i], lengths[i]);
                    else
                        fputs("\\N", stdout);
                }
                putchar('\n');
            }
            printf("ROWS: %llu\n", rows);
            mysql_free_result(res);
        } else if (mysql_field_count(mysql) == 0) {
            printf("OK: %llu\n", (unsigned long long)mysql_affected_rows(mysql));
        } else {
            print_error(mysql);
            return;
        }
    } while (mysql_next_result(mysql) == 0);
    if (mysql_errno(mysql))
        print_error(mysql);
}

/* mariadb_stmt_execute_direct, its rows printed as print_results does
 * (each column bound as a string). */
static void run_direct(client *c, const char *sql, unsigned long len)
{
    enum { COLUMNS = 4, WIDTH = 256 };
    MYSQL_STMT *stmt = mysql_stmt_init(c->mysql);
    if (!stmt) {
        print_error(c->mysql);
        return;
    }
    if (mariadb_stmt_execute_direct(stmt, sql, len)) {
        printf("ERROR: %u %s %s\n", mysql_stmt_errno(stmt), mysql_stmt_sqlstate(stmt),
               mysql_stmt_error(stmt));
        mysql_stmt_close(stmt);
        return;
    }
    unsigned fields = mysql_stmt_field_count(stmt);
    if (fields == 0) {
        printf("OK: %llu\n", (unsigned long long)mysql_stmt_affected_rows(stmt));
        mysql_stmt_close(stmt);
        return;
    }
    MYSQL_BIND bind[COLUMNS];
    char value[COLUMNS][WIDTH];
    unsigned long length[COLUMNS];
    my_bool is_null[COLUMNS];
    memset(bind, 0, sizeof bind);
    for (unsigned i = 0; i < COLUMNS; i++) {
        bind[i].buffer_type = MYSQL_TYPE_STRING;
        bind[i].buffer = value[i];
        bind[i].buffer_length = WIDTH;
        bind[i].length = &length[i];
        bind[i].is_null = &is_null[i];
    }
    unsigned long long rows = 0;
    if (fields <= COLUMNS && mysql_stmt_bind_result(stmt, bind) == 0) {
        while (mysql_stmt_fetch(stmt) == 0) {
            rows++;
            fputs("ROW: ", stdout);
            for (unsigned i = 0; i < fields; i++) {
                if (i)
                    putchar('|');
                if (is_null[i])
                    fputs("\\N", stdout);
                else
                    print_bytes(value[i], length[i] < WIDTH ? length[i] : WIDTH);
            }
            putchar('\n');
        }
    }
    printf("ROWS: %llu\n", rows);
    mysql_stmt_close(stmt);
}

static int real_query_async(MYSQL *mysql, const char *sql, unsigned long len)
{
    int failed;
    int status = mysql_real_query_start(&failed, mysql, sql, len);
    while (status)
        status = mysql_real_query_cont(&failed, mysql, wait_for(mysql, status));
    return failed;
}

static void run(client *c, const char *sql, unsigned long len)
{
    connect_once(c);
    int failed;
    switch (c->via) {
    case VIA_QUEUE:
        if (mysql_send_query(c->mysql, sql, len))
            print_error(c->mysql);
        else
            printf("QUEUED: %d\n", ++c->queued);
        return;
    case VIA_DIRECT:
        run_direct(c, sql, len);
        return;
    case VIA_QUERY:
        failed = mysql_query(c->mysql, sql);
        break;
    case VIA_SEND:
        failed = mysql_send_query(c->mysql, sql, len) || mysql_read_query_result(c->mysql);
        break;
    case VIA_ASYNC:
        failed = real_query_async(c->mysql, sql, len);
        break;
    default:
        failed = mysql_real_query(c->mysql, sql, len);
        break;
    }
    if (failed)
        print_error(c->mysql);
    else
        print_results(c->mysql);
}

static void run_stmt(client *c, const char *sql)
{
    connect_once(c);
    MYSQL_STMT *stmt = mysql_stmt_init(c->mysql);
    if (!stmt) {
        print_error(c->mysql);
        return;
    }
    if (mysql_stmt_prepare(stmt, sql, (unsigned long)strlen(sql)) || mysql_stmt_execute(stmt)) {
        printf("ERROR: %u %s %s\n", mysql_stmt_errno(stmt), mysql_stmt_sqlstate(stmt),
               mysql_stmt_error(stmt));
    } else {
        mysql_stmt_store_result(stmt);
        printf("OK: stmt\n");
    }
    mysql_stmt_close(stmt);
}

/* KILL from a second connection: the server ends this one's session. */
static void kill_session(client *c)
{
    connect_once(c);
    MYSQL *other = mysql_init(NULL);
    char sql[64];
    snprintf(sql, sizeof sql, "KILL %lu", mysql_thread_id(c->mysql));
    if (!other || !mysql_real_connect(other, NULL, "root", "", NULL, 0, c->socket, 0) ||
        mysql_query(other, sql))
        print_error(other);
    else
        printf("OK: killed\n");
    mysql_close(other);
}

/* Decodes HEX into a new buffer (NUL-terminated); exits on bad input. */
static char *from_hex(const char *hex, unsigned long *len)
{
    size_t n = strlen(hex);
    if (n % 2)
        usage();
    char *out = malloc(n / 2 + 1);
    if (!out)
        exit(2);
    for (size_t i = 0; i < n / 2; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            usage();
        out[i] = (char)v;
    }
    out[n / 2] = '\0';
    *len = (unsigned long)(n / 2);
    return out;
}

/* addslashes: a backslash before ' " \ and NUL, byte by byte. */
static unsigned long escape_bytewise(char *to, const char *from, unsigned long len)
{
    char *o = to;
    for (unsigned long i = 0; i < len; i++) {
        char b = from[i];
        if (b == '\'' || b == '"' || b == '\\') {
            *o++ = '\\';
            *o++ = b;
        } else if (b == '\0') {
            *o++ = '\\';
            *o++ = '0';
        } else {
            *o++ = b;
        }
    }
    *o = '\0';
    return (unsigned long)(o - to);
}

static void run_input(client *c, const char *hex)
{
    connect_once(c);
    unsigned long in_len, esc_len;
    char *in = from_hex(hex, &in_len);
    char *esc = malloc(2 * in_len + 1);
    if (!esc)
        exit(2);
    switch (c->escape) {
    case ESC_REAL:
        esc_len = mysql_real_escape_string(c->mysql, esc, in, in_len);
        break;
    case ESC_LEGACY:
        esc_len = mysql_escape_string(esc, in, in_len);
        break;
    case ESC_NONE:
        memcpy(esc, in, in_len);
        esc_len = in_len;
        break;
    default:
        esc_len = escape_bytewise(esc, in, in_len);
        break;
    }
    const char *mark = strstr(c->template_sql, "%s");
    if (!mark)
        usage();
    size_t head = (size_t)(mark - c->template_sql), tail = strlen(mark + 2);
    unsigned long sql_len = (unsigned long)(head + esc_len + tail);
    char *sql = malloc(sql_len + 1);
    if (!sql)
        exit(2);
    memcpy(sql, c->template_sql, head);
    memcpy(sql + head, esc, esc_len);
    memcpy(sql + head + esc_len, mark + 2, tail + 1);
    fputs("SENT: ", stdout);
    for (unsigned long i = 0; i < sql_len; i++)
        printf("%02X", (unsigned char)sql[i]);
    putchar('\n');
    run(c, sql, sql_len);
    free(sql);
    free(esc);
    free(in);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        usage();
    client c = {.socket = argv[1],
                .via = VIA_REAL,
                .escape = ESC_BYTEWISE,
                .template_sql = "SELECT secret FROM users WHERE name = '%s'"};
    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i], *v;
        if (starts(arg, "db=", &v)) {
            c.db = v;
        } else if (starts(arg, "charset=", &v)) {
            c.charset = v;
        } else if (starts(arg, "init=", &v)) {
            c.init = v;
        } else if (strcmp(arg, "multi") == 0) {
            c.flags |= CLIENT_MULTI_STATEMENTS;
        } else if (strcmp(arg, "reconnect") == 0) {
            c.reconnect = true;
        } else if (starts(arg, "stmt=", &v)) {
            run_stmt(&c, v);
        } else if (starts(arg, "undrained=", &v)) {
            connect_once(&c);
            if (mysql_query(c.mysql, v))
                print_error(c.mysql);
            else
                printf("OK: first result only\n");
        } else if (strcmp(arg, "state") == 0) {
            /* the backslash makes it read otherwise in some state: the
             * shim brings the state up to date before checking it */
            static const char state[] = "SELECT @@character_set_client, @@sql_mode /*qg-state \\*/";
            run(&c, state, sizeof state - 1);
        } else if (strcmp(arg, "reset") == 0) {
            connect_once(&c);
            if (mysql_reset_connection(c.mysql))
                print_error(c.mysql);
            else
                printf("OK: reset\n");
        } else if (strcmp(arg, "change-user") == 0) {
            connect_once(&c);
            if (mysql_change_user(c.mysql, "root", "", c.db))
                print_error(c.mysql);
            else
                printf("OK: change-user\n");
        } else if (strcmp(arg, "kill") == 0) {
            kill_session(&c);
        } else if (starts(arg, "via=", &v)) {
            if (strcmp(v, "query") == 0)
                c.via = VIA_QUERY;
            else if (strcmp(v, "send") == 0)
                c.via = VIA_SEND;
            else if (strcmp(v, "real") == 0)
                c.via = VIA_REAL;
            else if (strcmp(v, "queue") == 0)
                c.via = VIA_QUEUE;
            else if (strcmp(v, "direct") == 0)
                c.via = VIA_DIRECT;
            else if (strcmp(v, "async") == 0)
                c.via = VIA_ASYNC;
            else
                usage();
        } else if (strcmp(arg, "read") == 0) {
            for (; c.queued > 0; c.queued--) {
                if (mysql_read_query_result(c.mysql))
                    print_error(c.mysql);
                else
                    print_results(c.mysql);
            }
        } else if (starts(arg, "sql=", &v)) {
            run(&c, v, (unsigned long)strlen(v));
        } else if (starts(arg, "sqlhex=", &v)) {
            unsigned long len;
            char *sql = from_hex(v, &len);
            run(&c, sql, len);
            free(sql);
        } else if (starts(arg, "set-names=", &v)) {
            char sql[128];
            snprintf(sql, sizeof sql, "SET NAMES %s", v);
            run(&c, sql, (unsigned long)strlen(sql));
        } else if (starts(arg, "set-charset=", &v)) {
            connect_once(&c);
            if (mysql_set_character_set(c.mysql, v))
                print_error(c.mysql);
            else
                printf("OK: charset %s\n", v);
        } else if (starts(arg, "escape=", &v)) {
            if (strcmp(v, "bytewise") == 0)
                c.escape = ESC_BYTEWISE;
            else if (strcmp(v, "real") == 0)
                c.escape = ESC_REAL;
            else if (strcmp(v, "legacy") == 0)
                c.escape = ESC_LEGACY;
            else if (strcmp(v, "none") == 0)
                c.escape = ESC_NONE;
            else
                usage();
        } else if (starts(arg, "locale=", &v)) {
            if (!setlocale(LC_ALL, v)) {
                fprintf(stderr, "my_legacy: locale %s is not available\n", v);
                exit(2);
            }
            printf("LOCALE: %s\n", v);
        } else if (starts(arg, "template=", &v)) {
            c.template_sql = v;
        } else if (starts(arg, "input=", &v)) {
            run_input(&c, v);
        } else if (strcmp(arg, "show-charset") == 0) {
            connect_once(&c);
            printf("CHARSET: %s\n", mysql_character_set_name(c.mysql));
        } else {
            usage();
        }
        fflush(stdout);
    }
    if (c.mysql)
        mysql_close(c.mysql);
    return 0;
}
