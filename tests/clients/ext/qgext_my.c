/* An extension module the way PHP's mysqli.so or Perl's DBD/mysql.so is
 * one: a shared object linked to libmariadb that a program dlopen()s after
 * start-up (tests/clients/both_ext.c).
 *
 * qgext_my_query: connects as root over socket, sends SET NAMES charset as
 * a plain query, runs sql with mysql_real_query; 0 and the first value in
 * out, or 1 and mysql_error in out. */
#include <mysql.h>
#include <stdio.h>
#include <string.h>

__attribute__((visibility("default"))) int qgext_my_query(const char *socket, const char *charset,
                                                          const char *sql, char *out, size_t cap)
{
    MYSQL *mysql = mysql_init(NULL);
    if (!mysql || !mysql_real_connect(mysql, NULL, "root", "", NULL, 0, socket, 0)) {
        snprintf(out, cap, "connect: %s", mysql ? mysql_error(mysql) : "mysql_init");
        if (mysql)
            mysql_close(mysql);
        return 1;
    }
    char set[96];
    snprintf(set, sizeof set, "SET NAMES %s", charset);
    int failed = mysql_query(mysql, set) != 0 || mysql_real_query(mysql, sql, strlen(sql)) != 0;
    MYSQL_RES *res = failed ? NULL : mysql_store_result(mysql);
    MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
    if (!row || !row[0])
        failed = 1;
    snprintf(out, cap, "%s", failed ? mysql_error(mysql) : row[0]);
    if (res)
        mysql_free_result(res);
    mysql_close(mysql);
    return failed;
}
