/* The wire front's connections and framing (src/wire/wire_frame.c): the state
 * of one followed connection, where each client message or packet begins and
 * ends, what it carries, and its SQL text.  wire_stream.h builds on it. */
#ifndef QG_WIRE_FRAME_H
#define QG_WIRE_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pg_state.h"
#include "wire_mysql.h"
#include "wire_session.h"

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
    /* the MySQL handshake response of a client that asked for compression
     * the wire front cannot read: no SQL; the stream passes it (the
     * connection then unread) or sends a login the server refuses
     * (qg_wire_login_refusal) */
    QG_WIRE_MY_LOGIN,
} qg_wire_kind;

/* One whole SQL-carrying message, as `check` sees it. */
typedef struct qg_wire_msg {
    qg_wire_kind kind;
    const char *sql; /* the query text (not NUL-terminated) */
    size_t len;
    const char *name; /* PG Parse: the statement name */
    size_t name_len;
    bool too_large;  /* longer than QG_WIRE_HOLD_MAX: sql is NULL, not checkable */
    bool unreadable; /* its text cannot be found in it: sql is NULL */
    /* every byte of the client's stream before it is in the kernel: bytes
     * of the front's own may go to the server before it */
    bool at_start;
} qg_wire_msg;


/* Where one direction stands: `left` bytes remain of the current message
 * (PG) or packet (MySQL); at 0 the next byte starts a header. */
typedef struct qg_wire_framer {
    uint64_t left;
    bool untyped;      /* PG before the startup message: no type byte */
    bool startup;      /* PG: the untyped message being passed is a StartupMessage */
    bool continues;    /* MySQL: the packet being passed is 0xffffff long */
    uint8_t packets;   /* MySQL: packets seen (handshake phase) */
    bool infile;       /* MySQL: LOAD DATA LOCAL's file packets, up to an empty one */
} qg_wire_framer;

/* A growable byte buffer. */
typedef struct qg_wire_buf {
    uint8_t *data;
    size_t len, cap;
} qg_wire_buf;

/* Why a connection's bytes are no longer read (c->passthrough). */
typedef enum qg_wire_unread {
    QG_WIRE_READ_ALL = 0,
    QG_WIRE_UNREAD_LIBRARY,    /* a client library's front checks its queries */
    QG_WIRE_UNREAD_COMPRESSED, /* MySQL compression it cannot read was agreed (zstd, or no zlib) */
    QG_WIRE_UNREAD_INFLATE,    /* MySQL compressed data that does not inflate as its frame says */
    QG_WIRE_UNREAD_GSSAPI,     /* PostgreSQL GSSAPI encryption (GSSENCRequest answered 'G') */
    QG_WIRE_UNREAD_TLS,        /* TLS the system OpenSSL's calls on its socket do not carry */
    QG_WIRE_UNREAD_DIRECT_TLS, /* PostgreSQL TLS from the first byte (no SSLRequest) */
    QG_WIRE_UNREAD_STREAM,     /* bytes the framing cannot follow (or no memory to hold them) */
    QG_WIRE_UNREAD_PROBE,      /* the front's own question to the server went unanswered */
} qg_wire_unread;

/* zlib's inflate functions (wire_compress.h), as the front loads them. */
typedef struct qg_wire_zlib qg_wire_zlib;
typedef const qg_wire_zlib *(*qg_wire_zlib_loader)(void);
struct qg_wire_z;

