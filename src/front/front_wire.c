/* Wire front: guards drivers that speak the PostgreSQL or MySQL protocol
 * themselves (PHP mysqlnd, PyMySQL, pg8000, node, JDBC, a static copy of a
 * client library), below any client library, at the libc calls that carry
 * a socket's bytes.
 *
 * A stream socket the program creates (socket(2)) is a candidate until its
 * first bytes: a PostgreSQL startup request written first, or a MySQL
 * greeting read first, makes it a guarded connection; anything else drops
 * it.  The bytes decide however the calls split them: while too few have
 * gone by to say (a 4-byte length written alone, a greeting's header read
 * alone) and they can still begin one of those, they pass (they carry no
 * SQL) and are kept in the descriptor's head until the next call decides.
 * A connection whose queries pass through libpq or libmariadb is handed to
 * their fronts: they call qg_wire_library_guarded (libpq's front with
 * PQsocket before each query; libmariadb's with mysql_get_socket once a
 * session, at its connect or reconnect or the first query that finds it),
 * and from then on its bytes pass unchecked here (one check per query).  A duplicate of such a descriptor
 * (dup, dup2, dup3, F_DUPFD, or a copy the process received from itself
 * with SCM_RIGHTS) carries bytes the library front never sees: writes
 * through it are refused in enforce, logged once in audit; a duplicate or
 * copy of a connection followed here shares it.  A stream socket whose
 * start the shim did not see (inherited across exec, received from another
 * process) is watched only for a query written on it, which is refused: its
 * session's state is unknown.  A program that reaches the
 * library around the preload (psycopg 3's ctypes binding resolves
 * PQsendQuery from libpq's own handle) is never handed over, so its
 * queries are checked here.  A connection the wire front can no longer
 * read (TLS another stack does, GSSAPI encryption, MySQL compression it
 * cannot inflate, bytes it cannot frame) is refused from that point in enforce: its writes fail
 * with EACCES and `wire_unguarded` says why, once; audit and wire_unguarded
 * = pass let it pass, said once.  Every other descriptor passes through after one load from a
 * fixed table indexed by fd (no lock, no system call).  The streams
 * themselves are followed by src/wire/wire_stream.c; the C library's entry points
 * are in front_wire_io.c, its stdio, splice and sendfile in
 * front_wire_paths.c, OpenSSL's (a connection that went on inside TLS) in
 * front_wire_tls.c.
 *
 * Descriptors at or above QG_WIRE_FDS are never guarded.  A program that
 * uses one descriptor from several threads at once, or closes it while
 * another thread reads it, already breaks its protocol; the shim does not
 * add a lock for that case beyond the connection's own.  A program may
 * write a connection in one thread while another reads it: a write that
 * must wait for room in the socket waits outside the lock, holding only
 * the writers' turn (front_wire_io.c, guarded_write), so that the reader
 * can empty the server's answers that the server waits on.
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "attach.h"
#include "config.h"
#include "front_wire.h"
#include "front_wire_fd.h"
#include "guard.h"
#include "hot.h"
#include "log.h"
#include "mysql_session.h"
#include "mysql_statements.h"
#include "pg_check.h"
#include "settings.h"
#include "wire_compress.h"
#include "wire_probe.h"
#include "wire_stream.h"
#include "zlib_loader.h"

QG_FAR_BSS wire_fd *qg_wire_fds[QG_WIRE_FDS];
QG_FAR_BSS wire_head qg_wire_heads[QG_WIRE_FDS];
QG_FAR_BSS uint64_t qg_wire_made_here[QG_WIRE_FDS / 64];
static int highest_fd = -1; /* for the walk after fork */

unsigned qg_wire_tls_conns;

