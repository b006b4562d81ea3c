/* The wire front inside TLS: the system OpenSSL's calls that carry a
 * database connection's bytes once it asked for TLS (front_wire.c).
 *
 * A PostgreSQL client sends SSLRequest and reads 'S'; a MySQL client sends
 * the short SSL request packet (CLIENT_SSL) after the greeting.  From there
 * the socket carries the TLS handshake and then records: its raw bytes pass
 * unread, and the same protocol stream goes on in the plaintext of
 * SSL_write / SSL_write_ex (client to server: checked, replaced when
 * blocked, exactly as on a plain socket) and SSL_read / SSL_read_ex (server
 * to client: observed).  The SSL object is tied to its connection by
 * SSL_get_fd; state stays with the descriptor, so close() forgets it and
 * SSL_free needs no hook.  The front's own question about a MySQL
 * connection's state (front_wire_probe.c) goes through OpenSSL's real
 * SSL_write and SSL_read on the program's SSL object, from inside the
 * program's SSL_write before that reaches OpenSSL.
 *
 * Who does the TLS is known from the first raw byte after the switch: a
 * handshake the system OpenSSL runs happens inside one of the calls below
 * (SSL_connect, SSL_do_handshake, or an SSL_write/SSL_read/SSL_peek that
 * starts it), so the raw calls it makes run with `qg_wire_in_openssl`
 * set.  A raw byte outside them is TLS done by another stack (a statically linked
 * OpenSSL, Go, Java's JSSE, or OpenSSL over memory BIOs as in Python's
 * asyncio): the connection is then logged once as not followed
 * (wire_unguarded) and passes through.  So is one whose TLS is the system
 * OpenSSL's but whose SSL object does not lead to it by SSL_get_fd (a BIO
 * of the program's own that hides the descriptor), or whose records are
 * written where these calls do not see: its raw bytes then come from inside
 * an SSL_write that found no connection, or from outside every call here
 * (SSL_shutdown's close_notify is inside one).
 *
 * OpenSSL is never linked and its headers are not needed: the SSL object is
 * opaque here, and the real functions are resolved on first use past the
 * shim (or in an already-loaded libssl that RTLD_NEXT cannot see, such as
 * one a Python extension brought in with RTLD_LOCAL).  A process that never
 * calls these functions never reaches this file; one whose SSL traffic is
 * not a followed database connection pays one load of qg_wire_tls_conns
 * (and, while some database connection is inside TLS, an SSL_get_fd and a
 * table lookup).  One libssl per process is assumed (OpenSSL itself forbids
 * mixing two in one program).
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "front_wire_fd.h"
#include "log.h"
#include "real.h"
#include "settings.h"
#include "wire_stream.h"

#define QG_EXPORT __attribute__((visibility("default")))

typedef struct ssl_st SSL; /* opaque: only handed back to OpenSSL */

/* OpenSSL's SSL_get_mode(ssl) is SSL_ctrl(ssl, SSL_CTRL_MODE, 0, NULL). */
#define OSSL_CTRL_MODE 33
#define OSSL_MODE_ENABLE_PARTIAL_WRITE 0x1L

static const char *const libssl_names[] = {"libssl.so.3", "libssl.so.1.1", NULL};

QG_REAL_FN(int, SSL_write, (SSL *, const void *, int), libssl_names)
QG_REAL_FN(int, SSL_write_ex, (SSL *, const void *, size_t, size_t *), libssl_names)
QG_REAL_FN(int, SSL_read, (SSL *, void *, int), libssl_names)
QG_REAL_FN(int, SSL_read_ex, (SSL *, void *, size_t, size_t *), libssl_names)
QG_REAL_FN(int, SSL_peek, (SSL *, void *, int), libssl_names)
QG_REAL_FN(int, SSL_peek_ex, (SSL *, void *, size_t, size_t *), libssl_names)
QG_REAL_FN(int, SSL_connect, (SSL *), libssl_names)
QG_REAL_FN(int, SSL_do_handshake, (SSL *), libssl_names)
QG_REAL_FN(int, SSL_shutdown, (SSL *), libssl_names)
QG_REAL_FN(int, SSL_get_fd, (const SSL *), libssl_names)
QG_REAL_FN(long, SSL_ctrl, (SSL *, int, long, void *), libssl_names)
QG_REAL_FN(int, SSL_get_error, (const SSL *, int), libssl_names)
QG_REAL_FN(int, SSL_pending, (const SSL *), libssl_names)

/* OpenSSL's SSL_get_error answers that matter to the front's own calls. */
#define OSSL_ERROR_WANT_READ 2
#define OSSL_ERROR_WANT_WRITE 3

