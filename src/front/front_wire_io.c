/* The wire front's entry points: the C library's calls that create,
 * duplicate, close, write and read descriptors (see front_wire.c).  A
 * descriptor that is not a database connection costs one load from the
 * table before libc's own function runs. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include "front_wire_fd.h"
#include "real.h"
#include "hot.h"
#include "wire_stream.h"

/* ------------------------------------------------------- real functions */

QG_WIRE_NEXT(socket)
QG_WIRE_NEXT(socketpair)
QG_WIRE_NEXT(accept)
QG_WIRE_NEXT(accept4)
QG_WIRE_NEXT(close)
QG_WIRE_NEXT(dup)
QG_WIRE_NEXT(dup2)
QG_WIRE_NEXT(dup3)
QG_WIRE_NEXT(fcntl)
QG_WIRE_NEXT(write)
QG_WIRE_NEXT(send)
QG_WIRE_NEXT(sendto)
QG_WIRE_NEXT(sendmsg)
QG_WIRE_NEXT(writev)
QG_WIRE_NEXT(read)
QG_WIRE_NEXT(recv)
QG_WIRE_NEXT(recvfrom)
QG_WIRE_NEXT(recvmsg)
QG_WIRE_NEXT(sendmmsg)
QG_WIRE_NEXT(recvmmsg)
QG_WIRE_NEXT(readv)
QG_WIRE_NEXT(pwritev2)
QG_WIRE_NEXT(preadv2)

/* send_bytes of a call made with sendmsg: its message with p[0, n) as its
 * data, its control data sent once (out of line: its frame is not the
 * other calls'). */
__attribute__((noinline)) static ssize_t sendmsg_bytes(send_ctx *sc, const uint8_t *p, size_t n)
{
    struct iovec iov = {(void *)p, n};
    struct msghdr m = *sc->msg;
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    if (sc->control_sent) {
        m.msg_control = NULL;
        m.msg_controllen = 0;
    }
    ssize_t r = next_sendmsg()(sc->fd, &m, sc->flags);
    if (r > 0)
        sc->control_sent = true;
    return r;
}

/* send_bytes for every path but a send(2) whose function is known: out
 * of line, with the frame its calls need. */
__attribute__((noinline)) static ssize_t send_bytes_other(send_ctx *sc, const uint8_t *p, size_t n)
{
    switch (sc->how) {
    case HOW_WRITE:
        if (sc->dontwait) { /* write(2) on a socket is send(2) without flags */
            ssize_t r = next_send()(sc->fd, p, n, MSG_DONTWAIT);
            if (r >= 0 || errno != ENOTSOCK)
                return r;
        }
        return next_write()(sc->fd, p, n);
    case HOW_SEND:
        return next_send()(sc->fd, p, n, sc->flags);
    case HOW_SENDTO:
        return next_sendto()(sc->fd, p, n, sc->flags, sc->addr, sc->addrlen);
    case HOW_SENDMSG:
        break;
    }
    return sendmsg_bytes(sc, p, n);
}

/* The qg_wire_io send: a send(2) goes to the C library's with a jump,
 * without a frame. */
static ssize_t send_bytes(void *ctx, const uint8_t *p, size_t n)
{
    send_ctx *sc = ctx;
    __typeof__(&send) real = known_send();
    if (__builtin_expect(sc->how == HOW_SEND && real != NULL, 1))
        return real(sc->fd, p, n, sc->flags);
    return send_bytes_other(sc, p, n);
}

/* ------------------------------------------------------------ the paths */

/* The candidate's head followed by p[0, n): up to cap bytes in out. */
static size_t joined_head(const wire_head *h, const uint8_t *p, size_t n, uint8_t *out,
                          size_t cap)
{
    size_t len = qg_wire_head_len(h);
    size_t have = len < cap ? len : cap;
    memcpy(out, h->bytes, have);
    size_t more = n < cap - have ? n : cap - have;
    memcpy(out + have, p, more);
    return have + more;
}

/* A PostgreSQL connection whose TLS starts at its first byte: the wire
 * front follows PostgreSQL's TLS from the SSLRequest before it, and this
 * one has none, so its bytes are not read. */
static wire_fd *direct_tls(int fd)
{
    wire_fd *w = qg_wire_recognise(fd, QG_WIRE_PG, NULL, 0, 0);
    if (w && w->conn.unread == QG_WIRE_READ_ALL)
        qg_wire_set_passthrough(&w->conn, QG_WIRE_UNREAD_DIRECT_TLS);
    return w;
}

/* The entry of fd for a write whose first bytes are p[0, n): a connection,
 * or NULL when the bytes pass as they are; then *watch says that fd is a
 * candidate whose bytes so far are too few to say what it carries, and
 * note_head must keep the ones written. */
