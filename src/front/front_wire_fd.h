/* What the wire front's files share (front_wire.c: the descriptor table,
 * recognition and checking; front_wire_io.c: the C library's entry points;
 * front_wire_tls.c: OpenSSL's, for connections inside TLS).  Internal to
 * the wire front, but for the library fronts' test of QG_WIRE_LIBRARY
 * (front_wire.h). */
#ifndef QG_FRONT_WIRE_FD_H
#define QG_FRONT_WIRE_FD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "real.h"
#include "wire_stream.h"

#define QG_EXPORT __attribute__((visibility("default")))

/* next_NAME(): the C library's NAME past the shim's interposer, resolved
 * once; after that one load, inlined into the interposer.  known_NAME():
 * the same once resolved, else NULL (for an interposer whose common path
 * makes no call of its own). */
#define QG_WIRE_NEXT(name)                                                                \
    static void *next_##name##_slot;                                                      \
    static inline __typeof__(&(name)) known_##name(void)                                  \
    {                                                                                     \
        return (__typeof__(&(name)))__atomic_load_n(&next_##name##_slot, __ATOMIC_ACQUIRE); \
    }                                                                                     \
    static inline __typeof__(&(name)) next_##name(void)                                     \
    {                                                                                     \
        __typeof__(&(name)) fn = known_##name();                                          \
        return fn ? fn : (__typeof__(&(name)))qg_real_next(&next_##name##_slot, #name);    \
    }

#define QG_WIRE_FDS 65536
/* Table entries that are not connections: */
/* a fresh stream socket, until its first bytes say what it carries */
#define QG_WIRE_CANDIDATE ((wire_fd *)1)
/* a connection whose queries a client library's front checks: its own
 * bytes pass; a duplicate of its descriptor is refused (qg_wire_refused) */
#define QG_WIRE_LIBRARY ((wire_fd *)2)
/* a stream socket whose start the shim did not see (received from another
 * process with SCM_RIGHTS, inherited across exec and written a query; or a
 * refusal no memory
 * was left for): a write that begins with a query is refused
 * (qg_wire_unseen_refused), everything else passes */
#define QG_WIRE_UNSEEN ((wire_fd *)3)

typedef struct wire_fd {
    /* its lock (qg_wire_lock): 0 free, 1 held, 2 held and a thread waits */
    unsigned lock;
    /* A write that waits for room in the socket leaves the lock to the
     * connection's readers, with write_waiting set (under the lock) and the
     * writers' turn held (qg_wire_turn_take, the same kind of word): a
     * write that finds write_waiting waits for the turn, so that no other
     * write comes between. */
    unsigned write_turn;
    bool write_waiting;
    unsigned refs; /* descriptors that share it (dup) */
    /* The QG_WIRE_ROUTE_ bits: 0 while its calls take the lock and its
     * bytes are read, which the interposers' common path tests with one
     * load (qg_wire_route).  Each bit is set once. */
    unsigned char route;
    /* With QG_WIRE_ROUTE_REFUSED: why, for the refusal (read with
     * qg_wire_fd_refused). */
    const char *refused;
    bool told_refused;
    bool told_passthrough;
    bool tls_counted; /* counted in qg_wire_tls_conns */
    /* An SSL_write that returned failure after part of its bytes were taken
     * (front_wire_tls.c): its length, and how many its retry skips. */
    size_t tls_retry_num, tls_retry_taken;
    qg_wire_conn conn;
} wire_fd;

/* The connection's lock, around every use of w->conn.  Taken with one
 * atomic compare-and-swap when free, released with one exchange; only a
 * thread that finds it held, or a release that finds a thread waiting,
 * makes a system call (futex): the lock of "Futexes Are Tricky" (Drepper),
 * whose waiters mark the word 2 before they sleep and sleep only while it
 * still is 2, so that no release is missed.  Not recursive, as the default
 * pthread mutex; a fork's child gets every lock free (front_wire.c). */
void qg_wire_lock_wait(unsigned *lock, unsigned seen);
void qg_wire_lock_wake(unsigned *lock);

static inline void qg_wire_word_lock(unsigned *word)
{
    unsigned seen = 0;
    if (!__atomic_compare_exchange_n(word, &seen, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        qg_wire_lock_wait(word, seen);
}

static inline void qg_wire_word_unlock(unsigned *word)
{
    if (__atomic_exchange_n(word, 0, __ATOMIC_RELEASE) == 2)
        qg_wire_lock_wake(word);
}

static inline void qg_wire_lock(wire_fd *w)
{
    qg_wire_word_lock(&w->lock);
}

static inline void qg_wire_unlock(wire_fd *w)
{
    qg_wire_word_unlock(&w->lock);
}

static inline void qg_wire_turn_take(wire_fd *w)
{
    qg_wire_word_lock(&w->write_turn);
}

static inline void qg_wire_turn_put(wire_fd *w)
{
    qg_wire_word_unlock(&w->write_turn);
}

/* The bits of wire_fd.route. */
enum {
    /* Bytes written through it cannot be followed (a duplicate of a socket
     * a client library's front checks, a connection no longer read whose
     * bytes may not pass unread). */
    QG_WIRE_ROUTE_REFUSED = 1,
    /* passthrough with nothing held or owed: its bytes go straight to libc
     * without the lock (set under it) */
    QG_WIRE_ROUTE_SETTLED = 2,
    /* the connection went on inside TLS through the system OpenSSL: its
     * socket's bytes are TLS records that pass without the lock, and the SSL
     * calls carry the protocol (set under it; front_wire_tls.c) */
    QG_WIRE_ROUTE_TLS = 4,
};

static inline unsigned qg_wire_route(const wire_fd *w)
{
    return __atomic_load_n(&w->route, __ATOMIC_ACQUIRE);
}

/* Sets a QG_WIRE_ROUTE_ bit, after what it stands for (release). */
static inline void qg_wire_route_set(wire_fd *w, unsigned bit)
{
    __atomic_or_fetch(&w->route, (unsigned char)bit, __ATOMIC_RELEASE);
}

/* Connections that went on inside TLS and are still open: while 0, the SSL
 * calls pass without looking up their descriptor. */
extern unsigned qg_wire_tls_conns;

/* NULL: not ours; one of the markers above; else a connection.  Read with
 * one atomic load on every read and write. */
extern wire_fd *qg_wire_fds[QG_WIRE_FDS];

static inline wire_fd *qg_wire_fd_entry(int fd)
{
    return fd >= 0 && fd < QG_WIRE_FDS ? __atomic_load_n(&qg_wire_fds[fd], __ATOMIC_ACQUIRE) : NULL;
}

/* An entry that is a connection (not NULL, not a marker). */
static inline bool qg_wire_is_conn(const wire_fd *w)
{
    return (const char *)w > (const char *)QG_WIRE_UNSEEN;
}

/* Why writes through w are refused, or NULL. */
static inline const char *qg_wire_fd_refused(wire_fd *w)
{
    return qg_wire_route(w) & QG_WIRE_ROUTE_REFUSED ? w->refused : NULL;
}

/* After a write through fd returned r: when it was refused because its
 * connection is not read, the connection is given up: its sending half is
 * shut down, so that the server sees its end and closes, and neither side
 * waits for bytes that will not come (a TLS stack that ignores a failed
 * write would wait for the server's answer); answers to what went before
 * can still be read.  A copy of a library front's socket is not: that connection is
 * the library's.  Returns r, errno kept. */
ssize_t qg_wire_give_up_refused(wire_fd *w, int fd, ssize_t r);

/* The first bytes of a candidate whose calls so far were too short to say
 * what it carries: they passed (no SQL is in them), and recognition waits
 * for the rest.  `read`: they were received, else written. */
#define QG_WIRE_HEAD_MAX 8
typedef struct wire_head {
    uint8_t len;
    bool read;
    uint8_t bytes[QG_WIRE_HEAD_MAX];
} wire_head;

extern wire_head qg_wire_heads[QG_WIRE_FDS];

/* A head's length is stored last (release) and loaded first (acquire), so
 * that whoever reads it sees the bytes before it: a descriptor number
 * passes between threads through the kernel (close, then socket), which
 * ThreadSanitizer does not see. */
static inline size_t qg_wire_head_len(const wire_head *h)
{
    return __atomic_load_n(&h->len, __ATOMIC_ACQUIRE);
}

static inline bool qg_wire_head_read(const wire_head *h)
{
    return __atomic_load_n(&h->read, __ATOMIC_RELAXED);
}

static inline void qg_wire_head_set(wire_head *h, size_t len, bool read)
{
    __atomic_store_n(&h->read, read, __ATOMIC_RELAXED);
    __atomic_store_n(&h->len, (uint8_t)len, __ATOMIC_RELEASE);
}

/* How the front's own question to a MySQL server and its answer travel
 * (front_wire_probe.c): one call each way that does not wait, returning the
 * count, or -1 with errno (EAGAIN: *wait is what poll(2) waits for on fd
 * before the call is made again). */
typedef struct qg_wire_probe_link {
    int fd;
    ssize_t (*send)(void *ctx, const uint8_t *p, size_t n, short *wait);
    ssize_t (*recv)(void *ctx, uint8_t *p, size_t n, short *wait);
    void *ctx;
} qg_wire_probe_link;

/* How the program's call sends bytes, so that the rest of its stream goes
 * the same way. */
typedef enum send_how { HOW_WRITE, HOW_SEND, HOW_SENDTO, HOW_SENDMSG } send_how;

typedef struct send_ctx {
    int fd;
    send_how how;
    int flags;
    const struct sockaddr *addr;
    socklen_t addrlen;
    const struct msghdr *msg; /* HOW_SENDMSG */
    bool control_sent;
    /* MSG_DONTWAIT was added to flags (for write(2): send(2) is called with
     * it), where the program's call would wait: guarded_write waits for room
     * outside the lock */
    bool dontwait;
    const void *caller;
    /* inside TLS: the way through the program's SSL object that the front's
     * own question takes (front_wire_tls.c); NULL on a plain socket */
    const qg_wire_probe_link *tls_link;
} send_ctx;


/* Puts w (or NULL) at fd, releasing what was there. */
void qg_wire_fd_put(int fd, wire_fd *w);
/* fd's entry for a duplicate descriptor (a connection gains a reference). */
wire_fd *qg_wire_fd_share(int fd);
/* The wire front is on (setting wire, mode not off, program active). */
bool qg_wire_enabled(void);
/* A candidate whose first bytes are known: the connection, or NULL.  `head`
 * holds the first bytes of the stream (at least 8 written for PostgreSQL),
 * of which the first `passed` already went by. */
wire_fd *qg_wire_recognise(int fd, qg_wire_proto proto, const uint8_t *head, size_t head_len,
                           size_t passed);
/* A new entry for a descriptor whose written bytes cannot be followed. */
wire_fd *qg_wire_refused(const char *why);
/* Says once per *told (enforce: an error, audit: a warning; `event` names
 * the log line) that `what` cannot be checked; true when the mode refuses it
 * (the call fails with EACCES), false in audit (it passes). */
bool qg_wire_refuse(bool *told, const char *event, const char *what);
/* qg_wire_refuse for a write through w, an entry made by qg_wire_refused. */
bool qg_wire_refuse_write(wire_fd *w);
/* `call` is about to move bytes into (or out of) fd where the shim cannot
 * read them (splice, sendfile): true when it must fail with EACCES.  A
 * database connection's socket (followed, or a client library front's) is
 * refused in enforce; audit lets it pass, said once, and a followed
 * connection is no longer followed (refused even in audit while part of its
 * stream is held, which would reach the server after those bytes).  A
 * candidate stops being one: its first bytes went by unseen. */
bool qg_wire_refuse_unread_call(int fd, bool into, const char *call);
/* After a recvmsg: each descriptor msg's SCM_RIGHTS brought in gets the
 * entry of the socket it is a copy of (one the shim follows, or a client
 * library front's, whose copy is refused as a duplicate is), else
 * QG_WIRE_UNSEEN for a socket, none for anything else. */
void qg_wire_received_rights(const struct msghdr *msg);
/* Descriptors of sockets this process made (socket, socketpair, accept),
 * their duplicates, and descriptors found not to be sockets, a bit each: a
 * socket without the bit was made in another process and inherited across
 * exec. */
extern uint64_t qg_wire_made_here[QG_WIRE_FDS / 64];

static inline void qg_wire_set_made(int fd, bool made)
{
    if (fd < 0 || fd >= QG_WIRE_FDS)
        return;
    uint64_t bit = (uint64_t)1 << (fd % 64);
    if (made)
        __atomic_or_fetch(&qg_wire_made_here[fd / 64], bit, __ATOMIC_RELAXED);
    else
        __atomic_and_fetch(&qg_wire_made_here[fd / 64], ~bit, __ATOMIC_RELAXED);
}

static inline bool qg_wire_made(int fd)
{
    return fd >= 0 && fd < QG_WIRE_FDS &&
           (__atomic_load_n(&qg_wire_made_here[fd / 64], __ATOMIC_RELAXED) >> (fd % 64) & 1);
}

/* Whether p[0, n) may begin a query a client writes (a PostgreSQL Query or
 * Parse, a MySQL packet at sequence 0): the cheap test every write of a
 * descriptor without an entry takes before qg_wire_foreign_query. */
static inline bool qg_wire_query_like(const uint8_t *p, size_t n)
{
    return n >= 5 && (((p[0] == 'Q' || p[0] == 'P') && p[1] == 0) || p[3] == 0);
}

/* Whether fd, which has no entry, is a socket made in another process (it
 * becomes QG_WIRE_UNSEEN); one fstat per descriptor until it is closed. */
bool qg_wire_foreign_socket(int fd);
/* A write of `total` bytes (p[0, n) its first, query-like) on fd, which has
 * no entry: true when it must fail with EACCES, as a query written on a
 * socket this process did not make (qg_wire_unseen_refused; the socket
 * becomes QG_WIRE_UNSEEN).  One fstat, only for such a write. */
bool qg_wire_foreign_query(int fd, const uint8_t *p, size_t n, size_t total);
/* A write of `total` bytes (p[0, n) its first) on QG_WIRE_UNSEEN fd: true
 * when it begins with a query and must fail with EACCES (said once; audit
 * lets it pass and stops watching fd). */
bool qg_wire_unseen_refused(int fd, const uint8_t *p, size_t n, size_t total);
/* A candidate whose first bytes are not a database's. */
void qg_wire_drop_candidate(int fd);
/* Under the lock, after each use of a connection: says once that it is no
 * longer followed, and lets a settled one pass without the lock; counts it
 * among the connections inside TLS once.  A connection read in the clear,
 * or inside TLS once counted, needs none of it. */
void qg_wire_after_use_unread_or_tls(wire_fd *w);

static inline void qg_wire_after_use(wire_fd *w)
{
    if (w->conn.passthrough || (w->conn.tls && !w->tls_counted))
        qg_wire_after_use_unread_or_tls(w);
}
/* Under the lock, for a connection whose raw bytes are about to pass (fd
 * calls): true when they are TLS records, to pass unread (front_wire_tls.c). */
bool qg_wire_tls_raw(wire_fd *w, int fd);
/* Depth of the OpenSSL calls the shim passes through on this thread
 * (front_wire_tls.c): raw bytes made inside them are the system OpenSSL's,
 * and an SSL call OpenSSL makes from inside one passes straight through
 * (the connection's lock may be held). */
extern __thread unsigned qg_wire_in_openssl __attribute__((tls_model("initial-exec")));
/* Depth of SSL_write calls on this thread that are not followed.  A raw
 * byte of a followed connection written inside one means its SSL object
 * does not lead to its descriptor (a BIO SSL_get_fd cannot see through);
 * written outside every call here, that TLS records are made where these
 * calls do not see (an SSL BIO, a function looked up in libssl's own
 * handle). */
extern __thread unsigned qg_wire_in_unfollowed_write __attribute__((tls_model("initial-exec")));

/* Raw bytes made now are a followed SSL_write's or SSL_read's own
 * records: qg_wire_tls_unfollowed's first test, in line. */
static inline bool qg_wire_in_followed_openssl(void)
{
    return qg_wire_in_openssl > 0 && !qg_wire_in_unfollowed_write;
}
/* Without the lock, for a followed TLS connection whose raw bytes are
 * written: true (and the connection given up, said once) when they come
 * from an SSL_write that was not tied to it, or from outside OpenSSL's
 * calls the shim sees (front_wire_tls.c). */
bool qg_wire_tls_unfollowed(wire_fd *w);
/* The qg_wire_io unread_may_pass: the connection's unread bytes pass when
 * a client library's front checks it, in audit, or with wire_unguarded =
 * pass; else they are refused. */
bool qg_wire_unread_may_pass(void *ctx, qg_wire_conn *c);
/* How long the wire front's own question about a MySQL connection's state
 * and its answer may take together (front_wire_probe.c). */
#define QG_WIRE_PROBE_TIMEOUT_MS 10000

typedef enum qg_wire_probe_outcome {
    QG_WIRE_PROBE_KNOWN,     /* the server's answer gave the state */
    QG_WIRE_PROBE_NOT_ASKED, /* the stream is as it was: the state is still unknown */
    QG_WIRE_PROBE_BROKE,     /* the answer was not read whole: the connection is given up */
} qg_wire_probe_outcome;

/* Under the lock, inside a write of a query that needs the state, when
 * qg_wire_probe_may says so: asks the server for the state and reads the
 * whole answer (front_wire_probe.c), on the socket sc writes, or inside TLS
 * by sc->tls_link. */
qg_wire_probe_outcome qg_wire_probe_server(qg_wire_conn *c, const send_ctx *sc);
/* write(2) followed, its queries logged as called from `caller` (NULL:
 * not known, as for a stdio stream's writes). */
ssize_t qg_wire_write_from(int fd, const void *buf, size_t n, const void *caller);
/* The qg_wire_io check: the guard's verdict on one whole query (ctx is the
 * send_ctx of the call). */
bool qg_wire_check_query(void *ctx, qg_wire_conn *c, const qg_wire_msg *m,
                         qg_wire_buf *replacement);

#endif
