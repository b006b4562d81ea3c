/* Wire front: guards drivers that speak the PostgreSQL or MySQL protocol
 * themselves (PHP mysqlnd, PyMySQL, pg8000, node, JDBC, a static copy of a
 * client library), below any client library, at the libc calls that carry
 * a socket's bytes.
 *
 * A stream socket the program creates (socket(2)) is a candidate until its
 * first bytes: a PostgreSQL startup request written first, or a MySQL
 * greeting read first, makes it a guarded connection; anything else drops
 * it.  A connection whose queries pass through libpq or libmariadb is
 * handed to their fronts: they call qg_wire_library_guarded(PQsocket /
 * mysql_get_socket) before each query, and from then on its bytes pass
 * unchecked here (one check per query).  A program that reaches the
 * library around the preload (psycopg 3's ctypes binding resolves
 * PQsendQuery from libpq's own handle) is never handed over, so its
 * queries are checked here.  Every other descriptor passes through after one load from a
 * fixed table indexed by fd (no lock, no system call).  The streams
 * themselves are followed by shim/wire_stream.c.
 *
 * Descriptors at or above QG_WIRE_FDS are never guarded.  A program that
 * uses one descriptor from several threads at once, or closes it while
 * another thread reads it, already breaks its protocol; the shim does not
 * add a lock for that case beyond the connection's own.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "attach.h"
#include "config.h"
#include "front_wire.h"
#include "guard.h"
#include "hot.h"
#include "log.h"
#include "mysql_session.h"
#include "mysql_statements.h"
#include "settings.h"
#include "wire_stream.h"

#define QG_EXPORT __attribute__((visibility("default")))

#define QG_WIRE_FDS 65536
#define CANDIDATE ((wire_fd *)1)

typedef struct wire_fd {
    pthread_mutex_t lock;
    unsigned refs; /* descriptors that share it (dup) */
    bool told_passthrough;
    /* passthrough with nothing held or owed: its bytes go straight to libc
     * without the lock (set once, under it) */
    bool settled;
    qg_wire_conn conn;
} wire_fd;

/* NULL: not ours; CANDIDATE: a fresh stream socket; else a connection. */
QG_FAR_BSS static wire_fd *fds[QG_WIRE_FDS];
static int highest_fd = -1; /* for the walk after fork */

/* ------------------------------------------------------- real functions */

/* libc's entry `name`, resolved once into *slot. */
static void *resolve_next(void **slot, const char *name)
{
    void *fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!fn) {
        fn = dlsym(RTLD_NEXT, name);
        __atomic_store_n(slot, fn, __ATOMIC_RELEASE);
    }
    return fn;
}