static wire_fd *entry_for_write(int fd, const uint8_t *p, size_t n, bool *watch)
{
    *watch = false;
    wire_fd *w = qg_wire_fd_entry(fd);
    if (w != QG_WIRE_CANDIDATE)
        return qg_wire_is_conn(w) ? w : NULL;
    const wire_head *h = &qg_wire_heads[fd];
    if (!qg_wire_head_read(h)) {
        uint8_t head[8];
        size_t have = joined_head(h, p, n, head, sizeof head);
        if (have == 8 && qg_wire_looks_like_pg(head, 8) && qg_wire_enabled())
            return qg_wire_recognise(fd, QG_WIRE_PG, head, 8, qg_wire_head_len(h));
        if (have < 8 && qg_wire_may_become_pg(head, have) && qg_wire_enabled()) {
            *watch = true;
            return NULL;
        }
        if (qg_wire_head_len(h) == 0 && qg_wire_is_pg_direct_tls(p, n) && qg_wire_enabled())
            return direct_tls(fd);
    }
    qg_wire_drop_candidate(fd);
    return NULL;
}

/* r bytes of p[0, 8) went out first on candidate fd. */
static void note_head(int fd, const uint8_t *p, ssize_t r)
{
    wire_head *h = &qg_wire_heads[fd];
    size_t len = qg_wire_head_len(h);
    if (r <= 0 || qg_wire_fd_entry(fd) != QG_WIRE_CANDIDATE || len + (size_t)r >= 8)
        return;
    memcpy(h->bytes + len, p, (size_t)r);
    qg_wire_head_set(h, len + (size_t)r, false);
}

/* A write through a descriptor whose bytes cannot be followed: refused
 * (-1, EACCES) or, in audit, passed (0); said once. */
static int refused_write(wire_fd *w)
{
    if (!qg_wire_refuse_write(w))
        return 0;
    errno = EACCES;
    return -1;
}

/* After a send with MSG_DONTWAIT found fd full, in place of the kernel's
 * own wait in the program's call: true when there is room to try again;
 * false when the call ends as the kernel would end it (errno set): the
 * socket is the program's non-blocking one (EAGAIN), its send timeout
 * (SO_SNDTIMEO) passed (EAGAIN), or a signal came after some bytes went
 * (`sent`: the count is returned).  A signal before any byte restarts the
 * wait, as SA_RESTART would restart the call. */
static bool wait_for_room(int fd, bool sent)
{
    int saved = errno;
    int fl = next_fcntl()(fd, F_GETFL);
    if (fl >= 0 && (fl & O_NONBLOCK)) {
        errno = EAGAIN;
        return false;
    }
    struct timeval limit = {0, 0};
    socklen_t len = sizeof limit;
    int timeout_ms = -1;
    if (getsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, &len) == 0 &&
        (limit.tv_sec > 0 || limit.tv_usec > 0))
        timeout_ms = limit.tv_sec > INT_MAX / 1000 - 1
                         ? INT_MAX
                         : (int)(limit.tv_sec * 1000 + (limit.tv_usec + 999) / 1000);
    struct pollfd pfd = {.fd = fd, .events = POLLOUT};
    for (;;) {
        int r = poll(&pfd, 1, timeout_ms);
        if (r > 0) {
            errno = saved;
            return true;
        }
        if (r == 0) {
            errno = EAGAIN;
            return false;
        }
        if (errno != EINTR || sent)
            return false;
    }
}

/* A connection's route (qg_wire_route) that says it is settled, or that
 * its socket carries TLS records the SSL calls decrypt: the bytes pass
 * without the lock (which an SSL_write being followed holds). */
static bool passes_unlocked(unsigned route)
{
    return route & (QG_WIRE_ROUTE_SETTLED | QG_WIRE_ROUTE_TLS);
}

/* Raw bytes of a connection that just turned out not to be read: -1 with
 * EACCES where they may not pass, else what the kernel took. */
static ssize_t unread_write(wire_fd *w, send_ctx *sc, const void *buf, size_t n)
{
    if (!qg_wire_unread_may_pass(sc, &w->conn)) {
        errno = EACCES;
        return -1;
    }
    return send_bytes(sc, buf, n);
}

/* Under the lock: one write of p[0, n) through the connection. */
static inline __attribute__((always_inline)) ssize_t
write_locked(wire_fd *w, send_ctx *sc, const qg_wire_io *io, const uint8_t *p, size_t n)
{
    if (!w->conn.tls || !qg_wire_tls_raw(w, sc->fd))
        return qg_wire_write(&w->conn, io, p, n);
    if (w->conn.passthrough) /* TLS by another stack */
        return unread_write(w, sc, p, n);
    return send_bytes(sc, p, n);
}

/* Under the lock: until no write waits for room outside it. */
QG_COLD static void wait_for_writer(wire_fd *w)
{
    while (w->write_waiting) {
        qg_wire_unlock(w);
        qg_wire_turn_take(w);
        qg_wire_turn_put(w);
        qg_wire_lock(w);
    }
}