typedef struct qg_wire_conn qg_wire_conn;
struct qg_wire_conn {
    qg_wire_proto proto;
    bool passthrough;        /* its bytes are no longer read: `unread` says why */
    qg_wire_unread unread;
    /* MySQL: the greeting's flags of the compression the wire front cannot
     * follow are cleared in the bytes the client reads
     * (qg_wire_my_hide_compression), so that a client that follows the
     * server's word never asks for it; cleared once the greeting is past */
    bool hide_compression;
    /* MySQL's compressed protocol (wire_compress.h): the front's loader of
     * zlib (NULL: none); zlib's functions once compression was agreed and
     * is followed; `z_on` from the login OK on, when both directions are
     * compressed frames, whose state `z` holds */
    qg_wire_zlib_loader load_zlib;
    const qg_wire_zlib *zlib;
    bool z_on;
    struct qg_wire_z *z;
    /* MySQL: the handshake response that asked for compression went as a
     * login the server refuses */
    bool my_login_refused;
    uint64_t my_version_end; /* MySQL: stream offset of the greeting's version NUL, 0 unseen */
    /* The stream went on inside TLS (PostgreSQL SSLRequest answered 'S', MySQL
     * CLIENT_SSL): the socket's bytes from here on are TLS records, and the
     * protocol continues in the bytes the TLS library's calls carry, which the
     * front feeds to qg_wire_write / qg_wire_read (front_wire_tls.c). */
    bool tls;
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
    bool pg_tls_asked;       /* PG: SSLRequest/GSSENCRequest sent, answer byte not seen */
    /* server to client */
    qg_wire_framer in;
    uint8_t in_hdr[5];
    uint8_t in_hdr_len;
    uint8_t in_type;         /* PG message type / MySQL first payload byte */
    uint8_t in_seq;
    qg_wire_buf in_body;     /* a message to parse (ParameterStatus, OK, greeting) */
    bool in_keep;            /* in_body is being filled */
    /* PG: client messages the server has not answered yet (each Query,
     * FunctionCall, Sync and the StartupMessage is answered by one
     * ReadyForQuery), and every state they may leave for a message written
     * before those answers (pg_state.h) */
    uint32_t pg_unanswered;
    uint64_t pg_accounted_end; /* out_pos after the last message accounted */
    qg_pg_pending pg_pending;
    bool pg_prepared_sets_state; /* a Parse that may change the state was sent */
    /* statements parsed since pg_pending was last empty, whose effects it
     * holds already (a Bind of another may run one prepared before) */
    char pg_parsed[4][32];
    uint8_t pg_parsed_count;
    bool pg_reported;            /* the server reported its client_encoding */
    uint64_t in_len;         /* the length of the packet being read (MySQL) */
    uint64_t in_pos;         /* server bytes observed so far */
    /* session */
    qg_wire_session session;
    qg_wire_my my;           /* MySQL: agreed capabilities, commands, answers */
};

void qg_wire_conn_init(qg_wire_conn *c, qg_wire_proto proto);

/* First bytes a client writes on a fresh stream socket: a PostgreSQL v3
 * StartupMessage, SSLRequest, GSSENCRequest or CancelRequest. */
bool qg_wire_looks_like_pg(const uint8_t *p, size_t n);
/* First bytes a client reads on a socket it has not written to: a MySQL
 * server greeting (protocol 10). */
bool qg_wire_looks_like_mysql(const uint8_t *p, size_t n);
/* The first n (< 8, resp. < 6) bytes of a stream can still begin what
 * qg_wire_looks_like_pg (written), resp. qg_wire_looks_like_mysql (read),
 * recognise. */
bool qg_wire_may_become_pg(const uint8_t *p, size_t n);
bool qg_wire_may_become_mysql(const uint8_t *p, size_t n);
/* The first write on a fresh stream socket, p[0, n), is a TLS ClientHello
 * (one whole record) that offers the ALPN protocol "postgresql": a
 * PostgreSQL connection with direct TLS (no SSLRequest before it). */
bool qg_wire_is_pg_direct_tls(const uint8_t *p, size_t n);
/* A write of `total` bytes, p[0, n) its first, on a stream socket whose
 * start was not seen, begins with a query a database client sends: a
 * PostgreSQL Query or Parse under 16 MiB whose whole message is in the
 * write, or a MySQL COM_QUERY or COM_STMT_PREPARE packet at sequence 0
 * (whole, or the first of a command past 16 MiB).  No server sends
 * either. */
bool qg_wire_midstream_query(const uint8_t *p, size_t n, size_t total);
/* The client's first `passed` bytes of head[0, n) (a PostgreSQL stream's
 * first message, n >= 8 > passed) went by before the stream was known. */
void qg_wire_already_sent(qg_wire_conn *c, const uint8_t *head, size_t n, size_t passed);

bool qg_wire_buf_append(qg_wire_buf *b, const void *p, size_t n);
void qg_wire_buf_free(qg_wire_buf *b);


#define QG_MY_PACKET_MAX 0xffffffu

typedef enum qg_wire_cl_status {
    QG_CL_NEED, /* more bytes are needed to know: `need` in all */
    QG_CL_PASS, /* a packet or message without SQL: `total` bytes */
    QG_CL_SQL,  /* a query message: whole when `complete` (then `total` bytes) */
} qg_wire_cl_status;

typedef struct qg_wire_classified {
    qg_wire_cl_status status;
    qg_wire_kind kind;
    uint64_t total;
    size_t need;
    bool complete;
    bool too_large;      /* cannot be held: PG length known to exceed the bound */
    bool command;        /* MySQL: the packet starts a command */
    qg_wire_framer next; /* the framer at the start of this message, left = total */
} qg_wire_classified;

/* p[0, len) is the C string `want`. */
bool qg_wire_cstr_is(const uint8_t *p, size_t len, const char *want);

/* A PostgreSQL length or code (4 bytes, big-endian): one load and a byte
 * swap, since every message header of both directions is read with it. */
static inline uint32_t qg_wire_be32(const uint8_t *p)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return __builtin_bswap32(qg_wire_load32(p));
#else
    return qg_wire_load32(p);