__thread unsigned qg_wire_in_openssl __attribute__((tls_model("initial-exec")));

/* OpenSSL's own `name` called with qg_wire_in_openssl raised (the raw
 * calls it makes are its own), or `missing` where it cannot be found.  A
 * GNU statement expression: one body for every function passed through. */
#define CALL_OPENSSL(name, missing, ...)                                                           \
    ({                                                                                             \
        name##_fn real_ = real_##name();                                                           \
        int r_ = (missing);                                                                        \
        if (real_) {                                                                               \
            qg_wire_in_openssl++;                                                                  \
            r_ = real_(__VA_ARGS__);                                                               \
            qg_wire_in_openssl--;                                                                  \
        }                                                                                          \
        r_;                                                                                        \
    })
__thread unsigned qg_wire_in_unfollowed_write __attribute__((tls_model("initial-exec")));

/* --------------------------------------------------------------- follow */

/* Under the lock: the SSL calls carry this connection from now on. */
static void follow(wire_fd *w, int fd)
{
    if (qg_wire_route(w) & QG_WIRE_ROUTE_TLS)
        return;
    qg_wire_route_set(w, QG_WIRE_ROUTE_TLS);
    const qg_settings *s = qg_settings_get();
    if (s->verbosity >= 2) {
        char detail[64];
        snprintf(detail, sizeof detail, "fd %d: followed through OpenSSL", fd);
        qg_log_write_event(s, "debug", "wire_tls", detail);
    }
}

bool qg_wire_tls_raw(wire_fd *w, int fd)
{
    qg_wire_conn *c = &w->conn;
    if (!c->tls || c->passthrough)
        return false;
    /* the request that asked for TLS is not all sent yet */
    if (c->out.left > 0 || c->hold.len > 0 || c->owed.len > 0 || c->covers > 0 ||
        (c->proto == QG_WIRE_MYSQL && c->out.packets == 0))
        return false;
    if (qg_wire_in_openssl > 0)
        follow(w, fd);
    else
        qg_wire_set_passthrough(c, QG_WIRE_UNREAD_TLS); /* another TLS stack */
    return true;
}

bool qg_wire_tls_unfollowed(wire_fd *w)
{
    if (qg_wire_in_followed_openssl() ||
        (qg_wire_route(w) & (QG_WIRE_ROUTE_TLS | QG_WIRE_ROUTE_SETTLED)) != QG_WIRE_ROUTE_TLS)
        return false;
    qg_wire_lock(w);
    qg_wire_set_passthrough(&w->conn, QG_WIRE_UNREAD_TLS);
    qg_wire_after_use(w);
    qg_wire_unlock(w);
    return true;
}

/* The connection ssl carries, when it is one being followed (or about to
 * be); NULL for everything else. */
static wire_fd *tls_conn(SSL *ssl, int *fd)
{
    if (__atomic_load_n(&qg_wire_tls_conns, __ATOMIC_ACQUIRE) == 0 || qg_wire_in_openssl > 0)
        return NULL;
    SSL_get_fd_fn get_fd = real_SSL_get_fd();
    *fd = get_fd ? get_fd(ssl) : -1;
    wire_fd *w = qg_wire_fd_entry(*fd);
    if (!qg_wire_is_conn(w) || (qg_wire_route(w) & (QG_WIRE_ROUTE_REFUSED | QG_WIRE_ROUTE_SETTLED)))
        return NULL;
    return w;
}

/* Under the lock: the connection is inside TLS and still followed. */
static bool follows(wire_fd *w, int fd)
{
    if (!w->conn.tls || w->conn.passthrough)
        return false;
    follow(w, fd);
    return true;
}

/* --------------------------------------- the front's own question */

/* A failed SSL_write / SSL_read of the front's own: EAGAIN with what to
 * wait for when OpenSSL wants the socket ready, else an error. */
static ssize_t probe_failed(SSL *ssl, int r, short *wait)
{
    SSL_get_error_fn get_error = real_SSL_get_error();
    int e = get_error ? get_error(ssl, r) : 0;
    if (e == OSSL_ERROR_WANT_READ || e == OSSL_ERROR_WANT_WRITE) {
        *wait = e == OSSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
        errno = EAGAIN;
    } else if (errno == 0 || errno == EAGAIN || errno == EINTR) {
        errno = EIO; /* the TLS connection failed: not to be tried again */
    }
    return -1;
}

static ssize_t probe_send(void *ctx, const uint8_t *p, size_t n, short *wait)
{
    SSL *ssl = ctx;
    errno = 0;
    int r = CALL_OPENSSL(SSL_write, -1, ssl, p, n > INT_MAX ? INT_MAX : (int)n);
    return r > 0 ? r : probe_failed(ssl, r, wait);
}