/* Under the lock, after write_locked of buf[0, n) returned r short of n
 * with MSG_DONTWAIT where the program's call would wait: the rest, written
 * as the program's blocking call would write it.  The server may be
 * waiting for its answers to be read, by another thread that needs the
 * lock: the wait for room is outside it, between two writes of the stream,
 * where a non-blocking program would wait too. */
QG_COLD static ssize_t finish_blocking_write(wire_fd *w, send_ctx *sc, const qg_wire_io *io,
                                             const uint8_t *buf, size_t n, ssize_t r)
{
    if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
        return r;
    size_t done = r > 0 ? (size_t)r : 0;
    qg_wire_turn_take(w);
    w->write_waiting = true;
    while (done < n) {
        qg_wire_unlock(w);
        bool room = wait_for_room(sc->fd, done > 0);
        int why = errno;
        qg_wire_lock(w);
        errno = why;
        if (!room) {
            r = -1;
            break;
        }
        r = write_locked(w, sc, io, buf + done, n - done);
        if (r > 0)
            done += (size_t)r;
        else if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            break;
    }
    int why = errno;
    w->write_waiting = false;
    qg_wire_turn_put(w);
    errno = why;
    return done > 0 ? (ssize_t)done : r;
}

/* A write through a connection whose route passes_unlocked. */
static ssize_t unlocked_write(wire_fd *w, unsigned route, send_ctx *sc, const void *buf, size_t n)
{
    if ((route & QG_WIRE_ROUTE_TLS) && qg_wire_tls_unfollowed(w))
        return qg_wire_give_up_refused(w, sc->fd, unread_write(w, sc, buf, n));
    return send_bytes(sc, buf, n);
}

/* A write through a connection whose route is 0: under the lock, read.  In
 * line in the interposers' common path (entry_write); called from the
 * others (guarded_write). */
__attribute__((always_inline)) static inline ssize_t guarded_write_locked(wire_fd *w, send_ctx *sc,
                                                                         const void *buf, size_t n)
{
    qg_wire_io io = {send_bytes, qg_wire_check_query, qg_wire_unread_may_pass, sc};
    if (!(sc->flags & MSG_DONTWAIT)) {
        sc->flags |= MSG_DONTWAIT;
        sc->dontwait = true;
    }
    qg_wire_lock(w);
    if (__builtin_expect(w->write_waiting, 0))
        wait_for_writer(w);
    ssize_t r = write_locked(w, sc, &io, buf, n);
    if (__builtin_expect((size_t)r != n, 0) && sc->dontwait)
        r = finish_blocking_write(w, sc, &io, buf, n, r);
    qg_wire_after_use(w);
    qg_wire_unlock(w);
    return r < 0 ? qg_wire_give_up_refused(w, sc->fd, r) : r;
}

/* A write through a connection not refused. */
__attribute__((noinline)) static ssize_t guarded_write(wire_fd *w, send_ctx *sc, const void *buf,
                                                       size_t n)
{
    unsigned route = qg_wire_route(w);
    if (passes_unlocked(route))
        return unlocked_write(w, route, sc, buf, n);
    return guarded_write_locked(w, sc, buf, n);
}

/* A candidate that received p[0, r): the connection when it begins with
 * a MySQL greeting (fed the head received before p), else NULL. */
static wire_fd *recognise_read(int fd, const uint8_t *p, size_t r)
{
    wire_head *h = &qg_wire_heads[fd];
    size_t len = qg_wire_head_len(h);
    if (len == 0 || qg_wire_head_read(h)) {
        uint8_t head[64];
        size_t have = joined_head(h, p, r, head, sizeof head);
        if (have >= 6 && qg_wire_looks_like_mysql(head, have) && qg_wire_enabled()) {
            uint8_t before[QG_WIRE_HEAD_MAX];
            memcpy(before, h->bytes, len);
            wire_fd *w = qg_wire_recognise(fd, QG_WIRE_MYSQL, NULL, 0, 0);
            if (w && len > 0) {
                qg_wire_lock(w);
                qg_wire_read(&w->conn, before, len);
                qg_wire_unlock(w);
            }
            return w;
        }
        if (have < 6 && qg_wire_may_become_mysql(head, have) && qg_wire_enabled()) {
            memcpy(h->bytes + len, p, r);
            qg_wire_head_set(h, len + r, true);
            return NULL;
        }
    }
    qg_wire_drop_candidate(fd);
    return NULL;
}

/* Whether the bytes read through an entry are looked at: not where there
 * is none, nor on a socket a client library's front checks (its replies
 * are the library front's, which asks the library for the session). */
static inline bool read_here(const wire_fd *w)
{
    return w != NULL && w != QG_WIRE_LIBRARY;
}

