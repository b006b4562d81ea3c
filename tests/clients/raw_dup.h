/* A duplicate of a client library's socket, made the way the test asks, and
 * raw bytes written through it (pg_dup.c, my_dup.c); or the socket itself,
 * written through a stdio stream or a pipe. */
#ifndef RAW_DUP_H
#define RAW_DUP_H

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* A copy of fd received from the process itself with SCM_RIGHTS. */
static int received_copy(int fd)
{
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0)
        return -1;
    char byte = 'x';
    union {
        struct cmsghdr align;
        char bytes[CMSG_SPACE(sizeof(int))];
    } control;
    memset(&control, 0, sizeof control);
    struct iovec iov = {&byte, 1};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.bytes,
                         .msg_controllen = sizeof control.bytes};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    int copy = -1;
    if (sendmsg(pair[0], &msg, 0) == 1 && recvmsg(pair[1], &msg, 0) == 1 &&
        (c = CMSG_FIRSTHDR(&msg)) != NULL && c->cmsg_type == SCM_RIGHTS)
        memcpy(&copy, CMSG_DATA(c), sizeof copy);
    close(pair[0]);
    close(pair[1]);
    return copy;
}

/* Written through the socket itself, not a copy (raw_write says how). */
static int through_socket(const char *how)
{
    return strcmp(how, "fdopen") == 0 || strcmp(how, "splice") == 0;
}

/* how: dup | dup2 | dup3 | F_DUPFD | F_DUPFD_CLOEXEC | SCM_RIGHTS: a copy
 * of fd; fdopen | splice: fd itself. */
static int __attribute__((unused)) duplicate(int fd, const char *how)
{
    if (through_socket(how))
        return fd;
    if (strcmp(how, "SCM_RIGHTS") == 0)
        return received_copy(fd);
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

/* Writes all of p the way `how` says: through a stdio stream (fdopen) or a
 * pipe spliced into fd (splice), else with write_all; false (after printing
 * WRITE-FAILED: strerror) when that fails. */
static int __attribute__((unused)) raw_write(int fd, const char *how, const unsigned char *p,
                                             size_t n)
{
    if (strcmp(how, "fdopen") == 0) {
        FILE *f = fdopen(fd, "w"); /* never closed: it would close the library's socket */
        if (!f || fwrite(p, 1, n, f) != n || fflush(f) != 0) {
            printf("WRITE-FAILED: %s\n", strerror(errno));
            return 0;
        }
        return 1;
    }
    if (strcmp(how, "splice") != 0)
        return write_all(fd, p, n);
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0 || write(pipe_fds[1], p, n) != (ssize_t)n)
        exit(2);
    while (n > 0) {
        ssize_t r = splice(pipe_fds[0], NULL, fd, NULL, n, 0);
        if (r < 0 && errno == EAGAIN) {
            wait_for(fd, POLLOUT);
            continue;
        }
        if (r <= 0) {
            printf("WRITE-FAILED: %s\n", strerror(errno));
            break;
        }
        n -= (size_t)r;
    }
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return n == 0;
}

/* Closes what duplicate made (never the library's own socket). */
static void __attribute__((unused)) release(int copy, const char *how)
{
    if (!through_socket(how))
        close(copy);
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