/* Waits (as EAGAIN) while no record has come, so that OpenSSL's read of a
 * blocking socket does not wait past the front's bound. */
static ssize_t probe_recv(void *ctx, uint8_t *p, size_t n, short *wait)
{
    SSL *ssl = ctx;
    SSL_pending_fn pending = real_SSL_pending();
    SSL_get_fd_fn get_fd = real_SSL_get_fd();
    struct pollfd ready = {.fd = get_fd ? get_fd(ssl) : -1, .events = POLLIN};
    if (pending && pending(ssl) == 0 && poll(&ready, 1, 0) == 0) {
        *wait = POLLIN;
        errno = EAGAIN;
        return -1;
    }
    errno = 0;
    int r = CALL_OPENSSL(SSL_read, -1, ssl, p, n > INT_MAX ? INT_MAX : (int)n);
    return r > 0 ? r : probe_failed(ssl, r, wait);
}

/* ---------------------------------------------------------------- write */

typedef struct tls_send {
    send_ctx base; /* first: qg_wire_check_query reads the caller from it */
    SSL *ssl;
    bool ex;       /* the program called SSL_write_ex */
    int last_ret;  /* what the last failing OpenSSL call returned */
} tls_send;

/* qg_wire_io's send: one SSL_write(_ex) of the bytes.  A failure returns -1
 * with the call's errno (EINTR made EAGAIN, so that the stream does not
 * retry at once) and keeps OpenSSL's return value, so that what
 * SSL_get_error then says is about this very call. */
static ssize_t tls_send_bytes(void *ctx, const uint8_t *p, size_t n)
{
    tls_send *t = ctx;
    size_t done = 0;
    int r;
    qg_wire_in_openssl++;
    if (t->ex) {
        SSL_write_ex_fn real = real_SSL_write_ex();
        r = real ? real(t->ssl, p, n, &done) : 0;
    } else {
        SSL_write_fn real = real_SSL_write();
        r = real ? real(t->ssl, p, n > INT_MAX ? INT_MAX : (int)n) : -1;
        done = r > 0 ? (size_t)r : 0;
    }
    qg_wire_in_openssl--;
    if (r > 0)
        return (ssize_t)done;
    t->last_ret = r;
    if (errno == EINTR)
        errno = EAGAIN;
    return -1;
}

/* The program lets OpenSSL return a short count
 * (SSL_MODE_ENABLE_PARTIAL_WRITE): asked only after a short write, which
 * the program's SSL_write then returns as it is. */
static bool partial_writes(SSL *ssl)
{
    SSL_ctrl_fn ctrl = real_SSL_ctrl();
    return ctrl && (ctrl(ssl, OSSL_CTRL_MODE, 0, NULL) & OSSL_MODE_ENABLE_PARTIAL_WRITE);
}

/* One program write of num bytes through the connection's stream.
 *
 * SSL_write takes all num bytes or fails; only with
 * SSL_MODE_ENABLE_PARTIAL_WRITE may it take fewer.  The stream may need
 * several OpenSSL writes for one program write (the bytes before a blocked
 * query, then its replacement, then the rest), and a non-blocking one may
 * fail in between with SSL_ERROR_WANT_WRITE after some of them went.  Then:
 * - the failure is returned as OpenSSL gave it (same return value, made by
 *   the last OpenSSL call), so SSL_get_error reports it truly;
 * - OpenSSL wants the failed call retried with the same buffer and length,
 *   and it is: the stream keeps what it still owes (the replacement's
 *   buffer, or the same run of the program's bytes, which the retry plans
 *   the same way), and its next OpenSSL call repeats the failed one;
 * - the program retries with its own same arguments; the bytes of its
 *   buffer the stream already took (tls_retry_taken) are skipped, so none is
 *   sent twice, and success is reported only when all num are taken.
 * With partial writes on, a short count is returned as soon as there is
 * one, as a socket would.  Nothing of a blocked query is ever sent. */