/* Bytes the client received on fd (r of them in its buffer p).  Inlined
 * into the interposers, which then make one call for a read
 * (docs/PERFORMANCE.md, "Choices in the code"). */
__attribute__((always_inline)) static inline void observe(int fd, wire_fd *w, void *p, size_t r)
{
    if (w == QG_WIRE_CANDIDATE)
        w = recognise_read(fd, p, r);
    /* refused, or passing without the lock: not read */
    if (!qg_wire_is_conn(w) || qg_wire_route(w) != 0)
        return;
    qg_wire_lock(w);
    if (!w->conn.tls || !qg_wire_tls_raw(w, fd)) {
        qg_wire_read(&w->conn, p, r);
        if (w->conn.hide_compression)
            qg_wire_my_hide_compression(&w->conn, p, r);
    }
    qg_wire_after_use(w);
    qg_wire_unlock(w);
}

static void observe_iov(int fd, const struct iovec *iov, int iovcnt, size_t r)
{
    for (int i = 0; i < iovcnt && r > 0; i++) {
        size_t k = r < iov[i].iov_len ? r : iov[i].iov_len;
        wire_fd *w = qg_wire_fd_entry(fd);
        if (!w)
            return;
        if (k > 0)
            observe(fd, w, iov[i].iov_base, k);
        r -= k;
    }
}

static size_t iov_bytes(const struct iovec *iov, int iovcnt)
{
    size_t n = 0;
    for (int i = 0; i < iovcnt; i++)
        n += iov[i].iov_len;
    return n;
}

/* Up to 8 first bytes of scattered data, for recognition. */
static size_t gather_head(const struct iovec *iov, int iovcnt, uint8_t head[8])
{
    size_t n = 0;
    for (int i = 0; i < iovcnt && n < 8; i++) {
        size_t k = iov[i].iov_len < 8 - n ? iov[i].iov_len : 8 - n;
        memcpy(head + n, iov[i].iov_base, k);
        n += k;
    }
    return n;
}

static ssize_t guarded_writev(wire_fd *w, send_ctx *sc, const struct iovec *iov, int iovcnt)
{
    size_t total = 0;
    for (int i = 0; i < iovcnt; i++) {
        if (iov[i].iov_len == 0)
            continue;
        ssize_t r = guarded_write(w, sc, iov[i].iov_base, iov[i].iov_len);
        if (r < 0)
            return total ? (ssize_t)total : -1;
        total += (size_t)r;
        if ((size_t)r < iov[i].iov_len)
            break;
    }
    return (ssize_t)total;
}

/* ---------------------------------------------------------- descriptors */

QG_EXPORT int socket(int domain, int type, int protocol)
{
    int fd = next_socket()(domain, type, protocol);
    if (fd >= 0 && fd < QG_WIRE_FDS) {
        bool stream = (type & 0xf) == SOCK_STREAM &&
                      (domain == AF_INET || domain == AF_INET6 || domain == AF_UNIX);
        qg_wire_fd_put(fd, stream && qg_wire_enabled() ? QG_WIRE_CANDIDATE : NULL);
        qg_wire_set_made(fd, true);
    }
    return fd;
}

QG_EXPORT int socketpair(int domain, int type, int protocol, int fds[2])
{
    int rc = next_socketpair()(domain, type, protocol, fds);
    if (rc == 0) {
        qg_wire_set_made(fds[0], true);
        qg_wire_set_made(fds[1], true);
    }
    return rc;
}

QG_EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
    int rc = next_accept()(fd, addr, len);
    qg_wire_set_made(rc, true);
    return rc;
}

QG_EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
    int rc = next_accept4()(fd, addr, len, flags);
    qg_wire_set_made(rc, true);
    return rc;
}

QG_EXPORT int close(int fd)
{
    if (qg_wire_fd_entry(fd))
        qg_wire_fd_put(fd, NULL);
    qg_wire_set_made(fd, false);
    return next_close()(fd);
}

/* copy, a duplicate of fd made by the program, shares fd's entry and mark */
static void duplicated(int fd, int copy)
{
    if (copy < 0 || copy == fd)
        return;
    if (qg_wire_fd_entry(fd) || qg_wire_fd_entry(copy))
        qg_wire_fd_put(copy, qg_wire_fd_share(fd));
    qg_wire_set_made(copy, qg_wire_made(fd));
}

QG_EXPORT int dup(int fd)
{
    int copy = next_dup()(fd);
    duplicated(fd, copy);
    return copy;
}

QG_EXPORT int dup2(int fd, int to)
{
    int copy = next_dup2()(fd, to);
    duplicated(fd, copy);
    return copy;
}

QG_EXPORT int dup3(int fd, int to, int flags)
{
    int copy = next_dup3()(fd, to, flags);
    duplicated(fd, copy);
    return copy;
}

