/* The non-blocking libmariadb calls of the test clients (my_legacy.c,
 * my_async_order.c): waiting for what a *_start or *_cont call asked. */
#ifndef MY_WAIT_H
#define MY_WAIT_H

#include <mysql.h>
#include <poll.h>

/* Waits on the connection's socket for what the non-blocking call asked. */
static int __attribute__((unused)) wait_for(MYSQL *mysql, int status)
{
    struct pollfd p = {.fd = mysql_get_socket(mysql)};
    if (status & MYSQL_WAIT_READ)
        p.events |= POLLIN;
    if (status & MYSQL_WAIT_WRITE)
        p.events |= POLLOUT;
    if (status & MYSQL_WAIT_EXCEPT)
        p.events |= POLLPRI;
    if (poll(&p, 1, 10000) <= 0)
        return MYSQL_WAIT_TIMEOUT;
    return (p.revents & POLLIN ? MYSQL_WAIT_READ : 0) | (p.revents & POLLOUT ? MYSQL_WAIT_WRITE : 0) |
           (p.revents & POLLPRI ? MYSQL_WAIT_EXCEPT : 0);
}

#endif
