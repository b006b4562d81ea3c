/* The wire front's entry points: the C library's calls that create,
 * duplicate, close, write and read descriptors (see front_wire.c).  A
 * descriptor that is not a database connection costs one load from the
 * table before libc's own function runs. */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "front_wire_fd.h"
#include "real.h"
#include "hot.h"
#include "wire_stream.h"

#define QG_EXPORT __attribute__((visibility("default")))

/* ------------------------------------------------------- real functions */

#define NEXT(name)                                                                        \
    static __typeof__(&(name)) next_##name(void)                                            \
    {                                                                                     \
        static void *slot;                                                                \
        return (__typeof__(&(name)))qg_real_next(&slot, #name);                             \
    }

NEXT(socket)
NEXT(close)
NEXT(dup)
NEXT(dup2)
NEXT(dup3)
NEXT(fcntl)
NEXT(write)
NEXT(send)
NEXT(sendto)
NEXT(sendmsg)
NEXT(writev)
NEXT(read)
NEXT(recv)
NEXT(recvfrom)
NEXT(recvmsg)
NEXT(readv)

static ssize_t send_bytes(void *ctx, const uint8_t *p, size_t n)
{
    send_ctx *sc = ctx;
    switch (sc->how) {
    case HOW_WRITE:
        return next_write()(sc->fd, p, n);
    case HOW_SEND:
        return next_send()(sc->fd, p, n, sc->flags);
    case HOW_SENDTO:
        return next_sendto()(sc->fd, p, n, sc->flags, sc->addr, sc->addrlen);
    case HOW_SENDMSG:
        break;
    }
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


/* ------------------------------------------------------------ the paths */

/* The entry of fd for a write whose first bytes are p[0, n): a connection,
 * or NULL when the bytes pass as they are. */
static wire_fd *entry_for_write(int fd, const uint8_t *p, size_t n)
{
    wire_fd *w = qg_wire_fd_entry(fd);
    if (w != QG_WIRE_CANDIDATE)
        return w;
    if (n >= 8 && qg_wire_looks_like_pg(p, n) && qg_wire_enabled())
        return qg_wire_recognise(fd, QG_WIRE_PG);
    qg_wire_drop_candidate(fd);
    return NULL;
}

/* Settled, or its socket carries TLS records the SSL calls decrypt: the
 * bytes pass without the lock (which an SSL_write being followed holds). */
static bool passes_unlocked(wire_fd *w)
{
    return __atomic_load_n(&w->settled, __ATOMIC_ACQUIRE) ||
           __atomic_load_n(&w->tls_followed, __ATOMIC_ACQUIRE);
}

static ssize_t guarded_write(wire_fd *w, send_ctx *sc, const void *buf, size_t n)
{
    if (passes_unlocked(w)) {
        if (__atomic_load_n(&w->tls_followed, __ATOMIC_RELAXED))
            qg_wire_tls_unfollowed(w);
        return send_bytes(sc, buf, n);
    }
    qg_wire_io io = {send_bytes, qg_wire_check_query, sc};
    pthread_mutex_lock(&w->lock);
    bool tls = qg_wire_tls_raw(w, sc->fd);
    ssize_t r = tls ? send_bytes(sc, buf, n) : qg_wire_write(&w->conn, &io, buf, n);
    qg_wire_after_use(w);
    pthread_mutex_unlock(&w->lock);
    return r;
}

/* Bytes the client received on fd (r of them in p). */
static void observe(int fd, wire_fd *w, const void *p, size_t r)
{
    if (w == QG_WIRE_CANDIDATE) {
        if (qg_wire_looks_like_mysql(p, r) && qg_wire_enabled())
            w = qg_wire_recognise(fd, QG_WIRE_MYSQL);
        else
            qg_wire_drop_candidate(fd);
        if (w <= QG_WIRE_CANDIDATE)
            return;
    }
    if (passes_unlocked(w))
        return;
    pthread_mutex_lock(&w->lock);
    if (!qg_wire_tls_raw(w, fd))
        qg_wire_read(&w->conn, p, r);
    qg_wire_after_use(w);
    pthread_mutex_unlock(&w->lock);
}

static void observe_iov(int fd, wire_fd *w, const struct iovec *iov, int iovcnt, size_t r)
{
    if (w == QG_WIRE_CANDIDATE && iovcnt > 0) {
        /* a greeting read into scattered buffers: the first holds enough */
        observe(fd, w, iov[0].iov_base, r < iov[0].iov_len ? r : iov[0].iov_len);
        w = qg_wire_fd_entry(fd);
        if (w <= QG_WIRE_CANDIDATE)
            return;
        size_t first = r < iov[0].iov_len ? r : iov[0].iov_len;
        r -= first;
        iov++, iovcnt--;
    }
    for (int i = 0; i < iovcnt && r > 0; i++) {
        size_t k = r < iov[i].iov_len ? r : iov[i].iov_len;
        observe(fd, w, iov[i].iov_base, k);
        r -= k;
    }
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
    }
    return fd;
}

QG_EXPORT int close(int fd)
{
    if (qg_wire_fd_entry(fd))
        qg_wire_fd_put(fd, NULL);
    return next_close()(fd);
}

QG_EXPORT int dup(int fd)
{
    int copy = next_dup()(fd);
    if (copy >= 0 && (qg_wire_fd_entry(fd) || qg_wire_fd_entry(copy)))
        qg_wire_fd_put(copy, qg_wire_fd_share(fd));
    return copy;
}

QG_EXPORT int dup2(int fd, int to)
{
    int copy = next_dup2()(fd, to);
    if (copy >= 0 && copy != fd && (qg_wire_fd_entry(fd) || qg_wire_fd_entry(copy)))
        qg_wire_fd_put(copy, qg_wire_fd_share(fd));
    return copy;
}

QG_EXPORT int dup3(int fd, int to, int flags)
{
    int copy = next_dup3()(fd, to, flags);
    if (copy >= 0 && (qg_wire_fd_entry(fd) || qg_wire_fd_entry(copy)))
        qg_wire_fd_put(copy, qg_wire_fd_share(fd));
    return copy;
}

static int fcntl_common(int fd, int cmd, void *arg)
{
    int rc = next_fcntl()(fd, cmd, arg);
    bool duplicate = cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC;
    if (rc >= 0 && duplicate && (qg_wire_fd_entry(fd) || qg_wire_fd_entry(rc)))
        qg_wire_fd_put(rc, qg_wire_fd_share(fd));
    return rc;
}

QG_EXPORT int fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    return fcntl_common(fd, cmd, arg);
}