/* Programs call fcntl around every TLS operation (PHP's streams), and only
 * F_DUPFD* concern the front: the others go to the C library's as a jump,
 * without a frame.  The entry points take the third argument as the
 * register a variadic call passes it in (an int or a pointer, read whole as
 * the C library's own fcntl reads it), not as `...`: a variadic definition
 * spills the argument registers to a frame that it keeps around the call.
 * Every Linux ABI passes the integer and pointer arguments of a variadic
 * call as it passes a prototyped call's. */
QG_COLD static int fcntl_dup_or_first(int fd, int cmd, void *arg)
{
    int rc = next_fcntl()(fd, cmd, arg);
    if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
        duplicated(fd, rc);
    return rc;
}

static inline int fcntl_forward(int fd, int cmd, void *arg)
{
    __typeof__(&fcntl) real = known_fcntl();
    if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC || !real)
        return fcntl_dup_or_first(fd, cmd, arg);
    return real(fd, cmd, arg);
}

int qg_fcntl(int fd, int cmd, void *arg) __asm__("fcntl");
int qg_fcntl64(int fd, int cmd, void *arg) __asm__("fcntl64");

QG_EXPORT int qg_fcntl(int fd, int cmd, void *arg)
{
    return fcntl_forward(fd, cmd, arg);
}

QG_EXPORT int qg_fcntl64(int fd, int cmd, void *arg)
{
    return fcntl_forward(fd, cmd, arg);
}

/* --------------------------------------------------------------- output */

/* A write of p[0, n) on fd, whose entry w is not NULL nor a followed
 * connection's. */
__attribute__((noinline)) static ssize_t entry_write_other(send_ctx *sc, wire_fd *w, const void *p,
                                                           size_t n)
{
    if (qg_wire_fd_entry(sc->fd) == QG_WIRE_UNSEEN && qg_wire_unseen_refused(sc->fd, p, n, n)) {
        errno = EACCES;
        return -1;
    }
    bool watch;
    w = entry_for_write(sc->fd, p, n, &watch);
    if (!w || (qg_wire_fd_refused(w) && refused_write(w) == 0)) {
        ssize_t r = send_bytes(sc, p, n);
        if (watch)
            note_head(sc->fd, p, r);
        return r;
    }
    if (qg_wire_fd_refused(w))
        return qg_wire_give_up_refused(w, sc->fd, -1);
    return guarded_write(w, sc, p, n);
}

/* A write of p[0, n) on fd, whose entry w is not NULL: a followed
 * connection's takes the lock from the interposer itself, without a call
 * between, after one test of its route (docs/PERFORMANCE.md, "Choices in
 * the code"). */
__attribute__((always_inline)) static inline ssize_t entry_write(send_ctx *sc, wire_fd *w,
                                                                const void *p, size_t n)
{
    if (__builtin_expect(qg_wire_is_conn(w), 1)) {
        unsigned route = qg_wire_route(w);
        if (__builtin_expect(route == 0, 1))
            return guarded_write_locked(w, sc, p, n);
        if (!(route & QG_WIRE_ROUTE_REFUSED))
            return unlocked_write(w, route, sc, p, n);
    }
    return entry_write_other(sc, w, p, n);
}

/* write(2) on fd, which has no entry, of bytes that may begin a query, or
 * before the C library's write is known: refused where they are a query on
 * a socket this process did not make. */
__attribute__((noinline)) static ssize_t unentered_write(int fd, const void *buf, size_t n)
{
    if (qg_wire_query_like(buf, n) && qg_wire_foreign_query(fd, buf, n, n)) {
        errno = EACCES;
        return -1;
    }
    return next_write()(fd, buf, n);
}

/* write(2) on fd, whose entry w is not NULL, nor a connection whose route
 * passes it unlocked as it is. */
__attribute__((noinline)) static ssize_t entry_write_from(int fd, wire_fd *w, const void *buf,
                                                          size_t n, const void *caller)
{
    if (n == 0 || w == QG_WIRE_LIBRARY)
        return next_write()(fd, buf, n);
    send_ctx sc = {.fd = fd, .how = HOW_WRITE, .caller = caller};
    return entry_write(&sc, w, buf, n);
}

/* write(2) of TLS records through a connection followed inside OpenSSL's
 * calls, as unlocked_write writes them. */
__attribute__((noinline)) static ssize_t tls_record_write(int fd, wire_fd *w, const void *buf,
                                                          size_t n, const void *caller)
{
    if (!qg_wire_tls_unfollowed(w))
        return next_write()(fd, buf, n);
    send_ctx sc = {.fd = fd, .how = HOW_WRITE, .caller = caller};
    return qg_wire_give_up_refused(w, fd, unread_write(w, &sc, buf, n));
}

/* Without a frame of its own: the common paths go to the C library's
 * write with a jump, a connection's to a function that does the rest
 * (docs/PERFORMANCE.md, "Choices in the code"). */