static void fd_release(wire_fd *w)
{
    if (!w || !qg_wire_is_conn(w) || __atomic_sub_fetch(&w->refs, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    if (w->tls_counted)
        __atomic_sub_fetch(&qg_wire_tls_conns, 1, __ATOMIC_ACQ_REL);
    qg_wire_conn_release(&w->conn);
    free(w);
}

/* Puts w (or NULL) at fd, releasing what was there (a descriptor the
 * program closed in a way the shim did not see). */
void qg_wire_fd_put(int fd, wire_fd *w)
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
    qg_wire_head_set(&qg_wire_heads[fd], 0, false);
    fd_release(__atomic_exchange_n(&qg_wire_fds[fd], w, __ATOMIC_ACQ_REL));
}

/* A copy of fd's entry for a duplicate descriptor: the same connection; for
 * a socket a client library's front checks, a refusal (the library front
 * reads only what goes through the library, and bytes written through the
 * copy would reach the server unread). */
wire_fd *qg_wire_fd_share(int fd)
{
    wire_fd *w = qg_wire_fd_entry(fd);
    if (w == QG_WIRE_LIBRARY)
        return qg_wire_refused("a duplicate of the socket of a connection that the client "
                               "library's front checks");
    if (qg_wire_is_conn(w))
        __atomic_add_fetch(&w->refs, 1, __ATOMIC_ACQ_REL);
    return w;
}

wire_fd *qg_wire_refused(const char *why)
{
    wire_fd *w = calloc(1, sizeof *w);
    if (!w)
        return QG_WIRE_UNSEEN; /* its queries are refused all the same */
    w->refs = 1;
    w->refused = why;
    w->route = QG_WIRE_ROUTE_REFUSED;
    qg_wire_conn_init(&w->conn, QG_WIRE_PG);
    qg_wire_set_passthrough(&w->conn, QG_WIRE_UNREAD_LIBRARY);
    return w;
}

/* Enforce and rewrite refuse what cannot be followed; audit lets it pass. */
static bool refusing(const qg_settings *s)
{
    return s->mode != QG_MODE_AUDIT && s->mode != QG_MODE_OFF;
}

/* Says once per *told that `what` cannot be checked: an error naming the
 * refusal when `refuse`, else a warning.  Returns refuse. */
static bool tell_unchecked(bool *told, bool refuse, const char *event, const char *what)
{
    if (!__atomic_exchange_n(told, true, __ATOMIC_ACQ_REL)) {
        char detail[448];
        snprintf(detail, sizeof detail, "quoteguard: %s: %s cannot be checked",
                 refuse ? "refused (EACCES)" : "not checked", what);
        qg_log_write_event(qg_settings_get(), refuse ? "error" : "warning", event, detail);
    }
    return refuse;
}

bool qg_wire_refuse(bool *told, const char *event, const char *what)
{
    return tell_unchecked(told, refusing(qg_settings_get()), event, what);
}

bool qg_wire_refuse_write(wire_fd *w)
{
    char what[256];
    snprintf(what, sizeof what, "bytes written through %s", w->refused);
    return qg_wire_refuse(&w->told_refused, "wire_write_refused", what);
}

/* Nothing of the client's stream is held back or owed to the kernel. */
static bool nothing_held(const qg_wire_conn *c)
{
    return c->hold.len == 0 && c->owed.len == 0 && c->covers == 0 && !c->dropping &&
           !qg_wire_z_holds(c);
}

bool qg_wire_refuse_unread_call(int fd, bool into, const char *call)
{
    wire_fd *w = qg_wire_fd_entry(fd);
    if (w == QG_WIRE_CANDIDATE) {
        qg_wire_drop_candidate(fd);
        return false;
    }
    char what[160];
    snprintf(what, sizeof what, "bytes moved by %s %s a database connection's socket", call,
             into ? "into" : "out of");
    const char *event = into ? "wire_write_refused" : "wire_read_refused";
    if (w == QG_WIRE_LIBRARY) {
        static bool told_library;
        return qg_wire_refuse(&told_library, event, what);
    }
    if (!qg_wire_is_conn(w) || (qg_wire_route(w) & QG_WIRE_ROUTE_SETTLED))
        return false;
    if (qg_wire_fd_refused(w))
        return into && qg_wire_refuse_write(w);
    /* Audit lets the bytes go and stops following the connection, whose
     * stream they leave unknown; not while bytes of the stream are held,
     * which would then reach the server after them. */
    bool refuse = refusing(qg_settings_get());
    qg_wire_lock(w);
    if (!refuse && nothing_held(&w->conn)) {
        qg_wire_set_passthrough(&w->conn, QG_WIRE_UNREAD_STREAM);
        w->told_passthrough = true; /* said here */
        qg_wire_after_use(w);
    } else {
        refuse = true;
    }
    qg_wire_unlock(w);
    return tell_unchecked(&w->told_refused, refuse, event, what);
}

/* fd is the socket *st describes (the same open socket: a copy of it). */
static bool same_socket(int fd, const struct stat *st)
{
    struct stat other;
    return fstat(fd, &other) == 0 && other.st_dev == st->st_dev && other.st_ino == st->st_ino;
}

/* A descriptor received with SCM_RIGHTS: the entry of the socket it copies,
 * or, for another socket, QG_WIRE_UNSEEN (its start was in another
 * process).  One fstat per received descriptor while the wire front is on. */
static void received(int fd)
{
    if (fd < 0 || fd >= QG_WIRE_FDS)
        return;
    wire_fd *entry = NULL;
    struct stat st;
    if (qg_wire_enabled() && fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode)) {
        entry = QG_WIRE_UNSEEN;
        int highest = __atomic_load_n(&highest_fd, __ATOMIC_RELAXED);
        for (int other = 0; other <= highest && other < QG_WIRE_FDS; other++) {
            wire_fd *w = qg_wire_fd_entry(other);
            if (other != fd && (w == QG_WIRE_LIBRARY || qg_wire_is_conn(w)) &&
                same_socket(other, &st) && (w = qg_wire_fd_share(other)) != NULL) {
                entry = w;
                break;
            }
        }
    }
    qg_wire_fd_put(fd, entry);
}