#define NEXT(name)                                                                        \
    static __typeof__(&(name)) next_##name(void)                                            \
    {                                                                                     \
        static void *slot;                                                                \
        return (__typeof__(&(name)))resolve_next(&slot, #name);                             \
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

static wire_fd *fd_entry(int fd)
{
    return fd >= 0 && fd < QG_WIRE_FDS ? __atomic_load_n(&fds[fd], __ATOMIC_ACQUIRE) : NULL;
}

static void fd_release(wire_fd *w)
{
    if (w <= CANDIDATE || __atomic_sub_fetch(&w->refs, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    pthread_mutex_destroy(&w->lock);
    qg_wire_conn_release(&w->conn);
    free(w);
}

/* Puts w (or NULL) at fd, releasing what was there (a descriptor the
 * program closed in a way the shim did not see). */
static void fd_put(int fd, wire_fd *w)
{
    if (fd < 0 || fd >= QG_WIRE_FDS) {
        fd_release(w);
        return;
    }
    if (w)
        for (int seen = __atomic_load_n(&highest_fd, __ATOMIC_RELAXED); fd > seen;)
            if (__atomic_compare_exchange_n(&highest_fd, &seen, fd, false, __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED))
                break;
    fd_release(__atomic_exchange_n(&fds[fd], w, __ATOMIC_ACQ_REL));
}

/* A copy of fd's entry for a duplicate descriptor. */
static wire_fd *fd_share(int fd)
{
    wire_fd *w = fd_entry(fd);
    if (w > CANDIDATE)
        __atomic_add_fetch(&w->refs, 1, __ATOMIC_ACQ_REL);
    return w;
}

/* The child of a fork gets fresh locks: a thread of the parent may have
 * held one, and that thread is not in the child. */
static void renew_locks(void)
{
    for (int fd = 0; fd <= highest_fd && fd < QG_WIRE_FDS; fd++)
        if (fds[fd] > CANDIDATE)
            pthread_mutex_init(&fds[fd]->lock, NULL);
}

__attribute__((constructor)) static void keep_locks_across_fork(void)
{
    pthread_atfork(NULL, NULL, renew_locks);
}

static bool wire_enabled(void)
{
    const qg_settings *s = qg_settings_get();
    return s->wire && s->mode != QG_MODE_OFF && s->active;
}

/* A candidate whose first bytes are known: the connection, or NULL. */
static wire_fd *recognise(int fd, qg_wire_proto proto)
{
    wire_fd *w = calloc(1, sizeof *w);
    if (!w) {
        fd_put(fd, NULL);
        return NULL;
    }
    pthread_mutex_init(&w->lock, NULL);
    w->refs = 1;
    qg_wire_conn_init(&w->conn, proto);
    wire_fd *expected = CANDIDATE;
    if (!__atomic_compare_exchange_n(&fds[fd], &expected, w, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        fd_release(w);
        return expected > CANDIDATE ? expected : NULL;
    }
    qg_log_note_db_socket(fd); /* the log never writes into it */
    qg_attach_announce(); /* a client library mapped later, else the wire */
    qg_attach_announce_wire(proto == QG_WIRE_PG ? "wire:postgresql" : "wire:mysql");
    qg_log_note_db_socket(fd); /* the log never writes into it */
    qg_attach_announce(); /* a client library mapped later, else the wire */
    qg_attach_announce_wire(proto == QG_WIRE_PG ? "wire:postgresql" : "wire:mysql");
    const qg_settings *s = qg_settings_get();
    if (s->verbosity >= 2) {
        char detail[64];
        snprintf(detail, sizeof detail, "fd %d: %s", fd,
                 proto == QG_WIRE_PG ? "postgresql" : "mysql");
        qg_log_write_event(s, "debug", "wire_connection", detail);
    }
    return w;
}

static void drop_candidate(int fd)
{
    wire_fd *expected = CANDIDATE;
    __atomic_compare_exchange_n(&fds[fd], &expected, NULL, false, __ATOMIC_ACQ_REL,
                                __ATOMIC_RELAXED);
}

/* Says once per connection that it is no longer followed, and why. */
QG_COLD static void tell_passthrough(wire_fd *w)
{
    w->told_passthrough = true;
    qg_log_write_event(qg_settings_get(), "info", "wire_unguarded",
                       "a database connection switched to TLS or compression, or its stream "
                       "could not be followed: its queries are not checked");
}

/* Called under the lock after each use of the connection. */
static void settle(wire_fd *w)
{
    const qg_wire_conn *c = &w->conn;
    if (c->passthrough && c->hold.len == 0 && c->owed.len == 0 && c->covers == 0 &&
        !c->dropping)
        __atomic_store_n(&w->settled, true, __ATOMIC_RELEASE);
}

void qg_wire_library_guarded(int fd)
{
    wire_fd *w = fd_entry(fd);
    if (w == CANDIDATE) {
        drop_candidate(fd);
        return;
    }
    if (!w || __atomic_load_n(&w->told_passthrough, __ATOMIC_RELAXED))
        return;
    pthread_mutex_lock(&w->lock);
    w->conn.passthrough = true;
    w->told_passthrough = true; /* not unguarded: the library front has it */
    settle(w);
    pthread_mutex_unlock(&w->lock);
}

/* ------------------------------------------------------------- checking */

typedef enum send_how { HOW_WRITE, HOW_SEND, HOW_SENDTO, HOW_SENDMSG } send_how;

typedef struct send_ctx {
    int fd;
    send_how how;
    int flags;
    const struct sockaddr *addr;
    socklen_t addrlen;
    const struct msghdr *msg; /* HOW_SENDMSG */
    bool control_sent;
    const void *caller;
} send_ctx;

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

static const char *api_of(qg_wire_kind kind)
{
    switch (kind) {
    case QG_WIRE_PG_QUERY:
        return "wire:Query";
    case QG_WIRE_PG_PARSE:
        return "wire:Parse";
    case QG_WIRE_MY_QUERY:
        return "wire:COM_QUERY";
    case QG_WIRE_MY_PREPARE:
        return "wire:COM_STMT_PREPARE";
    case QG_WIRE_OTHER:
        break;
    }
    return "wire";
}

static unsigned quoting_flags(const qg_wire_conn *c)
{
    if (c->proto == QG_WIRE_PG)
        return c->session.std_strings ? QG_STD_STRINGS : 0;
    return (c->session.no_backslash_escapes ? QG_NO_BACKSLASH_ESCAPES : 0) |
           (c->session.ansi_quotes ? QG_ANSI_QUOTES : 0);
}

/* A MySQL text that passed: its SET effects, taken on when the server
 * answers OK (wire_observe.c). */
static void expect_effect(qg_wire_conn *c, const qg_wire_msg *m)
{
    qg_wire_session after = c->session;
    unsigned flags = quoting_flags(c);
    bool changed;
    if (!qg_mysql_text_effect(after.encoding, sizeof after.encoding, &flags, m->sql, m->len,
                              &changed)) {
        qg_log_write_event(qg_settings_get(), "info", "wire_state_unknown",
                           "a SET whose effect only the server knows; the connection is read "
                           "with its previous character set");
        return;
    }
    if (!changed)
        return;
    after.no_backslash_escapes = flags & QG_NO_BACKSLASH_ESCAPES;
    after.ansi_quotes = flags & QG_ANSI_QUOTES;
    c->effect = after;
    c->effect_pending = true;
}

static bool check_query(void *ctx, qg_wire_conn *c, const qg_wire_msg *m, qg_wire_buf *replacement)
{
    send_ctx *sc = ctx;
    const qg_settings *s = qg_settings_get();
    if (s->mode == QG_MODE_OFF || !s->active || !s->wire)
        return true;
    qg_decision d;
    bool pass;
    if (m->too_large) {
        pass = s->mode == QG_MODE_AUDIT;
        d.sqlstate = "54000"; /* program_limit_exceeded */
        snprintf(d.message, sizeof d.message,
                 "quoteguard: blocked: a query of more than %u MiB cannot be checked",
                 QG_WIRE_HOLD_MAX >> 20);
        qg_log_write_event(s, pass ? "warning" : "error", "wire_query_too_large", d.message);
    } else if (c->proto == QG_WIRE_MYSQL) {
        /* as the libmariadb front checks: a multi-statement text statement
         * by statement, each with the state the ones before it leave */
        qg_my_session session = {0};
        qg_my_state_set_charset(&session.state, c->session.encoding, strlen(c->session.encoding));
        session.state.flags = quoting_flags(c);
        pass = qg_my_session_check(&session, NULL, c, api_of(m->kind), m->sql, m->len, sc->caller,
                                   &d);
    } else {
        qg_query q = {
            .dialect = QG_DIALECT_POSTGRES,
            .encoding_name = c->session.encoding,
            .flags = quoting_flags(c),
            .conn = c,
            .api = api_of(m->kind),
            .sql = m->sql,
            .len = m->len,
            .caller = sc->caller,
        };
        pass = qg_guard_query(&q, &d);
    }
    if (pass) {
        if (m->kind == QG_WIRE_MY_QUERY && !m->too_large)
            expect_effect(c, m);
        return true;
    }
    if (!qg_wire_replacement(c, m, d.message, d.sqlstate, replacement))
        qg_wire_buf_free(replacement);
    return false;
}

/* ------------------------------------------------------------ the paths */

/* The entry of fd for a write whose first bytes are p[0, n): a connection,
 * or NULL when the bytes pass as they are. */
static wire_fd *entry_for_write(int fd, const uint8_t *p, size_t n)
{
    wire_fd *w = fd_entry(fd);
    if (w != CANDIDATE)
        return w;
    if (n >= 8 && qg_wire_looks_like_pg(p, n) && wire_enabled())
        return recognise(fd, QG_WIRE_PG);
    drop_candidate(fd);
    return NULL;
}

static ssize_t guarded_write(wire_fd *w, send_ctx *sc, const void *buf, size_t n)
{
    if (__atomic_load_n(&w->settled, __ATOMIC_ACQUIRE))
        return send_bytes(sc, buf, n);
    qg_wire_io io = {send_bytes, check_query, sc};
    pthread_mutex_lock(&w->lock);
    ssize_t r = qg_wire_write(&w->conn, &io, buf, n);
    if (w->conn.passthrough && !w->told_passthrough)
        tell_passthrough(w);
    settle(w);
    pthread_mutex_unlock(&w->lock);
    return r;
}

/* Bytes the client received on fd (r of them in p). */
static void observe(int fd, wire_fd *w, const void *p, size_t r)
{
    if (w == CANDIDATE) {
        if (qg_wire_looks_like_mysql(p, r) && wire_enabled())
            w = recognise(fd, QG_WIRE_MYSQL);
        else
            drop_candidate(fd);
        if (w <= CANDIDATE)
            return;
    }
    if (__atomic_load_n(&w->settled, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&w->lock);
    qg_wire_read(&w->conn, p, r);
    if (w->conn.passthrough && !w->told_passthrough)
        tell_passthrough(w);
    settle(w);
    pthread_mutex_unlock(&w->lock);
}

static void observe_iov(int fd, wire_fd *w, const struct iovec *iov, int iovcnt, size_t r)
{
    if (w == CANDIDATE && iovcnt > 0) {
        /* a greeting read into scattered buffers: the first holds enough */
        observe(fd, w, iov[0].iov_base, r < iov[0].iov_len ? r : iov[0].iov_len);
        w = fd_entry(fd);
        if (w <= CANDIDATE)
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
        fd_put(fd, stream && wire_enabled() ? CANDIDATE : NULL);
    }
    return fd;
}

QG_EXPORT int close(int fd)
{
    if (fd_entry(fd))
        fd_put(fd, NULL);
    return next_close()(fd);
}

QG_EXPORT int dup(int fd)
{
    int copy = next_dup()(fd);
    if (copy >= 0 && (fd_entry(fd) || fd_entry(copy)))
        fd_put(copy, fd_share(fd));
    return copy;
}

QG_EXPORT int dup2(int fd, int to)
{
    int copy = next_dup2()(fd, to);
    if (copy >= 0 && copy != fd && (fd_entry(fd) || fd_entry(copy)))
        fd_put(copy, fd_share(fd));
    return copy;
}

QG_EXPORT int dup3(int fd, int to, int flags)
{
    int copy = next_dup3()(fd, to, flags);
    if (copy >= 0 && (fd_entry(fd) || fd_entry(copy)))
        fd_put(copy, fd_share(fd));
    return copy;
}

static int fcntl_common(int fd, int cmd, void *arg)
{
    int rc = next_fcntl()(fd, cmd, arg);
    if (rc >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) && (fd_entry(fd) || fd_entry(rc)))
        fd_put(rc, fd_share(fd));
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
    wire_fd *w = fd_entry(fd);
    if (__builtin_expect(!w, 1) || n == 0 || !(w = entry_for_write(fd, buf, n)))
        return next_write()(fd, buf, n);
    send_ctx sc = {.fd = fd, .how = HOW_WRITE, .caller = __builtin_return_address(0)};
    return guarded_write(w, &sc, buf, n);
}

QG_HOT QG_EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    wire_fd *w = fd_entry(fd);
    if (__builtin_expect(!w, 1) || n == 0 || !(w = entry_for_write(fd, buf, n)))
        return next_send()(fd, buf, n, flags);
    send_ctx sc = {.fd = fd, .how = HOW_SEND, .flags = flags,
                   .caller = __builtin_return_address(0)};
    return guarded_write(w, &sc, buf, n);
}

QG_EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags,
                         const struct sockaddr *addr, socklen_t addrlen)
{
    wire_fd *w = fd_entry(fd);
    if (__builtin_expect(!w, 1) || n == 0 || !(w = entry_for_write(fd, buf, n)))
        return next_sendto()(fd, buf, n, flags, addr, addrlen);
    send_ctx sc = {.fd = fd, .how = HOW_SENDTO, .flags = flags, .addr = addr,
                   .addrlen = addrlen, .caller = __builtin_return_address(0)};
    return guarded_write(w, &sc, buf, n);
}

QG_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
    wire_fd *w = fd_entry(fd);
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
    wire_fd *w = fd_entry(fd);
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
    if (__builtin_expect(r > 0, 1) && __builtin_expect((w = fd_entry(fd)) != NULL, 0))
        observe(fd, w, buf, (size_t)r);
    return r;
}

QG_HOT QG_EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags)
{
    ssize_t r = next_recv()(fd, buf, n, flags);
    wire_fd *w;
    if (r > 0 && !(flags & MSG_PEEK) && (w = fd_entry(fd)) != NULL)
        observe(fd, w, buf, (size_t)r);
    return r;
}

QG_EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *addr,
                           socklen_t *addrlen)
{
    ssize_t r = next_recvfrom()(fd, buf, n, flags, addr, addrlen);
    wire_fd *w;
    if (r > 0 && !(flags & MSG_PEEK) && (w = fd_entry(fd)) != NULL)
        observe(fd, w, buf, (size_t)r);
    return r;
}

QG_EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
    ssize_t r = next_recvmsg()(fd, msg, flags);
    wire_fd *w;
    if (r > 0 && !(flags & MSG_PEEK) && (w = fd_entry(fd)) != NULL)
        observe_iov(fd, w, msg->msg_iov, (int)msg->msg_iovlen, (size_t)r);
    return r;
}

QG_EXPORT ssize_t readv(int fd, const struct iovec *iov, int iovcnt)
{
    ssize_t r = next_readv()(fd, iov, iovcnt);
    wire_fd *w;
    if (r > 0 && (w = fd_entry(fd)) != NULL)
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
