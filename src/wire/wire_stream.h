/* The wire front's pure part: where each message of a PostgreSQL (v3) or
 * MySQL connection begins and ends, in both directions, and the client
 * stream rewritten so that a blocked query never reaches the server.  No
 * system call is made here: bytes leave through the caller's `send`, and the
 * caller's `check` decides each query, so tests and fuzzing drive the same
 * code the shim runs (src/front/front_wire.c).
 *
 * Client to server (qg_wire_write): bytes of messages that carry no SQL pass
 * through as they come.  A message that carries SQL (PostgreSQL Query and
 * Parse; MySQL COM_QUERY and COM_STMT_PREPARE, with their continuation
 * packets past 16 MiB) is checked once it is whole, then sent as it is or
 * replaced.  A message (or header) that a write leaves incomplete is held:
 * its bytes are reported written but kept here.  That is safe for any writer,
 * blocking or not, because a server cannot answer an incomplete message, so
 * the program must write again before it waits for an answer.  The write
 * that completes the message first pushes the whole message (or its
 * replacement) to the kernel; until the kernel took all of it, none of the
 * completing bytes are reported written (a short count, or -1 with the
 * kernel's EAGAIN), so the program's retry — which must start with those
 * bytes — finishes the push.  Nothing is lost, duplicated or reordered.  At
 * most one message is held per connection, and only up to
 * QG_WIRE_HOLD_MAX bytes: a longer query cannot be checked (enforce drops it
 * and sends the replacement; audit sends it as it is), and either way it is
 * logged.
 *
 * PostgreSQL messages may be written before the answers to the ones ahead
 * of them (several Queries in one write, Parse/Bind/Execute/Sync, a Query
 * with the StartupMessage): each message is accounted once, in stream
 * order, before the next is checked (qg_wire_pg_account): Query,
 * FunctionCall, Sync and the StartupMessage are each answered by one
 * ReadyForQuery, and each Query's and Parse's text, the StartupMessage's
 * parameters and a Bind of a statement prepared earlier add the states they
 * may leave (pg_state.h).  While answers are due, `check` sees them in
 * c->pg_unanswered and c->pg_pending; the last answer empties them.  A
 * StartupMessage, and a Bind once a state-changing statement was prepared,
 * are held until whole so that their contents can be read.
 *
 * Server to client (qg_wire_read): observed only, never changed.  PostgreSQL
 * ParameterStatus gives client_encoding and standard_conforming_strings;
 * MySQL's handshake gives the client's collation, OK packets the status
 * flags (NO_BACKSLASH_ESCAPES) and, where the client asked for session
 * tracking, character_set_client; a query's SET effects (computed by the
 * caller when it checked the query) apply when the server answers OK.
 * TLS (PostgreSQL SSLRequest answered 'S', MySQL CLIENT_SSL) sets c->tls:
 * the socket then carries TLS records, and the same stream goes on in the
 * plaintext of the TLS library's calls, which the front feeds here instead
 * (the MySQL handshake response is then the client's second packet).
 * MySQL's compressed protocol is followed inside its frames
 * (wire_compress.h).  GSSAPI encryption (GSSENCRequest answered 'G'), MySQL
 * compression that cannot be followed (zstd, or zlib that cannot be loaded)
 * and a stream the framing cannot follow end the tracking: from there on no
 * byte is read, and io->unread_may_pass decides whether the client's bytes
 * pass or the write is refused.  A MySQL handshake response that asks for
 * compression that cannot be followed is itself held: where unread bytes
 * may not pass it goes as a login the server refuses
 * (qg_wire_login_refusal), so the client reads an error naming quoteguard.
 */
#ifndef QG_WIRE_STREAM_H
#define QG_WIRE_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "wire_frame.h"

typedef struct qg_wire_io {
    /* Sends bytes like send(2): the count taken, or -1 with errno. */
    ssize_t (*send)(void *ctx, const uint8_t *p, size_t n);
    /* Decides one whole query: true sends it as it is; false sends the
     * replacement the callee put into *replacement (qg_wire_replacement),
     * or nothing when the callee gave the connection up
     * (QG_WIRE_UNREAD_PROBE): the write then fails with EACCES. */
    bool (*check)(void *ctx, qg_wire_conn *c, const qg_wire_msg *m, qg_wire_buf *replacement);
    /* The connection is no longer read (c->unread says why) and client bytes
     * are about to pass unread: true lets them pass; false refuses them, and
     * the write fails with EACCES (bytes before that point went as usual). */
    bool (*unread_may_pass)(void *ctx, qg_wire_conn *c);
    void *ctx;
} qg_wire_io;

/* Processes one write of n client bytes: returns how many count as written
 * (0 < r <= n), or -1 with errno from io->send (or EACCES: refused unread
 * bytes) when none do. */
ssize_t qg_wire_write(qg_wire_conn *c, const qg_wire_io *io, const uint8_t *p, size_t n);