void qg_wire_received_rights(const struct msghdr *msg)
{
    for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR((struct msghdr *)msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS || c->cmsg_len < CMSG_LEN(0))
            continue;
        size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + i * sizeof fd, sizeof fd);
            received(fd);
        }
    }
}

bool qg_wire_foreign_socket(int fd)
{
    struct stat st;
    if (qg_wire_made(fd) || !qg_wire_enabled() || fstat(fd, &st) != 0)
        return false;
    if (!S_ISSOCK(st.st_mode)) {
        qg_wire_set_made(fd, true); /* not asked again until it is closed */
        return false;
    }
    qg_wire_fd_put(fd, QG_WIRE_UNSEEN);
    return true;
}

bool qg_wire_foreign_query(int fd, const uint8_t *p, size_t n, size_t total)
{
    return qg_wire_midstream_query(p, n, total) && qg_wire_foreign_socket(fd) &&
           qg_wire_unseen_refused(fd, p, n, total);
}

bool qg_wire_unseen_refused(int fd, const uint8_t *p, size_t n, size_t total)
{
    if (!qg_wire_midstream_query(p, n, total))
        return false;
    static bool told;
    if (qg_wire_refuse(&told, "wire_write_refused",
                       "a query written on a socket whose start the shim did not see (received "
                       "from another process, or inherited across exec)"))
        return true;
    qg_wire_fd_put(fd, NULL); /* audit: said once, then no longer watched */
    return false;
}