#endif
}

/* Nothing of the client's packet stream is held back, owed or being
 * dropped, and no packet is half passed: a point where it may change
 * framing. */
bool qg_wire_out_at_rest(const qg_wire_conn *c);

/* From here on no byte is read (the first reason given is kept): they pass
 * or, where the front refuses unread bytes, are refused (wire_stream.h). */
void qg_wire_set_passthrough(qg_wire_conn *c, qg_wire_unread why);

/* What starts at p (a message boundary of framer f).  Notes what the
 * client negotiates (MySQL handshake response, PG SSLRequest) in c. */
void qg_wire_classify(qg_wire_conn *c, const qg_wire_framer *f, const uint8_t *p, size_t n,
                      qg_wire_classified *cl);

/* The framer after the last byte of its message or packet. */
void qg_wire_message_ended(qg_wire_framer *f);

/* Moves c->out over n sent bytes of p, all inside a planned run whose
 * headers are complete within `avail` bytes. */
void qg_wire_advance(qg_wire_conn *c, const uint8_t *p, size_t n, size_t avail);

/* PG: the client message cl (at stream position pos; p[0, avail) of it
 * at hand) goes to the server, `blocked` when it is a blocked query's
 * replacement: counts what will be answered and adds the states it may
 * leave.  Each position is accounted once, however often it is planned.
 * `text`: the message's text as the check found it (qg_wire_message_text
 * of the whole message, sql NULL where it has none to read), or NULL when
 * it was not looked for. */
void qg_wire_pg_account(qg_wire_conn *c, uint64_t pos, const uint8_t *p, size_t avail,
                        const qg_wire_classified *cl, bool blocked, const qg_wire_msg *text);
/* PG: qg_wire_pg_account of a whole Query or Parse (kind) of `total`
 * bytes at c->out_pos, past the startup message, whose text the check
 * found (`text`, its sql NULL where it had none to read): the front
 * door's, without a classification to build. */
void qg_wire_pg_account_lead(qg_wire_conn *c, qg_wire_kind kind, size_t total, bool blocked,
                             const qg_wire_msg *text);
/* PG after the startup message, from a message boundary of framer f
 * (f->left == 0) at stream position pos of a connection still read: how
 * many bytes of p[0, n) are messages that carry no SQL and are not held
 * (each header read where it lies; a message may run past n, then f->left
 * says how much of it is still to come).  Each Sync and FunctionCall among
 * them is accounted as qg_wire_pg_account accounts it.  Stops before a
 * Query, a Parse, a Bind that may be held, a header cut short and a length
 * no message has, which qg_wire_classify reads. */
size_t qg_wire_pg_pass_plain(qg_wire_conn *c, qg_wire_framer *f, uint64_t pos, const uint8_t *p,
                             size_t n);
/* PG: a ReadyForQuery arrived.  Inlined into the walk of the answers. */
static inline void qg_wire_pg_ready(qg_wire_conn *c)
{
    if (c->pg_unanswered > 0 && --c->pg_unanswered == 0) {
        /* the adds set a count or a flag with whatever they write: none
         * set, it is all zero already */
        qg_pg_pending *pending = &c->pg_pending;
        if (pending->encoding_count || pending->encoding_unknown || pending->scs_on ||
            pending->scs_off)
            memset(pending, 0, sizeof *pending);
        c->pg_parsed_count = 0;
    }
}

/* The text of a whole PostgreSQL Query or Parse p[0, n) (kind), up to its
 * first NUL, in *m (a Parse's statement name too); false when a Parse has
 * no NUL after its name.  Inlined into the front door's check. */
static inline bool qg_wire_pg_message_text(qg_wire_kind kind, const uint8_t *p, size_t n,
                                           qg_wire_msg *m)
{
    const uint8_t *body = p + 5, *end = p + n;
    *m = (qg_wire_msg){.kind = kind};
    if (kind == QG_WIRE_PG_PARSE) {
        const uint8_t *nul = memchr(body, 0, (size_t)(end - body));
        if (!nul)
            return false;
        m->name = (const char *)body;
        m->name_len = (size_t)(nul - body);
        body = nul + 1;
    }
    const uint8_t *nul = memchr(body, 0, (size_t)(end - body));
    m->sql = (const char *)body;
    m->len = nul ? (size_t)(nul - body) : (size_t)(end - body);
    return true;
}

/* The text of the whole SQL message p[0, n) (continuation packets' headers
 * removed into `joined` when there are several); false when malformed. */
bool qg_wire_message_text(const qg_wire_conn *c, qg_wire_kind kind, const uint8_t *p, size_t n,
                          qg_wire_buf *joined, qg_wire_msg *m);

#endif
