/* A duplicate of a client library's socket, made the way the test asks, and
 * raw bytes written through it (pg_dup.c, my_dup.c). */
#ifndef RAW_DUP_H
#define RAW_DUP_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* how: dup | dup2 | dup3 | F_DUPFD | F_DUPFD_CLOEXEC */
static int __attribute__((unused)) duplicate(int fd, const char *how)
{
    if (strcmp(how, "dup") == 0)
        return dup(fd);
    if (strcmp(how, "dup2") == 0)
        return dup2(fd, 200);
    if (strcmp(how, "dup3") == 0)
        return dup3(fd, 201, O_CLOEXEC);
    if (strcmp(how, "F_DUPFD") == 0)
        return fcntl(fd, F_DUPFD, 202);
    if (strcmp(how, "F_DUPFD_CLOEXEC") == 0)
        return fcntl(fd, F_DUPFD_CLOEXEC, 203);
    return -1;
}

/* The libraries' sockets are non-blocking: waits until fd is ready. */
static void wait_for(int fd, short events)
{
    struct pollfd p = {.fd = fd, .events = events};
    poll(&p, 1, 10000);
}

/* Writes all of p; false (after printing WRITE-FAILED: strerror) when a
 * write fails. */
static int __attribute__((unused)) write_all(int fd, const unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t r = write(fd, p, n);
        if (r < 0 && (errno == EINTR || errno == EAGAIN)) {
            wait_for(fd, POLLOUT);
            continue;
        }
        if (r <= 0) {
            printf("WRITE-FAILED: %s\n", strerror(errno));
            return 0;
        }
        p += r;
        n -= (size_t)r;
    }
    return 1;
}

static int __attribute__((unused)) read_exact(int fd, unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && (errno == EINTR || errno == EAGAIN)) {
            wait_for(fd, POLLIN);
            continue;
        }
        if (r <= 0)
            return 0;
        p += r;
        n -= (size_t)r;
    }
    return 1;
}

#endif
