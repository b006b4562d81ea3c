/* The wire front asks a MySQL server for the connection's state itself
 * (src/wire/wire_probe.h says when and what): the question goes out and its
 * whole answer is read here, through the C library's own send and recv on
 * the connection's socket (or, inside TLS, the real SSL_write and SSL_read
 * on the program's SSL object: front_wire_tls.c), under the connection's
 * lock, inside the client's write of the query that needs the state.  The
 * client's calls never see a byte of either.
 *
 * A non-blocking socket is waited on with poll: the question and its answer
 * get at most QG_WIRE_PROBE_TIMEOUT_MS together.  Until the first byte of
 * the question is taken nothing has changed (the query is then refused as
 * before, state_unknown).  After it, the stream is the front's until the
 * whole answer is read: if it is not (an error of the socket, the server
 * gone, the time out, bytes that are not the answer), the client could
 * read the rest of the answer as its own, so the connection is given up: its
 * socket is shut down both ways and every later write through it is
 * refused.  An answer that is an error packet read whole leaves the stream
 * as it was: the query is refused, the connection stays usable. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>

#include "front_wire_fd.h"
#include "log.h"
#include "settings.h"
#include "wire_probe.h"

QG_WIRE_NEXT(send)
QG_WIRE_NEXT(recv)

/* Milliseconds left until *deadline (0 when past it). */
static int left_ms(const struct timespec *deadline)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long long ms = (long long)(deadline->tv_sec - now.tv_sec) * 1000 +
                   (deadline->tv_nsec - now.tv_nsec) / 1000000;
    return ms <= 0 ? 0 : ms > QG_WIRE_PROBE_TIMEOUT_MS ? QG_WIRE_PROBE_TIMEOUT_MS : (int)ms;
}

/* Waits until fd is ready for `events` or the deadline passes. */
static bool wait_ready(int fd, short events, const struct timespec *deadline)
{
    for (;;) {
        int ms = left_ms(deadline);
        if (ms == 0)
            return false;
        struct pollfd p = {.fd = fd, .events = events};
        int r = poll(&p, 1, ms);
        if (r > 0)
            return true; /* ready, or an error the next call reports */
        if (r == 0 || errno != EINTR)
            return false;
    }
}

/* A send or recv that returned r <= 0 may be made again: interrupted, or
 * the socket is ready now. */
static bool again(ssize_t r, int fd, short events, const struct timespec *deadline)
{
    return r < 0 && (errno == EINTR || ((errno == EAGAIN || errno == EWOULDBLOCK) &&
                                        wait_ready(fd, events, deadline)));
}

/* The plain socket's calls: never waiting, never raising SIGPIPE. */
static ssize_t socket_send(void *ctx, const uint8_t *p, size_t n, short *wait)
{
    *wait = POLLOUT;
    return next_send()(*(const int *)ctx, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static ssize_t socket_recv(void *ctx, uint8_t *p, size_t n, short *wait)
{
    *wait = POLLIN;
    return next_recv()(*(const int *)ctx, p, n, MSG_DONTWAIT);
}

/* Sends the whole question: how many bytes went. */
static size_t send_question(const qg_wire_probe_link *link, const qg_wire_buf *q,
                            const struct timespec *deadline)
{
    size_t sent = 0;
    while (sent < q->len) {
        short wait = POLLOUT;
        ssize_t r = link->send(link->ctx, q->data + sent, q->len - sent, &wait);
        if (r > 0)
            sent += (size_t)r;
        else if (!again(r, link->fd, wait, deadline))
            break;
    }
    return sent;
}

/* Reads the answer until it is whole (or cannot be). */
static qg_wire_probe_status read_answer(const qg_wire_conn *c, const qg_wire_probe_link *link,
                                        const struct timespec *deadline, qg_my_state *st)
{
    qg_wire_buf answer = {0};
    uint8_t chunk[4096];
    qg_wire_probe_status status = QG_PROBE_NEED;
    while (status == QG_PROBE_NEED) {
        short wait = POLLIN;
        ssize_t r = link->recv(link->ctx, chunk, sizeof chunk, &wait);
        if (r > 0)
            status = qg_wire_buf_append(&answer, chunk, (size_t)r)
                         ? qg_wire_probe_answer(c, answer.data, answer.len, st)
                         : QG_PROBE_FAILED;
        else if (!again(r, link->fd, wait, deadline))
            status = QG_PROBE_FAILED; /* the end of the stream, an error, the time out */
    }
    qg_wire_buf_free(&answer);
    return status;
}

static void tell(const char *level, const char *event, const char *detail)
{
    qg_log_write_event(qg_settings_get(), level, event, detail);
}

qg_wire_probe_outcome qg_wire_probe_server(qg_wire_conn *c, const send_ctx *sc)
{
    int fd = sc->fd;
    qg_wire_probe_link link = {fd, socket_send, socket_recv, &fd};
    if (sc->tls_link)
        link = *sc->tls_link;
    int saved = errno;
    qg_wire_buf question = {0};
    if (!qg_wire_probe_packet(&question)) {
        qg_wire_buf_free(&question);
        return QG_WIRE_PROBE_NOT_ASKED;
    }
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += QG_WIRE_PROBE_TIMEOUT_MS / 1000;
    deadline.tv_nsec += (long)(QG_WIRE_PROBE_TIMEOUT_MS % 1000) * 1000000;
    if (deadline.tv_nsec >= 1000000000) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000;
    }
    size_t sent = send_question(&link, &question, &deadline);
    bool whole = sent == question.len;
    qg_wire_buf_free(&question);
    qg_my_state st;
    qg_wire_probe_status status =
        whole ? read_answer(c, &link, &deadline, &st) : sent ? QG_PROBE_FAILED : QG_PROBE_ERROR;
    errno = saved;
    switch (status) {
    case QG_PROBE_DONE: {
        qg_wire_probe_taken(c, &st);
        const qg_settings *s = qg_settings_get();
        if (s->verbosity >= 2) {
            char detail[160];
            qg_my_state_describe(&st, detail, sizeof detail);
            tell("debug", "wire_probe", detail);
        }
        return QG_WIRE_PROBE_KNOWN;
    }
    case QG_PROBE_ERROR:
        tell("info", "wire_probe_unanswered",
             whole ? "the server answered the question about the connection's state with an error"
                   : "the question about the connection's state could not be sent");
        return QG_WIRE_PROBE_NOT_ASKED;
    case QG_PROBE_NEED:
    case QG_PROBE_FAILED:
        break;
    }
    /* part of the question or of its answer is in the stream: the
     * connection cannot go on */
    shutdown(fd, SHUT_RDWR);
    errno = saved;
    qg_wire_set_passthrough(c, QG_WIRE_UNREAD_PROBE);
    return QG_WIRE_PROBE_BROKE;
}