ssize_t qg_wire_write_from(int fd, const void *buf, size_t n, const void *caller)
{
    wire_fd *w = qg_wire_fd_entry(fd);
    __typeof__(&write) real = known_write();
    if (__builtin_expect(!w, 1)) {
        if (__builtin_expect(qg_wire_query_like(buf, n) || !real, 0))
            return unentered_write(fd, buf, n);
        return real(fd, buf, n);
    }
    /* a connection whose raw bytes pass without the lock (settled, or TLS
     * records), as unlocked_write passes them */
    unsigned route = qg_wire_is_conn(w) ? qg_wire_route(w) : 0;
    if (route != 0 && !(route & QG_WIRE_ROUTE_REFUSED) && n > 0) {
        if ((route & QG_WIRE_ROUTE_TLS) && !(qg_wire_in_followed_openssl() && real))
            return tls_record_write(fd, w, buf, n, caller);
        if (real)
            return real(fd, buf, n);
    }
    return entry_write_from(fd, w, buf, n, caller);
}

QG_HOT QG_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
    return qg_wire_write_from(fd, buf, n, __builtin_return_address(0));
}

/* send(2) on a socket no library front guards, or before the C library's
 * send is known (w: the socket's entry, as send read it): out of line, so
 * that send itself saves no registers for these paths. */
__attribute__((noinline)) static ssize_t send_unguarded(int fd, const void *buf, size_t n,
                                                        int flags, const void *caller, wire_fd *w)
{
    if (__builtin_expect(!w, 1) || n == 0 || w == QG_WIRE_LIBRARY) {
        if (__builtin_expect(!w && qg_wire_query_like(buf, n), 0) &&
            qg_wire_foreign_query(fd, buf, n, n)) {
            errno = EACCES;
            return -1;
        }
        return next_send()(fd, buf, n, flags);
    }
    send_ctx sc = {.fd = fd, .how = HOW_SEND, .flags = flags, .caller = caller};
    return entry_write(&sc, w, buf, n);
}

/* A socket a library front guards (QG_WIRE_LIBRARY: its queries are
 * checked at the library's calls) goes to the C library's send with a
 * jump. */
QG_HOT QG_EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    __typeof__(&send) known = known_send();
    wire_fd *w = qg_wire_fd_entry(fd);
    if (w == QG_WIRE_LIBRARY && known)
        return known(fd, buf, n, flags);
    return send_unguarded(fd, buf, n, flags, __builtin_return_address(0), w);
}

QG_EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags,
                         const struct sockaddr *addr, socklen_t addrlen)
{
    wire_fd *w = qg_wire_fd_entry(fd);
    if (__builtin_expect(!w, 1) || n == 0) {
        if (__builtin_expect(!w && qg_wire_query_like(buf, n), 0) &&
            qg_wire_foreign_query(fd, buf, n, n)) {
            errno = EACCES;
            return -1;
        }
        return next_sendto()(fd, buf, n, flags, addr, addrlen);
    }
    send_ctx sc = {.fd = fd, .how = HOW_SENDTO, .flags = flags, .addr = addr,
                   .addrlen = addrlen, .caller = __builtin_return_address(0)};
    return entry_write(&sc, w, buf, n);
}

/* A scattered write on fd, which has no entry: true when it must fail
 * (qg_wire_foreign_query). */
static bool foreign_query_iov(int fd, const struct iovec *iov, int iovcnt)
{
    uint8_t head[8] = {0};
    size_t n = iov && iovcnt > 0 ? gather_head(iov, iovcnt, head) : 0;
    return __builtin_expect(qg_wire_query_like(head, n), 0) &&
           qg_wire_foreign_query(fd, head, n, iov_bytes(iov, iovcnt));
}

/* The program's own scattered call, unchanged. */
static ssize_t raw_scattered(const send_ctx *sc, const struct iovec *iov, int iovcnt)
{
    if (sc->how == HOW_SENDMSG)
        return next_sendmsg()(sc->fd, sc->msg, sc->flags);
    return next_writev()(sc->fd, iov, iovcnt);
}

/* A writev or sendmsg on a descriptor whose entry is not NULL. */
static ssize_t entry_writev(send_ctx *sc, const struct iovec *iov, int iovcnt)
{
    uint8_t head[8] = {0};
    size_t n = gather_head(iov, iovcnt, head);
    if (qg_wire_fd_entry(sc->fd) == QG_WIRE_UNSEEN &&
        qg_wire_unseen_refused(sc->fd, head, n, iov_bytes(iov, iovcnt))) {
        errno = EACCES;
        return -1;
    }
    bool watch = false;
    wire_fd *w = n ? entry_for_write(sc->fd, head, n, &watch) : NULL;
    if (w && qg_wire_fd_refused(w) && refused_write(w) < 0)
        return qg_wire_give_up_refused(w, sc->fd, -1);
    if (!w || qg_wire_fd_refused(w)) {
        ssize_t r = raw_scattered(sc, iov, iovcnt);
        if (watch)
            note_head(sc->fd, head, r);
        return r;
    }
    return guarded_writev(w, sc, iov, iovcnt);
}

