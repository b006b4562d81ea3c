/* A libmariadb client that sends a query from a LOAD DATA LOCAL INFILE
 * callback, while the LOAD DATA statement is in flight on the same thread.
 *
 * my_reenter SOCKET DATABASE CHARSET SQL
 *
 * Opens two connections to DATABASE over SOCKET as root.  The second runs
 * "SET NAMES CHARSET" as a plain query (as legacy programs do).  The first
 * runs LOAD DATA LOCAL INFILE into a temporary table through a handler set
 * with mysql_set_local_infile_handler; the handler's first read runs SQL
 * on the second connection with mysql_real_query, then ends the file.
 * Output: "INNER:" then SQL's rows ("ROW: v") or error (my_print.h),
 * "OUTER:" then "OK: N" or the LOAD DATA error, then "FIRED: N".
 * Exit status: 0 when both connections worked, 2 otherwise.
 */
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "my_print.h"

static MYSQL *inner_conn;
static const char *inner_sql;
static int fired;

static void run_inner(void)
{
    fired++;
    puts("INNER:");
    if (mysql_real_query(inner_conn, inner_sql, strlen(inner_sql)) != 0) {
        print_error(inner_conn);
        return;
    }
    MYSQL_RES *res = mysql_store_result(inner_conn);
    MYSQL_ROW row;
    while (res && (row = mysql_fetch_row(res)) != NULL)
        printf("ROW: %s\n", row[0] ? row[0] : "\\N");
    mysql_free_result(res);
    fflush(stdout);
}

static int infile_init(void **state, const char *filename, void *userdata)
{
    (void)filename;
    (void)userdata;
    static int reads;
    reads = 0;
    *state = &reads;
    return 0;
}

static int infile_read(void *state, char *buf, unsigned int len)
{
    int *reads = state;
    if ((*reads)++ > 0 || len < 4)
        return 0;
    run_inner();
    memcpy(buf, "qg\n", 3);
    return 3;
}

static void infile_end(void *state)
{
    (void)state;
}

static int infile_error(void *state, char *msg, unsigned int len)
{
    (void)state;
    snprintf(msg, len, "my_reenter infile handler failed");
    return 2000;
}

static MYSQL *connect_or_die(const char *socket, const char *db)
{
    MYSQL *mysql = mysql_init(NULL);
    unsigned int local_infile = 1;
    mysql_options(mysql, MYSQL_OPT_LOCAL_INFILE, &local_infile);
    if (!mysql_real_connect(mysql, NULL, "root", NULL, db, 0, socket, 0)) {
        print_error(mysql);
        exit(2);
    }
    return mysql;
}

static void run_or_die(MYSQL *mysql, const char *sql)
{
    if (mysql_query(mysql, sql) != 0) {
        print_error(mysql);
        exit(2);
    }
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: my_reenter SOCKET DATABASE CHARSET SQL\n");
        return 2;
    }
    MYSQL *outer = connect_or_die(argv[1], argv[2]);
    inner_conn = connect_or_die(argv[1], argv[2]);
    inner_sql = argv[4];
    char set[128];
    snprintf(set, sizeof set, "SET NAMES %s", argv[3]);
    run_or_die(inner_conn, set);
    run_or_die(outer, "CREATE TEMPORARY TABLE qg_reenter (v VARCHAR(16))");

    mysql_set_local_infile_handler(outer, infile_init, infile_read, infile_end, infile_error,
                                   NULL);
    int rc = mysql_query(outer, "LOAD DATA LOCAL INFILE 'qg_reenter.txt' INTO TABLE qg_reenter");
    puts("OUTER:");
    if (rc != 0)
        print_error(outer);
    else
        printf("OK: %llu\n", (unsigned long long)mysql_affected_rows(outer));
    printf("FIRED: %d\n", fired);
    mysql_close(inner_conn);
    mysql_close(outer);
    return 0;
}