static int followed_write(wire_fd *w, int fd, SSL *ssl, const void *buf, size_t num, bool ex,
                          size_t *written, const void *caller)
{
    qg_wire_probe_link link = {fd, probe_send, probe_recv, ssl};
    tls_send t = {.base = {.fd = fd, .caller = caller, .tls_link = &link}, .ssl = ssl, .ex = ex,
                  .last_ret = ex ? 0 : -1};
    qg_wire_io io = {tls_send_bytes, qg_wire_check_query, qg_wire_unread_may_pass, &t};
    size_t taken = 0;
    if (w->tls_retry_num == num)
        taken = w->tls_retry_taken;
    w->tls_retry_num = w->tls_retry_taken = 0;
    for (;;) {
        ssize_t r = qg_wire_write(&w->conn, &io, (const uint8_t *)buf + taken, num - taken);
        if (r < 0) {
            if (taken > 0) {
                w->tls_retry_num = num;
                w->tls_retry_taken = taken;
            }
            *written = 0;
            return t.last_ret;
        }
        taken += (size_t)r;
        if (taken == num || partial_writes(ssl)) {
            *written = taken;
            return ex ? 1 : (int)taken;
        }
    }
}

/* A write on ssl: followed when it carries a database connection. */
static int tls_write(SSL *ssl, const void *buf, size_t num, bool ex, size_t *written,
                     const void *caller)
{
    int fd = -1;
    wire_fd *w = num > 0 ? tls_conn(ssl, &fd) : NULL;
    if (w) {
        qg_wire_lock(w);
        if (follows(w, fd)) {
            int r = followed_write(w, fd, ssl, buf, num, ex, written, caller);
            qg_wire_after_use(w);
            qg_wire_unlock(w);
            if (r <= 0)
                qg_wire_give_up_refused(w, fd, -1);
            return r;
        }
        qg_wire_unlock(w);
    }
    int r;
    qg_wire_in_openssl++;
    qg_wire_in_unfollowed_write++;
    if (ex) {
        SSL_write_ex_fn real = real_SSL_write_ex();
        r = real ? real(ssl, buf, num, written) : 0;
    } else {
        SSL_write_fn real = real_SSL_write();
        r = real ? real(ssl, buf, (int)num) : -1;
    }
    qg_wire_in_unfollowed_write--;
    qg_wire_in_openssl--;
    return r;
}

QG_EXPORT int SSL_write(SSL *ssl, const void *buf, int num)
{
    if (num <= 0) { /* OpenSSL's own answer to it */
        SSL_write_fn real = real_SSL_write();
        return real ? real(ssl, buf, num) : -1;
    }
    size_t written;
    return tls_write(ssl, buf, (size_t)num, false, &written, __builtin_return_address(0));
}

QG_EXPORT int SSL_write_ex(SSL *ssl, const void *buf, size_t num, size_t *written)
{
    size_t ignored;
    return tls_write(ssl, buf, num, true, written ? written : &ignored,
                     __builtin_return_address(0));
}

/* ----------------------------------------------------------------- read */

/* n bytes the program received through ssl. */
static void observe(SSL *ssl, const void *p, size_t n)
{
    int fd = -1;
    wire_fd *w = tls_conn(ssl, &fd);
    if (!w)
        return;
    qg_wire_lock(w);
    if (follows(w, fd))
        qg_wire_read(&w->conn, p, n);
    qg_wire_after_use(w);
    qg_wire_unlock(w);
}

QG_EXPORT int SSL_read(SSL *ssl, void *buf, int num)
{
    int r = CALL_OPENSSL(SSL_read, -1, ssl, buf, num);
    if (r > 0)
        observe(ssl, buf, (size_t)r);
    return r;
}

QG_EXPORT int SSL_read_ex(SSL *ssl, void *buf, size_t num, size_t *readbytes)
{
    int r = CALL_OPENSSL(SSL_read_ex, 0, ssl, buf, num, readbytes);
    if (r > 0 && readbytes && *readbytes > 0)
        observe(ssl, buf, *readbytes);
    return r;
}

/* ------------- calls that carry no query: the handshake, close_notify */

/* Peeked bytes are read again by SSL_read: only the handshake a peek may
 * start is of interest (its raw bytes are OpenSSL's). */
QG_EXPORT int SSL_peek(SSL *ssl, void *buf, int num)
{
    return CALL_OPENSSL(SSL_peek, -1, ssl, buf, num);
}

QG_EXPORT int SSL_peek_ex(SSL *ssl, void *buf, size_t num, size_t *readbytes)
{
    return CALL_OPENSSL(SSL_peek_ex, 0, ssl, buf, num, readbytes);
}

QG_EXPORT int SSL_connect(SSL *ssl)
{
    return CALL_OPENSSL(SSL_connect, -1, ssl);
}

QG_EXPORT int SSL_do_handshake(SSL *ssl)
{
    return CALL_OPENSSL(SSL_do_handshake, -1, ssl);
}

QG_EXPORT int SSL_shutdown(SSL *ssl)
{
    return CALL_OPENSSL(SSL_shutdown, -1, ssl);
}