/* A sendmsg on fd, whose entry is not NULL. */
static ssize_t entry_sendmsg(int fd, const struct msghdr *msg, int flags, const void *caller)
{
    send_ctx sc = {.fd = fd, .how = HOW_SENDMSG, .flags = flags, .msg = msg, .caller = caller};
    return entry_writev(&sc, msg->msg_iov, (int)msg->msg_iovlen);
}

QG_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
    wire_fd *w = qg_wire_fd_entry(fd);
    if (__builtin_expect(!w, 1) || !msg) {
        if (!w && msg && foreign_query_iov(fd, msg->msg_iov, (int)msg->msg_iovlen)) {
            errno = EACCES;
            return -1;
        }
        return next_sendmsg()(fd, msg, flags);
    }
    return entry_sendmsg(fd, msg, flags, __builtin_return_address(0));
}


/* On a stream socket the kernel sends the messages one after another, each
 * as sendmsg would: so does this, through the followed sendmsg.  It stops
 * after a message the kernel took only part of (the kernel would try the
 * next, which a full socket refuses), and at most UIO_MAXIOV messages are
 * sent, as the kernel's limit says. */
QG_EXPORT int sendmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags)
{
    wire_fd *w = qg_wire_fd_entry(fd);
    if (__builtin_expect(!w, 1) || !vec) {
        for (unsigned int i = 0; !w && vec && i < vlen && i < UIO_MAXIOV; i++)
            if (foreign_query_iov(fd, vec[i].msg_hdr.msg_iov, (int)vec[i].msg_hdr.msg_iovlen)) {
                errno = EACCES;
                return -1;
            }
        return next_sendmmsg()(fd, vec, vlen, flags);
    }
    const void *caller = __builtin_return_address(0);
    unsigned int sent = 0;
    while (sent < vlen && sent < UIO_MAXIOV) {
        ssize_t r = qg_wire_fd_entry(fd) ? entry_sendmsg(fd, &vec[sent].msg_hdr, flags, caller)
                                         : next_sendmsg()(fd, &vec[sent].msg_hdr, flags);
        if (r < 0)
            return sent > 0 ? (int)sent : -1;
        vec[sent].msg_len = (unsigned int)r;
        sent++;
        if ((size_t)r < iov_bytes(vec[sent - 1].msg_hdr.msg_iov, (int)vec[sent - 1].msg_hdr.msg_iovlen))
            break;
    }
    return (int)sent;
}

QG_EXPORT ssize_t writev(int fd, const struct iovec *iov, int iovcnt)
{
    wire_fd *w = qg_wire_fd_entry(fd);
    if (__builtin_expect(!w, 1) || iovcnt <= 0) {
        if (!w && foreign_query_iov(fd, iov, iovcnt)) {
            errno = EACCES;
            return -1;
        }
        return next_writev()(fd, iov, iovcnt);
    }
    send_ctx sc = {.fd = fd, .how = HOW_WRITE, .caller = __builtin_return_address(0)};
    return entry_writev(&sc, iov, iovcnt);
}

/* The RWF_ flags a socket's write accepts: only RWF_NOWAIT changes what it
 * does (MSG_DONTWAIT), the others mean nothing to a socket. */
#define SOCKET_RWF (RWF_HIPRI | RWF_DSYNC | RWF_SYNC | RWF_NOWAIT | RWF_APPEND | RWF_NOAPPEND)

/* At offset -1, pwritev2 writes a socket as writev does (sendmsg with
 * MSG_DONTWAIT under RWF_NOWAIT); with an offset the kernel refuses a
 * socket (ESPIPE).  A flag not known here may change what the kernel does
 * with the bytes: refused on a database connection's socket. */
QG_EXPORT ssize_t pwritev2(int fd, const struct iovec *iov, int iovcnt, off_t offset, int flags)
{
    wire_fd *w = qg_wire_fd_entry(fd);
    if (__builtin_expect(!w, 1) || offset != -1 || iovcnt <= 0) {
        if (!w && offset == -1 && foreign_query_iov(fd, iov, iovcnt)) {
            errno = EACCES;
            return -1;
        }
        return next_pwritev2()(fd, iov, iovcnt, offset, flags);
    }
    if (flags & ~SOCKET_RWF) {
        if (qg_wire_refuse_unread_call(fd, true, "pwritev2 with flags not known to the shim")) {
            errno = EACCES;
            return -1;
        }
        return next_pwritev2()(fd, iov, iovcnt, offset, flags);
    }
    send_ctx sc = {.fd = fd, .how = HOW_WRITE, .caller = __builtin_return_address(0)};
    struct msghdr msg = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iovcnt};
    if (flags & RWF_NOWAIT) {
        sc.how = HOW_SENDMSG;
        sc.msg = &msg;
        sc.flags = MSG_DONTWAIT;
    }
    return entry_writev(&sc, iov, iovcnt);
}