QG_EXPORT int fcntl64(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    return fcntl_common(fd, cmd, arg);
}

/* --------------------------------------------------------------- output */

QG_HOT QG_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
    wire_fd *w = qg_wire_fd_entry(fd);
    if (__builtin_expect(!w, 1) || n == 0 || !(w = entry_for_write(fd, buf, n)))
        return next_write()(fd, buf, n);
    send_ctx sc = {.fd = fd, .how = HOW_WRITE, .caller = __builtin_return_address(0)};
    return guarded_write(w, &sc, buf, n);
}

QG_HOT QG_EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    wire_fd *w = qg_wire_fd_entry(fd);
    if (__builtin_expect(!w, 1) || n == 0 || !(w = entry_for_write(fd, buf, n)))
        return next_send()(fd, buf, n, flags);
    send_ctx sc = {.fd = fd, .how = HOW_SEND, .flags = flags,
                   .caller = __builtin_return_address(0)};
    return guarded_write(w, &sc, buf, n);
}

QG_EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags,
                         const struct sockaddr *addr, socklen_t addrlen)
{
    wire_fd *w = qg_wire_fd_entry(fd);
    if (__builtin_expect(!w, 1) || n == 0 || !(w = entry_for_write(fd, buf, n)))
        return next_sendto()(fd, buf, n, flags, addr, addrlen);
    send_ctx sc = {.fd = fd, .how = HOW_SENDTO, .flags = flags, .addr = addr,
                   .addrlen = addrlen, .caller = __builtin_return_address(0)};
    return guarded_write(w, &sc, buf, n);
}

QG_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
    wire_fd *w = qg_wire_fd_entry(fd);
    if (__builtin_expect(!w, 1) || !msg)
        return next_sendmsg()(fd, msg, flags);
    uint8_t head[8];
    size_t n = gather_head(msg->msg_iov, (int)msg->msg_iovlen, head);
    if (n == 0 || !(w = entry_for_write(fd, head, n)))
        return next_sendmsg()(fd, msg, flags);
    send_ctx sc = {.fd = fd, .how = HOW_SENDMSG, .flags = flags, .msg = msg,
                   .caller = __builtin_return_address(0)};
    return guarded_writev(w, &sc, msg->msg_iov, (int)msg->msg_iovlen);
}

QG_EXPORT ssize_t writev(int fd, const struct iovec *iov, int iovcnt)
{
    wire_fd *w = qg_wire_fd_entry(fd);
    if (__builtin_expect(!w, 1) || iovcnt <= 0)
        return next_writev()(fd, iov, iovcnt);
    uint8_t head[8];
    size_t n = gather_head(iov, iovcnt, head);
    if (n == 0 || !(w = entry_for_write(fd, head, n)))
        return next_writev()(fd, iov, iovcnt);
    send_ctx sc = {.fd = fd, .how = HOW_WRITE, .caller = __builtin_return_address(0)};
    return guarded_writev(w, &sc, iov, iovcnt);
}

/* ---------------------------------------------------------------- input */

QG_HOT QG_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
    ssize_t r = next_read()(fd, buf, n);
    wire_fd *w;
    if (__builtin_expect(r > 0, 1) && __builtin_expect((w = qg_wire_fd_entry(fd)) != NULL, 0))
        observe(fd, w, buf, (size_t)r);
    return r;
}

QG_HOT QG_EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags)
{
    ssize_t r = next_recv()(fd, buf, n, flags);
    wire_fd *w;
    if (r > 0 && !(flags & MSG_PEEK) && (w = qg_wire_fd_entry(fd)) != NULL)
        observe(fd, w, buf, (size_t)r);
    return r;
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
    wire_fd *w;
    if (r > 0 && !(flags & MSG_PEEK) && (w = qg_wire_fd_entry(fd)) != NULL)
        observe_iov(fd, w, msg->msg_iov, (int)msg->msg_iovlen, (size_t)r);
    return r;
}

QG_EXPORT ssize_t readv(int fd, const struct iovec *iov, int iovcnt)
{
    ssize_t r = next_readv()(fd, iov, iovcnt);
    wire_fd *w;
    if (r > 0 && (w = qg_wire_fd_entry(fd)) != NULL)
        observe_iov(fd, w, iov, iovcnt, (size_t)r);
    return r;
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