QG_COLD void qg_wire_lock_wait(unsigned *lock, unsigned seen)
{
    if (seen != 2)
        seen = __atomic_exchange_n(lock, 2, __ATOMIC_ACQUIRE);
    while (seen != 0) {
        syscall(SYS_futex, lock, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
        seen = __atomic_exchange_n(lock, 2, __ATOMIC_ACQUIRE);
    }
}

QG_COLD void qg_wire_lock_wake(unsigned *lock)
{
    syscall(SYS_futex, lock, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* The child of a fork gets fresh locks: a thread of the parent may have
 * held one, and that thread is not in the child. */
static void renew_locks(void)
{
    for (int fd = 0; fd <= highest_fd && fd < QG_WIRE_FDS; fd++)
        if (qg_wire_is_conn(qg_wire_fds[fd])) {
            __atomic_store_n(&qg_wire_fds[fd]->lock, 0, __ATOMIC_RELAXED);
            __atomic_store_n(&qg_wire_fds[fd]->write_turn, 0, __ATOMIC_RELAXED);
            qg_wire_fds[fd]->write_waiting = false;
        }
}

__attribute__((constructor)) static void keep_locks_across_fork(void)
{
    pthread_atfork(NULL, NULL, renew_locks);
}

bool qg_wire_enabled(void)
{
    const qg_settings *s = qg_settings_get();
    return s->wire && s->mode != QG_MODE_OFF && s->active;
}

/* Depth of a client library's own connect on this thread. */
static __thread unsigned in_library_connect __attribute__((tls_model("initial-exec")));

void qg_wire_library_connect_begin(void)
{
    in_library_connect++;
}

void qg_wire_library_connect_end(void)
{
    in_library_connect--;
}

wire_fd *qg_wire_recognise(int fd, qg_wire_proto proto, const uint8_t *head, size_t head_len,
                           size_t passed)
{
    wire_fd *w = calloc(1, sizeof *w);
    if (!w) {
        qg_wire_fd_put(fd, NULL);
        return NULL;
    }
    w->refs = 1;
    qg_wire_conn_init(&w->conn, proto);
    if (in_library_connect > 0) {
        /* the library's front checks this connection's queries */
        qg_wire_set_passthrough(&w->conn, QG_WIRE_UNREAD_LIBRARY);
        w->told_passthrough = true;
    } else {
        /* MySQL compression is followed with zlib, loaded when first
         * needed; a mode that blocks hides the server's offer of the
         * compression the wire front cannot follow; audit changes no byte */
        qg_mode mode = qg_settings_get()->mode;
        w->conn.load_zlib = qg_zlib_load;
        w->conn.hide_compression = mode == QG_MODE_ENFORCE || mode == QG_MODE_REWRITE;
    }
    if (passed > 0)
        qg_wire_already_sent(&w->conn, head, head_len, passed);
    wire_fd *expected = QG_WIRE_CANDIDATE;
    if (!__atomic_compare_exchange_n(&qg_wire_fds[fd], &expected, w, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        fd_release(w);
        return qg_wire_is_conn(expected) ? expected : NULL;
    }
    qg_wire_head_set(&qg_wire_heads[fd], 0, false);
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

void qg_wire_drop_candidate(int fd)
{
    wire_fd *expected = QG_WIRE_CANDIDATE;
    qg_wire_head_set(&qg_wire_heads[fd], 0, false);
    __atomic_compare_exchange_n(&qg_wire_fds[fd], &expected, NULL, false, __ATOMIC_ACQ_REL,
                                __ATOMIC_RELAXED);
}

bool qg_wire_unread_may_pass(void *ctx, qg_wire_conn *c)
{
    (void)ctx;
    const qg_settings *s = qg_settings_get();
    if (c->unread == QG_WIRE_UNREAD_PROBE)
        return false; /* a stream left broken: no byte can be read right by the server */
    return c->unread == QG_WIRE_UNREAD_LIBRARY || !refusing(s) || s->wire_unguarded_pass;
}

static const char *unread_reason(const qg_wire_conn *c)
{
    switch (c->unread) {
    case QG_WIRE_UNREAD_COMPRESSED:
        return c->my_login_refused
                   ? "MySQL compression the wire front cannot read (zstd, or zlib where libz.so.1 "
                     "cannot be loaded), which the client asked for (its login went as one the "
                     "server refuses, naming quoteguard)"
                   : "MySQL compression the wire front cannot read (zstd, or zlib where libz.so.1 "
                     "cannot be loaded), which the client asked for";
    case QG_WIRE_UNREAD_INFLATE:
        return "MySQL compressed data that does not inflate as its frame header says";
    case QG_WIRE_UNREAD_GSSAPI:
        return "PostgreSQL GSSAPI encryption";
    case QG_WIRE_UNREAD_TLS:
        return "TLS that the system OpenSSL's SSL_write/SSL_read on its socket do not carry";
    case QG_WIRE_UNREAD_DIRECT_TLS:
        return "PostgreSQL direct TLS (a TLS ClientHello for \"postgresql\" with no SSLRequest "
               "before it)";
    case QG_WIRE_UNREAD_PROBE:
        return "a stream left broken by the shim's own question about its state (no whole "
               "answer in time)";
    case QG_WIRE_UNREAD_STREAM:
    case QG_WIRE_UNREAD_LIBRARY:
    case QG_WIRE_READ_ALL:
        break;
    }
    return "a stream the wire front cannot frame";
}

/* Says once per connection that it is no longer read, and why; where its
 * bytes may not pass, every later write through it is refused at once. */
QG_COLD static void tell_unread(wire_fd *w)
{
    w->told_passthrough = true;
    if (w->conn.unread == QG_WIRE_UNREAD_LIBRARY)
        return; /* not unguarded: the library's front checks it */
    const qg_settings *s = qg_settings_get();
    bool refuse = !qg_wire_unread_may_pass(NULL, &w->conn);
    const char *why = unread_reason(&w->conn);
    char what[384];
    snprintf(what, sizeof what, "a database connection that went on in %s%s", why,
             refusing(s) && !refuse ? " (wire_unguarded = pass)" : "");
    bool told = false; /* once: told_passthrough */
    tell_unchecked(&told, refuse, "wire_unguarded", what);
    if (refuse) {
        __atomic_store_n(&w->told_refused, true, __ATOMIC_RELEASE);
        w->refused = why;
        qg_wire_route_set(w, QG_WIRE_ROUTE_REFUSED);
    }
}

ssize_t qg_wire_give_up_refused(wire_fd *w, int fd, ssize_t r)
{
    if (r >= 0 || errno != EACCES || !qg_wire_fd_refused(w) ||
        w->conn.unread == QG_WIRE_UNREAD_LIBRARY)
        return r;
    int saved = errno;
    shutdown(fd, SHUT_WR);
    errno = saved;
    return r;
}

/* Passthrough with nothing held or owed, and not refused: from now on
 * without the lock (a refused one is refused at every entry). */
static void settle(wire_fd *w)
{
    if (w->conn.passthrough && nothing_held(&w->conn) && !qg_wire_fd_refused(w))
        qg_wire_route_set(w, QG_WIRE_ROUTE_SETTLED);
}

void qg_wire_after_use_unread_or_tls(wire_fd *w)
{
    if (w->conn.tls && !w->tls_counted) {
        w->tls_counted = true;
        __atomic_add_fetch(&qg_wire_tls_conns, 1, __ATOMIC_ACQ_REL);
    }
    if (w->conn.passthrough && !w->told_passthrough)
        tell_unread(w);
    settle(w);
}

void qg_wire_library_takes(int fd)
{
    wire_fd *w = qg_wire_fd_entry(fd);
    if (w == QG_WIRE_CANDIDATE) {
        __atomic_compare_exchange_n(&qg_wire_fds[fd], &w, QG_WIRE_LIBRARY, false,
                                    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
        return;
    }
    if (!qg_wire_is_conn(w))
        return;
    qg_wire_lock(w);
    qg_wire_set_passthrough(&w->conn, QG_WIRE_UNREAD_LIBRARY);
    w->told_passthrough = true; /* not unguarded: the library front has it */
    settle(w);
    bool settled = qg_wire_route(w) & QG_WIRE_ROUTE_SETTLED;
    qg_wire_unlock(w);
    /* Nothing held or owed: the entry becomes the library's marker, and
     * the socket's reads and writes pass after one comparison.  (The
     * library uses its connection from one thread at a time, so no call of
     * ours is inside the entry now.) */
    if (settled && __atomic_compare_exchange_n(&qg_wire_fds[fd], &w, QG_WIRE_LIBRARY, false,
                                               __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
        fd_release(w);
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
    case QG_WIRE_MY_LOGIN:
    case QG_WIRE_OTHER:
        break;
    }
    return "wire";
}

/* mysql_allowed where answers to earlier commands are pending or the state
 * is not known: each state those answers may leave, or the server's word
 * asked for, or a stale state under which only a text that reads alike in
 * every state passes. */
__attribute__((noinline)) static bool mysql_allowed_pending(qg_wire_conn *c, const qg_wire_msg *m,
                                                            const send_ctx *sc, qg_my_plan *plan,
                                                            const char *api, qg_decision *d)
{
    qg_my_state states[QG_WIRE_MY_STATES];
    size_t count = 0;
    const void *caller = sc->caller;
    bool known = qg_wire_my_states(&c->my, &c->session, states, QG_WIRE_MY_STATES, &count);
    if (!known && !qg_my_plan_reads_alike(plan) && refusing(qg_settings_get()) &&
        (!c->tls || sc->tls_link) && qg_wire_probe_may(c, m)) {
        /* the server says what the state is before the query goes */
        qg_wire_probe_outcome asked = qg_wire_probe_server(c, sc);
        if (asked == QG_WIRE_PROBE_KNOWN)
            known = qg_wire_my_states(&c->my, &c->session, states, QG_WIRE_MY_STATES, &count);
        else if (asked == QG_WIRE_PROBE_BROKE)
            return qg_my_state_unknown(c, api, c->session.encoding, m->sql, m->len, caller,
                                       &c->my.told_unknown, d);
    }
    if (!known) {
        /* checked as a session whose state is stale (only a text that reads
         * alike in every state passes), what it sets read with the last
         * state known */
        qg_my_session session = {.state = c->session.my_state, .stale = true};
        if (!qg_my_session_check(&session, NULL, c, api, plan, caller, &c->my.told_unknown, d))
            return false;
        qg_wire_my_query_effect(&c->my, plan, &session.state);
        return true;
    }
    /* the first is the state now: its table is kept until it changes */
    if (!c->session.encoding_table)
        c->session.encoding_table = qg_encoding_find(QG_DIALECT_MYSQL, states[0].charset);
    for (size_t i = 0; i < count; i++)
        if (!qg_my_state_check(&states[i], i == 0 ? c->session.encoding_table : NULL, c, api, plan,
                               caller, &c->my.told_unknown, d))
            return false;
    /* each check read the plan from its state, the last from the last one */
    qg_wire_my_query_effect(&c->my, plan, NULL);
    return true;
}

/* A MySQL text, checked under every state it may meet (the earlier
 * commands whose answers are not read yet may leave several), as the
 * libmariadb front checks: a multi-statement text statement by statement.
 * Where one of those states only the server knows, the text passes only if
 * it reads alike in all. */
static bool mysql_allowed(const qg_settings *s, qg_wire_conn *c, const qg_wire_msg *m,
                          const send_ctx *sc, qg_decision *d)
{
    const char *api = api_of(m->kind);
    bool alone = qg_wire_my_state_alone(&c->my);
    /* with no answer pending, the session's state alone, checked in place
     * (docs/PERFORMANCE.md, "Choices in the code"); its table is kept until
     * it changes */
    if (alone && !c->session.encoding_table)
        c->session.encoding_table =
            qg_encoding_find(QG_DIALECT_MYSQL, c->session.my_state.charset);
    signed char semicolon = -1; /* searched: as qg_my_plan_single keeps it */
    if (alone && s->verbosity < 2)
        semicolon = qg_my_holds_semicolon(m->sql, m->len) ? 1 : 0;
    if (semicolon == 0) {
        /* one statement, not logged: one piece in every state, checked as
         * the libraries' fronts check it, the guard in line; what it does
         * read from its first word, the plan only where that word may
         * change something */
        if (!qg_guard_clean_in_line(s, QG_DIALECT_MYSQL, c->session.encoding_table,
                                    c->session.my_state.flags, NULL, m->sql, m->len) &&
            !qg_my_piece_check(c, api, &c->session.my_state, c->session.encoding_table, m->sql,
                               m->len, sc->caller, d))
            return false;
        qg_wire_my_single_effect(&c->my, m->sql, m->len, &c->session.my_state);
        return true;
    }
    qg_my_plan plan;
    qg_my_plan_init(&plan, m->sql, m->len);
    plan.semicolon = semicolon;
    if (!alone)
        return mysql_allowed_pending(c, m, sc, &plan, api, d);
    if (!qg_my_state_check(&c->session.my_state, c->session.encoding_table, c, api, &plan,
                           sc->caller, &c->my.told_unknown, d))
        return false;
    /* the check read the plan from the state */
    qg_wire_my_query_effect(&c->my, &plan, NULL);
    return true;
}

static const char *wire_server_encoding(const void *conn)
{
    return ((const qg_wire_conn *)conn)->session.server_encoding;
}

/* A PostgreSQL query written before the server answered the messages ahead
 * of it: checked under the state the server reported and every state those
 * messages may leave; where none is known (before the startup's answer,
 * without a client_encoding in the startup), as an unknown encoding. */
static bool check_pg_unanswered(const qg_wire_conn *c, const qg_wire_msg *m, const void *caller,
                                qg_decision *d)
{
    qg_pg_pending states = c->pg_pending;
    if (c->pg_reported)
        qg_pg_pending_add_reported(&states, c->session.encoding, c->session.std_strings);
    if (states.encoding_count == 0)
        states.encoding_unknown = true;
    if (!states.scs_on && !states.scs_off)
        states.scs_on = states.scs_off = true;
    qg_query q = {
        .dialect = QG_DIALECT_POSTGRES,
        .conn = c,
        .api = api_of(m->kind),
        .sql = m->sql,
        .len = m->len,
        .caller = caller,
    };
    return qg_pg_check_states(&q, wire_server_encoding, &states, d);
}

/* A message whose text cannot be checked (too large to hold, or not found
 * in it): passed in audit, else replaced; logged either way. */
__attribute__((noinline)) static bool unchecked_message(const qg_settings *s, qg_wire_conn *c,
                                                        const qg_wire_msg *m,
                                                        qg_wire_buf *replacement)
{
    qg_decision d;
    bool pass = s->mode == QG_MODE_AUDIT;
    if (m->too_large) {
        d.sqlstate = "54000"; /* program_limit_exceeded */
        snprintf(d.message, sizeof d.message,
                 "quoteguard: blocked: a query of more than %u MiB cannot be checked",
                 QG_WIRE_HOLD_MAX >> 20);
        qg_log_write_event(s, pass ? "warning" : "error", "wire_query_too_large", d.message);
    } else {
        d.sqlstate = "08P01"; /* protocol_violation */
        snprintf(d.message, sizeof d.message,
                 "quoteguard: blocked: a query whose text cannot be found in its message");
        qg_log_write_event(s, pass ? "warning" : "error", "wire_query_unreadable", d.message);
    }
    if (pass) {
        if (c->proto == QG_WIRE_MYSQL)
            qg_wire_my_unreadable(&c->my); /* sent unread (audit): what it does is unknown */
        return true;
    }
    if (!qg_wire_replacement(c, m, d.message, d.sqlstate, replacement))
        qg_wire_buf_free(replacement);
    return false;
}

bool qg_wire_check_query(void *ctx, qg_wire_conn *c, const qg_wire_msg *m,
                         qg_wire_buf *replacement)
{
    send_ctx *sc = ctx;
    const qg_settings *s = qg_settings_get();
    if (s->mode == QG_MODE_OFF || !s->active || !s->wire)
        return true;
    if (m->too_large || m->unreadable)
        return unchecked_message(s, c, m, replacement);
    qg_decision d;
    bool pass;
    if (c->proto == QG_WIRE_MYSQL) {
        pass = mysql_allowed(s, c, m, sc, &d);
    } else if (c->pg_unanswered > 0) {
        pass = check_pg_unanswered(c, m, sc->caller, &d);
    } else {
        if (!c->session.encoding_table)
            c->session.encoding_table = qg_encoding_find(QG_DIALECT_POSTGRES, c->session.encoding);
        unsigned flags = c->session.std_strings ? QG_STD_STRINGS : 0;
        if (qg_guard_clean_in_line(s, QG_DIALECT_POSTGRES, c->session.encoding_table, flags, NULL,
                                   m->sql, m->len))
            return true;
        qg_query q = {
            .dialect = QG_DIALECT_POSTGRES,
            .encoding_name = c->session.encoding,
            .encoding = c->session.encoding_table,
            .flags = flags,
            .conn = c,
            .api = api_of(m->kind),
            .sql = m->sql,
            .len = m->len,
            .caller = sc->caller,
        };
        pass = qg_guard_query(&q, &d);
    }
    if (pass)
        return true;
    if (!qg_wire_replacement(c, m, d.message, d.sqlstate, replacement))
        qg_wire_buf_free(replacement);
    return false;
}