QG_EXPORT ssize_t pwritev64v2(int fd, const struct iovec *iov, int iovcnt, off64_t offset,
                              int flags)
{
    return pwritev2(fd, iov, iovcnt, (off_t)offset, flags);
}

/* ---------------------------------------------------------------- input */

QG_HOT QG_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
    ssize_t r = next_read()(fd, buf, n);
    wire_fd *w;
    if (__builtin_expect(r > 0, 1) && __builtin_expect(read_here(w = qg_wire_fd_entry(fd)), 0))
        observe(fd, w, buf, (size_t)r);
    return r;
}

/* recv(2) on a socket no library front guards, as send_unguarded. */
__attribute__((noinline)) static ssize_t recv_unguarded(int fd, void *buf, size_t n, int flags)
{
    ssize_t r = next_recv()(fd, buf, n, flags);
    wire_fd *w;
    if (r > 0 && !(flags & MSG_PEEK) && read_here(w = qg_wire_fd_entry(fd)))
        observe(fd, w, buf, (size_t)r);
    return r;
}

/* A socket a library front guards: its answers are read by the library,
 * whose front follows them; the C library's recv with a jump.  The mark
 * is read before the call, on the socket the call reads. */
QG_HOT QG_EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags)
{
    __typeof__(&recv) known = known_recv();
    if (qg_wire_fd_entry(fd) == QG_WIRE_LIBRARY && known)
        return known(fd, buf, n, flags);
    return recv_unguarded(fd, buf, n, flags);
}

QG_EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *addr,
                           socklen_t *addrlen)
{
    ssize_t r = next_recvfrom()(fd, buf, n, flags, addr, addrlen);
    wire_fd *w;
    if (r > 0 && !(flags & MSG_PEEK) && (w = qg_wire_fd_entry(fd)) != NULL)
        observe(fd, w, buf, (size_t)r);
    return r;
}

QG_EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
    ssize_t r = next_recvmsg()(fd, msg, flags);
    if (r >= 0 && msg->msg_controllen > 0)
        qg_wire_received_rights(msg);
    if (r > 0 && !(flags & MSG_PEEK) && qg_wire_fd_entry(fd) != NULL)
        observe_iov(fd, msg->msg_iov, (int)msg->msg_iovlen, (size_t)r);
    return r;
}

/* Each message received, in order, as recvmsg sees it. */
QG_EXPORT int recvmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags,
                       struct timespec *timeout)
{
    int r = next_recvmmsg()(fd, vec, vlen, flags, timeout);
    for (int i = 0; i < r; i++) {
        struct msghdr *msg = &vec[i].msg_hdr;
        if (msg->msg_controllen > 0)
            qg_wire_received_rights(msg);
        if (!(flags & MSG_PEEK) && qg_wire_fd_entry(fd) != NULL)
            observe_iov(fd, msg->msg_iov, (int)msg->msg_iovlen, vec[i].msg_len);
    }
    return r;
}

QG_EXPORT ssize_t readv(int fd, const struct iovec *iov, int iovcnt)
{
    ssize_t r = next_readv()(fd, iov, iovcnt);
    if (r > 0 && qg_wire_fd_entry(fd) != NULL)
        observe_iov(fd, iov, iovcnt, (size_t)r);
    return r;
}

QG_EXPORT ssize_t preadv2(int fd, const struct iovec *iov, int iovcnt, off_t offset, int flags)
{
    ssize_t r = next_preadv2()(fd, iov, iovcnt, offset, flags);
    if (r > 0 && offset == -1 && qg_wire_fd_entry(fd) != NULL)
        observe_iov(fd, iov, iovcnt, (size_t)r);
    return r;
}

QG_EXPORT ssize_t preadv64v2(int fd, const struct iovec *iov, int iovcnt, off64_t offset,
                             int flags)
{
    return preadv2(fd, iov, iovcnt, (off_t)offset, flags);
}

/* The fortified forms (_FORTIFY_SOURCE) check the buffer, then read. */
QG_EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
    if (n > buflen)
        abort();
    return read(fd, buf, n);
}

QG_EXPORT ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags)
{
    if (n > buflen)
        abort();
    return recv(fd, buf, n, flags);
}

QG_EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags,
                                 struct sockaddr *addr, socklen_t *addrlen)
{
    if (n > buflen)
        abort();
    return recvfrom(fd, buf, n, flags, addr, addrlen);
}
