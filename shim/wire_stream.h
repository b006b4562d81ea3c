/* The wire front's pure part: where each message of a PostgreSQL (v3) or
 * MySQL connection begins and ends, in both directions, and the client
 * stream rewritten so that a blocked query never reaches the server.  No
 * system call is made here: bytes leave through the caller's `send`, and the
 * caller's `check` decides each query, so tests and fuzzing drive the same
 * code the shim runs (shim/front_wire.c).
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
 * Server to client (qg_wire_read): observed only, never changed.  PostgreSQL
 * ParameterStatus gives client_encoding and standard_conforming_strings;
 * MySQL's handshake gives the client's collation, OK packets the status
 * flags (NO_BACKSLASH_ESCAPES) and, where the client asked for session
 * tracking, character_set_client; a query's SET effects (computed by the
 * caller when it checked the query) apply when the server answers OK.
 * TLS (PostgreSQL SSLRequest answered 'S'/GSSENCRequest answered 'G',
 * MySQL CLIENT_SSL) and MySQL compression end the tracking: from there on
 * every byte passes through.
 */
#ifndef QG_WIRE_STREAM_H
#define QG_WIRE_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum qg_wire_proto {
    QG_WIRE_PG = 1,
    QG_WIRE_MYSQL = 2,
} qg_wire_proto;

/* Largest query held to be checked: MySQL's max_allowed_packet at most is
 * 1 GiB, PostgreSQL's messages 1 GiB; real queries are far below this. */
#define QG_WIRE_HOLD_MAX (64u << 20)

/* What a client message is. */
typedef enum qg_wire_kind {
    QG_WIRE_OTHER = 0,
    QG_WIRE_PG_QUERY,   /* 'Q' */
    QG_WIRE_PG_PARSE,   /* 'P' */
    QG_WIRE_MY_QUERY,   /* COM_QUERY 0x03 */
    QG_WIRE_MY_PREPARE, /* COM_STMT_PREPARE 0x16 */
} qg_wire_kind;

/* One whole SQL-carrying message, as `check` sees it. */
typedef struct qg_wire_msg {
    qg_wire_kind kind;
    const char *sql; /* the query text (not NUL-terminated) */
    size_t len;
    const char *name; /* PG Parse: the statement name */
    size_t name_len;
    bool too_large; /* longer than QG_WIRE_HOLD_MAX: sql is NULL, not checkable */
} qg_wire_msg;

#define QG_WIRE_CHARSET_MAX 64

/* The connection's state as the server will lex the next query. */
typedef struct qg_wire_session {
    char encoding[QG_WIRE_CHARSET_MAX]; /* PG client_encoding / MySQL character_set_client */
    bool std_strings;                   /* PG standard_conforming_strings = on */
    bool no_backslash_escapes;          /* MySQL */
    bool ansi_quotes;                   /* MySQL, from SET sql_mode only */
} qg_wire_session;

/* Where one direction stands: `left` bytes remain of the current message
 * (PG) or packet (MySQL); at 0 the next byte starts a header. */
typedef struct qg_wire_framer {
    uint64_t left;
    bool untyped;      /* PG before the startup message: no type byte */
    bool startup;      /* PG: the untyped message being passed is a StartupMessage */
    bool continues;    /* MySQL: the packet being passed is 0xffffff long */
    uint8_t packets;   /* MySQL: packets seen (handshake phase) */
} qg_wire_framer;

/* A growable byte buffer. */
typedef struct qg_wire_buf {
    uint8_t *data;
    size_t len, cap;
} qg_wire_buf;

typedef struct qg_wire_conn qg_wire_conn;

typedef struct qg_wire_io {
    /* Sends bytes like send(2): the count taken, or -1 with errno. */
    ssize_t (*send)(void *ctx, const uint8_t *p, size_t n);
    /* Decides one whole query: true sends it as it is; false sends the
     * replacement the callee put into *replacement (qg_wire_replacement). */
    bool (*check)(void *ctx, qg_wire_conn *c, const qg_wire_msg *m, qg_wire_buf *replacement);
    void *ctx;
} qg_wire_io;

