/* Output of the libmariadb test clients: a failed statement as one line,
 *   ERROR: ERRNO SQLSTATE MSG   (newlines in the message become spaces)
 */
#ifndef MY_PRINT_H
#define MY_PRINT_H

#include <mysql.h>
#include <stdio.h>

static void print_error(MYSQL *mysql)
{
    const char *msg = mysql_error(mysql);
    printf("ERROR: %u %s ", mysql_errno(mysql), mysql_sqlstate(mysql));
    for (; *msg; msg++)
        putchar(*msg == '\n' ? ' ' : *msg);
    putchar('\n');
    fflush(stdout);
}

#endif