/* qg_wire_write and qg_wire_read of the packet stream itself: the bytes
 * on the socket, or inside MySQL's compressed frames (wire_compress.c).
 * The read returns how many bytes it took: fewer than n where the login
 * OK switched the connection to compressed frames. */
ssize_t qg_wire_packets_write(qg_wire_conn *c, const qg_wire_io *io, const uint8_t *p, size_t n);
size_t qg_wire_packets_read(qg_wire_conn *c, const uint8_t *p, size_t n);
/* qg_wire_packets_read past p[0, i), which qg_wire_whole_read took. */
size_t qg_wire_packets_read_from(qg_wire_conn *c, const uint8_t *p, size_t n, size_t i);

/* PostgreSQL's whole messages from a message boundary, read where they
 * lie, up to a ParameterStatus or a message cut short: of them only a
 * ReadyForQuery changes what the front keeps.  The bytes they take of
 * p[0, n). */
size_t qg_wire_pg_whole_messages(qg_wire_conn *c, const uint8_t *p, size_t n);

/* MySQL's whole packets after the login, from a packet boundary: read
 * where they lie (qg_wire_my_whole_packets).  The bytes they take of
 * p[0, n). */
static inline size_t qg_wire_my_read_packets(qg_wire_conn *c, const uint8_t *p, size_t n)
{
    qg_wire_my_walked w = qg_wire_my_whole_packets(&c->my, &c->session, p, n);
    if (w.last) {
        c->in_seq = w.last[3];
        c->in_len = qg_wire_my_header_len(w.last);
    }
    if (c->my.infile) { /* the client's next packets are the file */
        c->my.infile = false;
        c->out.infile = true;
    }
    return w.taken;
}

/* A read at a message or packet boundary of a connection in the clear
 * (after the MySQL login), whose first messages are whole and no
 * PostgreSQL ParameterStatus: the bytes of p[0, n) one walk takes. */
static inline size_t qg_wire_whole_read(qg_wire_conn *c, const uint8_t *p, size_t n)
{
    if (c->in.left != 0 || c->in_keep || c->in_hdr_len != 0 || c->passthrough)
        return 0;
    if (c->proto == QG_WIRE_MYSQL)
        return c->my_command_phase && !c->in.continues ? qg_wire_my_read_packets(c, p, n) : 0;
    return c->proto == QG_WIRE_PG && !c->pg_tls_asked ? qg_wire_pg_whole_messages(c, p, n) : 0;
}

/* qg_wire_read past p[0, i), which qg_wire_whole_read took: every case. */
void qg_wire_read_rest(qg_wire_conn *c, const uint8_t *p, size_t n, size_t i);

/* Observes n bytes the server sent (as the client received them).  Inlined
 * into the interposers: a read of whole answers walks them from there
 * (docs/PERFORMANCE.md, "Choices in the code"). */
static inline void qg_wire_read(qg_wire_conn *c, const uint8_t *p, size_t n)
{
    c->in_pos += n;
    size_t i = c->z_on ? 0 : qg_wire_whole_read(c, p, n);
    if (i != n)
        qg_wire_read_rest(c, p, n, i);
}

/* Frees what the connection holds (its compression state too). */
void qg_wire_conn_release(qg_wire_conn *c);

/* With c->hide_compression, right after qg_wire_read of the same n bytes
 * (the program's own buffer): clears the MySQL greeting's zstd capability
 * bit, and CLIENT_COMPRESS where c->load_zlib finds no zlib, where they lie
 * in p, so that a client that reads the server's offer does not ask for
 * compression the wire front cannot follow.  The wire front's own reading
 * keeps the server's true offer. */
void qg_wire_my_hide_compression(qg_wire_conn *c, uint8_t *p, size_t n);

/* The message the server answers with an ordinary error naming quoteguard,
 * in place of m: PG Query → DO … RAISE; PG Parse → a Parse (same statement
 * name) whose text fails to parse-analyse with the message; MySQL COM_QUERY
 * → SIGNAL SQLSTATE '45000'; COM_STMT_PREPARE → a prepare that fails with
 * an unknown column naming quoteguard (src/core/replacement.h).
 * `message` is ASCII ("quoteguard: blocked …"); `sqlstate` (5 characters,
 * or NULL for 42501) is what the PG Query raises.  False without memory. */
bool qg_wire_replacement(const qg_wire_conn *c, const qg_wire_msg *m, const char *message,
                         const char *sqlstate, qg_wire_buf *out);

/* The MySQL user the refused login names, so that the server's error names
 * quoteguard: "Access denied for user 'quoteguard: …'". */
#define QG_WIRE_REFUSED_LOGIN_USER "quoteguard: compression refused"

/* In place of the whole handshake response p[0, n) (QG_WIRE_MY_LOGIN): the
 * same packet without the compression flags and with the user
 * QG_WIRE_REFUSED_LOGIN_USER, a login the server refuses; it answers before
 * anything is compressed, so the client reads the error.  False without
 * memory or without a user name in p. */
bool qg_wire_login_refusal(const uint8_t *p, size_t n, qg_wire_buf *out);


#endif
