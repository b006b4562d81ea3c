/* Two libmariadb connections whose non-blocking calls finish in another
 * order than they started, and a query on the first in between.
 *
 * my_async_order SOCKET SQL
 * Connects A and B as root to database qg with character set gbk
 * (MYSQL_OPT_NONBLOCK).  A: mysql_send_query("SELECT SLEEP(0.2)"), then
 * mysql_read_query_result_start, which waits for the answer; B:
 * mysql_real_query_start("SELECT SLEEP(1)"), which waits too.  A's read is
 * finished with mysql_read_query_result_cont while B still waits; then SQL
 * runs on A with mysql_real_query (ROW: first column of each row, or the
 * error as my_print.h prints it), B is finished (B: done), and SELECT
 * 'alive' runs on A (ROW: alive).
 */
#include <mysql.h>
#include <string.h>

#include "my_print.h"
#include "my_wait.h"

static MYSQL *connected(const char *socket_path)
{
    MYSQL *db = mysql_init(NULL);
    mysql_options(db, MYSQL_OPT_NONBLOCK, 0);
    mysql_options(db, MYSQL_SET_CHARSET_NAME, "gbk");
    if (!mysql_real_connect(db, NULL, "root", NULL, "qg", 0, socket_path, 0)) {
        print_error(db);
        return NULL;
    }
    return db;
}

static void print_rows(MYSQL *db)
{
    MYSQL_RES *res = mysql_store_result(db);
    MYSQL_ROW row;
    while (res && (row = mysql_fetch_row(res)) != NULL)
        printf("ROW: %s\n", row[0] ? row[0] : "NULL");
    mysql_free_result(res);
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    MYSQL *a = connected(argv[1]);
    MYSQL *b = connected(argv[1]);
    if (!a || !b)
        return 2;
    const char *sleep_a = "SELECT SLEEP(0.2)", *sleep_b = "SELECT SLEEP(1)";
    if (mysql_send_query(a, sleep_a, strlen(sleep_a)))
        return 2;
    my_bool a_failed;
    int a_status = mysql_read_query_result_start(&a_failed, a);
    int b_failed;
    int b_status = mysql_real_query_start(&b_failed, b, sleep_b, strlen(sleep_b));
    if (!a_status || !b_status) {
        printf("NOT-WAITING: a %d b %d\n", a_status, b_status);
        return 2;
    }
    while (a_status)
        a_status = mysql_read_query_result_cont(&a_failed, a, wait_for(a, a_status));
    print_rows(a);
    if (mysql_real_query(a, argv[2], strlen(argv[2])))
        print_error(a);
    else
        print_rows(a);
    while (b_status)
        b_status = mysql_real_query_cont(&b_failed, b, wait_for(b, b_status));
    print_rows(b);
    printf("B: done\n");
    if (mysql_query(a, "SELECT 'alive'") == 0)
        print_rows(a);
    else
        print_error(a);
    mysql_close(a);
    mysql_close(b);
    return 0;
}