struct qg_wire_conn {
    qg_wire_proto proto;
    bool passthrough;        /* TLS, compression, or a stream we cannot follow */
    /* client to server */
    qg_wire_framer out;
    uint64_t out_pos;        /* client bytes accounted so far */
    uint64_t approved_end;   /* out_pos at the end of the last query `check` passed */
    qg_wire_buf hold;        /* an incomplete message, from its first header byte */
    qg_wire_buf owed;        /* bytes due to the kernel before `covers` more client bytes count */
    size_t owed_done;
    size_t covers;
    qg_wire_buf decided;     /* the replacement of a blocked query not reached yet */
    uint64_t decided_at;     /* out_pos where that query starts */
    bool dropping;           /* an unchecked oversized query is being dropped */
    uint8_t drop_hdr[4];     /* MySQL: a dropped continuation packet's header so far */
    uint8_t drop_hdr_len;
    bool my_command_phase;   /* MySQL: authentication succeeded */
    uint32_t my_client_caps; /* MySQL: capability flags of the handshake response */
    bool pg_tls_asked;       /* PG: SSLRequest/GSSENCRequest sent, answer byte not seen */
    /* server to client */
    qg_wire_framer in;
    uint8_t in_hdr[5];
    uint8_t in_hdr_len;
    uint8_t in_type;         /* PG message type / MySQL first payload byte */
    uint8_t in_seq;
    qg_wire_buf in_body;     /* a message to parse (ParameterStatus, OK, greeting) */
    bool in_keep;            /* in_body is being filled */
    bool my_awaiting_reply;  /* MySQL: a command was sent, its first answer is next */
    /* session */
    qg_wire_session session;
    bool effect_pending;     /* MySQL: a sent query's SET effects await its OK */
    qg_wire_session effect;
};

void qg_wire_conn_init(qg_wire_conn *c, qg_wire_proto proto);
void qg_wire_conn_release(qg_wire_conn *c);

/* First bytes a client writes on a fresh stream socket: a PostgreSQL v3
 * StartupMessage, SSLRequest, GSSENCRequest or CancelRequest. */
bool qg_wire_looks_like_pg(const uint8_t *p, size_t n);
/* First bytes a client reads on a socket it has not written to: a MySQL
 * server greeting (protocol 10). */
bool qg_wire_looks_like_mysql(const uint8_t *p, size_t n);

/* Processes one write of n client bytes: returns how many count as written
 * (0 < r <= n), or -1 with errno from io->send when none do. */
ssize_t qg_wire_write(qg_wire_conn *c, const qg_wire_io *io, const uint8_t *p, size_t n);

/* Observes n bytes the server sent (as the client received them). */
void qg_wire_read(qg_wire_conn *c, const uint8_t *p, size_t n);

/* The message the server answers with an ordinary error naming quoteguard,
 * in place of m: PG Query → DO … RAISE; PG Parse → a Parse (same statement
 * name) whose text fails to parse-analyse with the message; MySQL COM_QUERY
 * → SIGNAL SQLSTATE '45000'; COM_STMT_PREPARE → a prepare that fails with
 * an unknown column naming quoteguard.  `message` is ASCII ("quoteguard:
 * blocked …"); `sqlstate` (5 characters, or NULL for 42501) is what the PG
 * Query raises.  False without memory. */
bool qg_wire_replacement(const qg_wire_conn *c, const qg_wire_msg *m, const char *message,
                         const char *sqlstate, qg_wire_buf *out);

/* The MySQL statement a blocked query becomes: SIGNAL SQLSTATE '45000' with
 * error 1105 and (the head of) `message`.  Returns its length (< cap). */
size_t qg_wire_mysql_signal(char *out, size_t cap, const char *message);

/* MySQL collation id (handshake) → character set name, or NULL. */
const char *qg_wire_mysql_charset_of_collation(unsigned id);

bool qg_wire_buf_append(qg_wire_buf *b, const void *p, size_t n);
void qg_wire_buf_free(qg_wire_buf *b);

#endif
