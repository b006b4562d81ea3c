/* The wire front's framing: message boundaries of the client's stream, what
 * each message carries, and the SQL text of the ones that carry it (the
 * rules are in wire_stream.h). */
#include "wire_frame.h"

#include <stdlib.h>
#include <string.h>

#define PG_SSL_REQUEST 80877103u
#define PG_GSSENC_REQUEST 80877104u
#define PG_CANCEL_REQUEST 80877102u
#define PG_STARTUP_MAX 10000u


bool qg_wire_buf_append(qg_wire_buf *b, const void *p, size_t n)
{
    if (n > b->cap - b->len) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->len < n)
            cap *= 2;
        uint8_t *grown = realloc(b->data, cap);
        if (!grown)
            return false;
        b->data = grown;
        b->cap = cap;
    }
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    return true;
}

void qg_wire_buf_free(qg_wire_buf *b)
{
    if (!b->data)
        return; /* empty: nothing was ever appended */
    free(b->data);
    *b = (qg_wire_buf){0};
}

void qg_wire_conn_init(qg_wire_conn *c, qg_wire_proto proto)
{
    memset(c, 0, sizeof *c);
    c->proto = proto;
    c->out.untyped = proto == QG_WIRE_PG;
}

bool qg_wire_out_at_rest(const qg_wire_conn *c)
{
    return c->hold.len == 0 && c->owed.len == 0 && c->covers == 0 && !c->dropping &&
           c->out.left == 0;
}

bool qg_wire_looks_like_pg(const uint8_t *p, size_t n)
{
    if (n < 8)
        return false;
    uint32_t len = qg_wire_be32(p), code = qg_wire_be32(p + 4);
    if (code == PG_SSL_REQUEST || code == PG_GSSENC_REQUEST)
        return len == 8;
    if (code == PG_CANCEL_REQUEST)
        return len == 16;
    return code >> 16 == 3 && len >= 8 && len <= PG_STARTUP_MAX;
}

/* Skips a field of n bytes whose length is in its first `width` bytes. */
static bool skip_sized(const uint8_t **p, const uint8_t *end, unsigned width)
{
    if ((size_t)(end - *p) < width)
        return false;
    size_t len = 0;
    for (unsigned i = 0; i < width; i++)
        len = len << 8 | (*p)[i];
    if ((size_t)(end - *p) - width < len)
        return false;
    *p += width + len;
    return true;
}

/* Whether an ALPN extension's protocol list names "postgresql". */
static bool alpn_names_postgresql(const uint8_t *p, const uint8_t *end)
{
    static const char want[] = "postgresql";
    if (end - p < 2)
        return false;
    p += 2; /* the list's length: its entries are bounded by end anyway */
    while (p < end) {
        size_t len = *p;
        if ((size_t)(end - p) - 1 < len)
            return false;
        if (len == sizeof want - 1 && memcmp(p + 1, want, len) == 0)
            return true;
        p += 1 + len;
    }
    return false;
}

bool qg_wire_is_pg_direct_tls(const uint8_t *p, size_t n)
{
    enum { RECORD_HANDSHAKE = 0x16, CLIENT_HELLO = 0x01, EXTENSION_ALPN = 0x0010 };
    /* record: type, version 3.x, length; handshake: type, 24-bit length */
    if (n < 9 || p[0] != RECORD_HANDSHAKE || p[1] != 3 || p[5] != CLIENT_HELLO)
        return false;
    size_t record = (size_t)p[3] << 8 | p[4];
    if (record > n - 5)
        return false; /* not whole in this write */
    const uint8_t *end = p + 5 + record, *q = p + 9;
    /* version and random, session id, cipher suites, compression methods */
    if (end - q < 34)
        return false;
    q += 34;
    if (!skip_sized(&q, end, 1) || !skip_sized(&q, end, 2) || !skip_sized(&q, end, 1))
        return false;
    if (end - q < 2)
        return false;
    q += 2; /* the extensions' length: each is bounded by the record */
    while (end - q >= 4) {
        unsigned type = (unsigned)q[0] << 8 | q[1];
        size_t len = (size_t)q[2] << 8 | q[3];
        if ((size_t)(end - q) - 4 < len)
            return false;
        if (type == EXTENSION_ALPN)
            return alpn_names_postgresql(q + 4, q + 4 + len);
        q += 4 + len;
    }
    return false;
}

bool qg_wire_looks_like_mysql(const uint8_t *p, size_t n)
{
    /* length (3), sequence 0, protocol 10, then a printable version string */
    if (n < 6 || p[3] != 0 || p[4] != 10)
        return false;
    uint32_t len = qg_wire_le24(p);
    if (len < 20 || len > 1024)
        return false;
    size_t i = 5;
    while (i < n && i < 4 + len && p[i] != 0) {
        if (p[i] < 0x20 || p[i] > 0x7e)
            return false;
        i++;
    }
    return i > 5;
}

bool qg_wire_may_become_pg(const uint8_t *p, size_t n)
{
    if (n == 0 || n >= 8)
        return n == 0;
    /* a big-endian length of at most PG_STARTUP_MAX: its top two bytes 0 */
    if (p[0] != 0 || (n > 1 && p[1] != 0))
        return false;
    if (n < 4)
        return true;
    uint32_t len = qg_wire_be32(p);
    if (len < 8 || len > PG_STARTUP_MAX)
        return false;
    const uint8_t *code = p + 4;
    size_t have = n - 4; /* at most 3 of its 4 bytes */
    if (have == 0 || code[0] == 0) /* a StartupMessage: protocol 3.x */
        return have < 2 || code[1] == 3;
    /* SSLRequest, GSSENCRequest (8 bytes), CancelRequest (16) */
    static const uint8_t request[3] = {0x04, 0xd2, 0x16};
    return (len == 8 || len == 16) && memcmp(code, request, have) == 0;
}

bool qg_wire_may_become_mysql(const uint8_t *p, size_t n)
{
    if (n == 0 || n >= 6)
        return n == 0;
    if (n >= 3) {
        uint32_t len = qg_wire_le24(p);
        if (len < 20 || len > 1024)
            return false;
    }
    return (n < 4 || p[3] == 0) && (n < 5 || p[4] == 10);
}

bool qg_wire_midstream_query(const uint8_t *p, size_t n, size_t total)
{
    if (n < 5)
        return false;
    /* a PostgreSQL Query or Parse: its length's top byte 0 (under 16 MiB) */
    if ((p[0] == 'Q' || p[0] == 'P') && p[1] == 0) {
        uint32_t len = qg_wire_be32(p + 1);
        if (len >= 5 && (uint64_t)len + 1 <= total)
            return true;
    }
    uint32_t len = qg_wire_le24(p);
    return p[3] == 0 && (p[4] == QG_MY_COM_QUERY || p[4] == QG_MY_COM_STMT_PREPARE) && len >= 1 &&
           (len == 0xffffff || (uint64_t)len + 4 <= total);
}

/* ------------------------------------------------------------ framing */

static void pg_untyped(qg_wire_conn *c, const qg_wire_framer *f, uint32_t len, uint32_t code,
                       qg_wire_classified *cl);

void qg_wire_already_sent(qg_wire_conn *c, const uint8_t *head, size_t n, size_t passed)
{
    qg_wire_classified cl;
    memset(&cl, 0, sizeof cl);
    pg_untyped(c, &c->out, qg_wire_be32(head), qg_wire_be32(head + 4), &cl);
    qg_wire_pg_account(c, 0, head, n, &cl, false, NULL);
    c->out = cl.next;
    c->out.left = cl.total > passed ? cl.total - passed : 0;
    c->out_pos = passed;
    if (c->out.left == 0)
        qg_wire_message_ended(&c->out);
}

void qg_wire_set_passthrough(qg_wire_conn *c, qg_wire_unread why)
{
    if (!c->passthrough)
        c->unread = why;
    c->passthrough = true;
}

/* The MySQL handshake response (or SSL request): the client's collation and
 * what it negotiated.  The SSL request is the response's first 32 bytes with
 * CLIENT_SSL set: the stream goes on inside TLS, where the whole response
 * follows (CLIENT_SSL set again).  Idempotent: a retried write reads it
 * again. */
static void observe_handshake_response(qg_wire_conn *c, const uint8_t *payload, size_t len)
{
    if (len < 9) { /* not a protocol-41 response: nothing to follow */
        qg_wire_set_passthrough(c, QG_WIRE_UNREAD_STREAM);
        return;
    }
    uint32_t caps = qg_wire_le32(payload);
    qg_wire_my_response(&c->my, payload, len, c->tls);
    const char *charset = qg_wire_mysql_charset_of_collation(payload[8]);
    if (charset)
        qg_wire_my_set_charset(&c->session, charset, strlen(charset));
    if (caps & QG_MY_CLIENT_SSL)
        c->tls = true;
    /* zlib compression agreed: followed where zlib can be loaded */
    if (c->my.response_seen && (c->my.caps & QG_MY_CLIENT_COMPRESS) &&
        !(c->my.caps & QG_MY_CLIENT_ZSTD_COMPRESSION) && !c->zlib && c->load_zlib)
        c->zlib = c->load_zlib();
    /* what both sides agreed decides (a flag the server did not offer is
     * not in force) */
    if (!(caps & QG_MY_CLIENT_PROTOCOL_41))
        qg_wire_set_passthrough(c, QG_WIRE_UNREAD_STREAM);
}

/* The handshake response just observed asks for compression both sides
 * agree on and the wire front cannot follow: zstd, or zlib where zlib could
 * not be loaded (the SSL request's flags count only in the response after
 * it). */
static bool asks_compression(const qg_wire_conn *c)
{
    return c->my.response_seen && !c->passthrough &&
           ((c->my.caps & QG_MY_CLIENT_ZSTD_COMPRESSION) ||
            ((c->my.caps & QG_MY_CLIENT_COMPRESS) && !c->zlib));
}

/* Walks the packets of a MySQL command from p: complete (total set) or the
 * bytes needed to know more. */
static void my_command_extent(const uint8_t *p, size_t n, qg_wire_classified *cl)
{
    uint64_t off = 0;
    for (;;) {
        if (off + 4 > n) {
            cl->need = (size_t)off + 4;
            return;
        }
        uint32_t len = qg_wire_le24(p + off);
        if (off + 4 + len > QG_WIRE_HOLD_MAX + 4) {
            cl->too_large = true;
            cl->need = n + 1;
            return;
        }
        if (off + 4 + len > n) {
            cl->need = (size_t)(off + 4 + len);
            return;
        }
        off += 4 + len;
        if (len < QG_MY_PACKET_MAX) {
            cl->complete = true;
            cl->total = off;
            return;
        }
    }
}

static void classify_mysql(qg_wire_conn *c, const qg_wire_framer *f, const uint8_t *p,
                           size_t n, qg_wire_classified *cl)
{
    if (n < 4) {
        cl->need = 4;
        return;
    }
    uint32_t len = qg_wire_le24(p);
    uint8_t seq = p[3];
    cl->next = *f;
    cl->next.packets = f->packets < 255 ? f->packets + 1 : 255;
    if (f->infile) {
        /* LOAD DATA LOCAL's file, in packets up to an empty one */
        cl->status = QG_CL_PASS;
        cl->total = 4 + (uint64_t)len;
        cl->next.continues = len == QG_MY_PACKET_MAX;
        cl->next.infile = f->continues || len != 0;
        cl->next.left = cl->total;
        return;
    }
    /* after the handshake response, a packet that starts a sequence is a
     * command, also one written before the login OK came */
    if (!f->continues && c->my.response_seen && seq == 0 && len > 0) {
        if (c->zlib && !c->z_on) {
            /* before the login OK, with compression agreed: whether this is
             * a packet or a compressed frame, only the client knows */
            qg_wire_set_passthrough(c, QG_WIRE_UNREAD_STREAM);
            cl->status = QG_CL_PASS;
            cl->total = 4 + (uint64_t)len;
            cl->next.left = cl->total;
            return;
        }
        if (n < 5) {
            cl->need = 5;
            return;
        }
        cl->command = true;
        /* what the command's effect is read from: a statement id, or a
         * COM_CHANGE_USER's whole packet */
        size_t want = qg_wire_my_needs(p[4], len);
        if (n < want) {
            cl->need = want;
            return;
        }
        if (p[4] == QG_MY_COM_QUERY || p[4] == QG_MY_COM_STMT_PREPARE) {
            cl->status = QG_CL_SQL;
            cl->kind = p[4] == QG_MY_COM_QUERY ? QG_WIRE_MY_QUERY : QG_WIRE_MY_PREPARE;
            my_command_extent(p, n, cl);
            cl->next.continues = false;
            cl->next.left = cl->total;
            if (!cl->complete && !cl->too_large)
                cl->status = QG_CL_NEED;
            return;
        }
    } else if ((!c->my.response_seen || asks_compression(c)) &&
               f->packets == (c->tls ? 1 : 0) && seq == f->packets + 1) {
        /* the response: the first packet, or inside TLS the one after the
         * SSL request (read again while it is held or retried) */
        size_t want = len < 32 ? len : 32;
        if (n < 4 + want) {
            cl->need = 4 + want;
            return;
        }
        observe_handshake_response(c, p + 4, want);
        if (asks_compression(c)) {
            /* held whole: it goes as it is, or as a login the server refuses */
            cl->total = 4 + (uint64_t)len;
            cl->next.left = cl->total;
            if (len >= QG_MY_PACKET_MAX || len <= 32) {
                qg_wire_set_passthrough(c, QG_WIRE_UNREAD_COMPRESSED);
            } else if (n < cl->total) {
                cl->need = (size_t)cl->total;
                return;
            } else if (!memchr(p + 4 + 32, 0, len - 32)) { /* no user name */
                qg_wire_set_passthrough(c, QG_WIRE_UNREAD_STREAM);
            } else {
                cl->status = QG_CL_SQL;
                cl->kind = QG_WIRE_MY_LOGIN;
                cl->complete = true;
                return;
            }
        }
    }
    cl->status = QG_CL_PASS;
    cl->total = 4 + (uint64_t)len;
    cl->next.continues = len == QG_MY_PACKET_MAX;
    cl->next.left = cl->total;
}

/* An untyped first message of `len` bytes (checked) and request `code`. */
static void pg_untyped(qg_wire_conn *c, const qg_wire_framer *f, uint32_t len, uint32_t code,
                       qg_wire_classified *cl)
{
    c->pg_tls_asked = code == PG_SSL_REQUEST || code == PG_GSSENC_REQUEST;
    cl->status = QG_CL_PASS;
    cl->total = len;
    cl->next = *f;
    cl->next.startup = code >> 16 == 3;
    cl->next.left = len;
}

static void classify_pg(qg_wire_conn *c, const qg_wire_framer *f, const uint8_t *p, size_t n,
                        qg_wire_classified *cl)
{
    cl->next = *f;
    if (f->untyped) {
        if (n < 8) {
            cl->need = 8;
            return;
        }
        uint32_t len = qg_wire_be32(p), code = qg_wire_be32(p + 4);
        if (len < 8 || len > PG_STARTUP_MAX) {
            qg_wire_set_passthrough(c, QG_WIRE_UNREAD_STREAM);
            len = 8;
        }
        if (code >> 16 == 3 && n < len && !c->passthrough) {
            /* held whole: its parameters say which state the server starts in */
            cl->need = len;
            return;
        }
        pg_untyped(c, f, len, code, cl);
        return;
    }
    if (n < 5) {
        cl->need = 5;
        return;
    }
    uint32_t len = qg_wire_be32(p + 1);
    if (len < 4) {
        qg_wire_set_passthrough(c, QG_WIRE_UNREAD_STREAM);
        len = 4;
    }
    cl->total = 1 + (uint64_t)len;
    cl->next.left = cl->total;
    if (p[0] == 'B' && c->pg_prepared_sets_state && !c->passthrough && cl->total > n &&
        len <= QG_WIRE_HOLD_MAX) {
        /* held whole: the statement it names says whether it may change the state */
        cl->need = (size_t)cl->total;
        return;
    }
    if ((p[0] != 'Q' && p[0] != 'P') || c->passthrough) {
        cl->status = QG_CL_PASS;
        return;
    }
    cl->status = QG_CL_SQL;
    cl->kind = p[0] == 'Q' ? QG_WIRE_PG_QUERY : QG_WIRE_PG_PARSE;
    cl->too_large = len > QG_WIRE_HOLD_MAX;
    cl->complete = !cl->too_large && cl->total <= n;
    if (!cl->complete && !cl->too_large) {
        cl->status = QG_CL_NEED;
        cl->need = (size_t)cl->total;
    }
}

void qg_wire_classify(qg_wire_conn *c, const qg_wire_framer *f, const uint8_t *p, size_t n,
                     qg_wire_classified *cl)
{
    memset(cl, 0, sizeof *cl);
    if (c->proto == QG_WIRE_PG)
        classify_pg(c, f, p, n, cl);
    else
        classify_mysql(c, f, p, n, cl);
}

void qg_wire_message_ended(qg_wire_framer *f)
{
    if (f->untyped && f->startup)
        f->untyped = false;
    f->startup = false;
}

void qg_wire_advance(qg_wire_conn *c, const uint8_t *p, size_t n, size_t avail)
{
    qg_wire_framer *f = &c->out;
    size_t i = 0;
    while (i < n) {
        if (f->left == 0) {
            qg_wire_classified cl;
            qg_wire_classify(c, f, p + i, avail - i, &cl);
            *f = cl.next;
            if (f->left == 0) /* cannot happen for planned bytes; never loop */
                f->left = n - i;
        }
        uint64_t step = f->left < n - i ? f->left : n - i;
        f->left -= step;
        i += (size_t)step;
        if (f->left == 0)
            qg_wire_message_ended(f);
    }
}

/* ----------------------------------------------- PostgreSQL answers due */

static const qg_pg_effect any_effect = {.encoding = QG_PG_UNKNOWN, .scs = QG_PG_UNKNOWN};

bool qg_wire_cstr_is(const uint8_t *p, size_t len, const char *want)
{
    return strlen(want) == len && memcmp(p, want, len) == 0;
}

/* What a whole StartupMessage p[0, n) sets: client_encoding and
 * standard_conforming_strings as its parameters name them (the client's
 * values win over the role's and the database's); without one, the server
 * decides, which is not known here.  An `options` parameter that mentions
 * either makes it unknown. */
static qg_pg_effect pg_startup_effect(const uint8_t *p, size_t n)
{
    qg_pg_effect e = any_effect;
    bool options_mention = false;
    size_t i = 8;
    while (i < n && p[i]) {
        const uint8_t *nul = memchr(p + i, 0, n - i);
        if (!nul)
            break;
        const uint8_t *value = nul + 1;
        const uint8_t *end = memchr(value, 0, (size_t)(p + n - value));
        if (!end)
            break;
        size_t name_len = (size_t)(nul - (p + i)), value_len = (size_t)(end - value);
        if (qg_wire_cstr_is(p + i, name_len, "client_encoding") && value_len < sizeof e.encoding_name) {
            e.encoding = QG_PG_SETS;
            memcpy(e.encoding_name, value, value_len);
            e.encoding_name[value_len] = '\0';
        } else if (qg_wire_cstr_is(p + i, name_len, "standard_conforming_strings") &&
                   (qg_wire_cstr_is(value, value_len, "on") || qg_wire_cstr_is(value, value_len, "off"))) {
            e.scs = QG_PG_SETS;
            e.scs_on = qg_wire_cstr_is(value, value_len, "on");
        } else if (qg_wire_cstr_is(p + i, name_len, "options")) {
            qg_pg_effect o = qg_pg_statement_effect((const char *)value, value_len);
            options_mention = o.encoding != QG_PG_KEEPS || o.scs != QG_PG_KEEPS;
        }
        i = (size_t)(end + 1 - p);
    }
    return options_mention ? any_effect : e;
}

/* A whole Bind p[0, n) names a statement parsed since the states were
 * last known (its effect is among them). */
static bool pg_bind_of_parsed(const qg_wire_conn *c, const uint8_t *p, size_t n)
{
    const uint8_t *portal_end = memchr(p + 5, 0, n - 5);
    if (!portal_end)
        return false;
    const uint8_t *name = portal_end + 1;
    const uint8_t *name_end = memchr(name, 0, (size_t)(p + n - name));
    if (!name_end)
        return false;
    for (unsigned i = 0; i < c->pg_parsed_count; i++)
        if (qg_wire_cstr_is(name, (size_t)(name_end - name), c->pg_parsed[i]))
            return true;
    return false;
}

/* A Parse read (its text `parse`, or NULL): its statement's name is kept
 * among those whose effects the pending states hold. */
static void pg_note_parsed(qg_wire_conn *c, const qg_wire_msg *parse)
{
    if (parse && parse->name && c->pg_parsed_count < 4 &&
        parse->name_len < sizeof c->pg_parsed[0]) {
        memcpy(c->pg_parsed[c->pg_parsed_count], parse->name, parse->name_len);
        c->pg_parsed[c->pg_parsed_count++][parse->name_len] = '\0';
    }
}

/* A Query or Parse (`parse`) that goes to the server unblocked, its text
 * `read` (NULL: not read): the states it may leave are added. */
static inline void account_text(qg_wire_conn *c, bool parse, const qg_wire_msg *read)
{
    pg_note_parsed(c, parse ? read : NULL);
    qg_pg_effect e = read ? qg_pg_statement_effect(read->sql, read->len) : any_effect;
    if (e.encoding == QG_PG_KEEPS && e.scs == QG_PG_KEEPS)
        return; /* nothing to add */
    if (parse)
        c->pg_prepared_sets_state = true;
    qg_pg_pending_add_effect(&c->pg_pending, &e);
}

void qg_wire_pg_account(qg_wire_conn *c, uint64_t pos, const uint8_t *p, size_t avail,
                        const qg_wire_classified *cl, bool blocked, const qg_wire_msg *text)
{
    if (c->proto != QG_WIRE_PG || c->passthrough || pos < c->pg_accounted_end)
        return;
    c->pg_accounted_end = pos + cl->total;
    bool whole = avail >= cl->total;
    if (cl->next.untyped) {
        if (!cl->next.startup)
            return; /* SSLRequest, GSSENCRequest, CancelRequest: no ReadyForQuery */
        c->pg_unanswered++;
        qg_pg_effect e = whole ? pg_startup_effect(p, (size_t)cl->total) : any_effect;
        qg_pg_pending_add_effect(&c->pg_pending, &e);
        return;
    }
    switch (p[0]) {
    case 'Q':
    case 'F':
    case 'S':
        c->pg_unanswered++;
        break;
    case 'B': /* may execute a statement prepared before that sets the state */
        if (c->pg_prepared_sets_state && !(whole && pg_bind_of_parsed(c, p, (size_t)cl->total)))
            qg_pg_pending_add_effect(&c->pg_pending, &any_effect);
        return;
    default:
        break;
    }
    if ((p[0] != 'Q' && p[0] != 'P') || blocked)
        return;
    qg_wire_msg found;
    if (!text) {
        qg_wire_buf joined = {0}; /* a PostgreSQL text is never joined: it lies in p */
        if (!whole || cl->too_large ||
            !qg_wire_message_text(c, cl->kind, p, (size_t)cl->total, &joined, &found))
            found = (qg_wire_msg){0};
        text = &found;
    }
    account_text(c, p[0] == 'P', whole && text->sql ? text : NULL);
}

void qg_wire_pg_account_lead(qg_wire_conn *c, qg_wire_kind kind, size_t total, bool blocked,
                             const qg_wire_msg *text)
{
    /* the check may have given the connection up */
    if (c->passthrough || c->out_pos < c->pg_accounted_end)
        return;
    c->pg_accounted_end = c->out_pos + total;
    bool parse = kind == QG_WIRE_PG_PARSE;
    c->pg_unanswered += !parse;
    if (!blocked)
        account_text(c, parse, text->sql ? text : NULL);
}

/* What the walk of client messages without SQL does at each type byte. */
enum {
    PLAIN_STOP = 1,     /* Query, Parse: read by qg_wire_classify */
    PLAIN_BIND = 2,     /* held while a prepared statement may change the state */
    PLAIN_ANSWERED = 4, /* Sync, FunctionCall: answered by a ReadyForQuery */
};
static const uint8_t plain_kind[256] = {
    ['Q'] = PLAIN_STOP, ['P'] = PLAIN_STOP, ['B'] = PLAIN_BIND,
    ['S'] = PLAIN_ANSWERED, ['F'] = PLAIN_ANSWERED,
};

size_t qg_wire_pg_pass_plain(qg_wire_conn *c, qg_wire_framer *f, uint64_t pos, const uint8_t *p,
                             size_t n)
{
    unsigned stop = PLAIN_STOP | (c->pg_prepared_sets_state ? PLAIN_BIND : 0);
    /* a message's stream position is base + its address */
    uint64_t base = pos - (uintptr_t)p;
    const uint8_t *at = p;
    /* the bytes left less four (below 0 past a message that leaves fewer
     * than four): a whole header is at hand while it is above 0 */
    ptrdiff_t room = (ptrdiff_t)n - 4;
    while (room > 0) {
        unsigned kind = plain_kind[at[0]];
        uint64_t len = qg_wire_be32(at + 1);
        /* one unsigned compare for a length no message has (below 4: it
         * wraps) and for a message that runs past the write */
        bool odd = len - 4 >= (size_t)room;
        /* a message of no kind that lies whole in the write: two tests,
         * with nothing else kept in registers over the walk */
        if (__builtin_expect(kind != 0, 0) || __builtin_expect(odd, 0)) {
            if ((kind & stop) || (odd && len < 4))
                break;
            uint64_t here = base + (uintptr_t)at;
            if ((kind & PLAIN_ANSWERED) && here >= c->pg_accounted_end) {
                /* as qg_wire_pg_account counts it */
                c->pg_accounted_end = here + 1 + len;
                c->pg_unanswered++;
            }
            if (odd) {
                f->left = 1 + len - ((size_t)room + 4);
                at += (size_t)room + 4;
                break;
            }
        }
        at += 1 + (size_t)len;
        room -= 1 + (ptrdiff_t)len;
    }
    return (size_t)(at - p);
}

/* ----------------------------------------------------------- the query */

/* With CLIENT_QUERY_ATTRIBUTES agreed, a COM_QUERY's text follows its
 * attributes; false when they cannot be read. */
static bool attributes_skip(const qg_wire_conn *c, qg_wire_kind kind, const uint8_t *text,
                            size_t len, size_t *skip)
{
    *skip = 0;
    if (kind != QG_WIRE_MY_QUERY || !(c->my.caps & QG_MY_CLIENT_QUERY_ATTRIBUTES))
        return true;
    return qg_wire_my_attributes_len(text, len, skip);
}

bool qg_wire_message_text(const qg_wire_conn *c, qg_wire_kind kind, const uint8_t *p, size_t n,
                         qg_wire_buf *joined, qg_wire_msg *m)
{
    if (c->proto == QG_WIRE_PG)
        return qg_wire_pg_message_text(kind, p, n, m);
    memset(m, 0, sizeof *m);
    m->kind = kind;
    if (kind == QG_WIRE_MY_LOGIN) { /* the whole packet */
        m->sql = (const char *)p;
        m->len = n;
        return true;
    }
    uint32_t first = qg_wire_le24(p);
    size_t skip;
    if (first < QG_MY_PACKET_MAX) {
        if (!attributes_skip(c, kind, p + 5, first - 1, &skip))
            return false;
        m->sql = (const char *)p + 5 + skip;
        m->len = first - 1 - skip;
        return true;
    }
    for (size_t off = 0; off < n;) {
        uint32_t len = qg_wire_le24(p + off);
        size_t skip = off == 0 ? 5 : 4;
        if (len + 4 < skip || !qg_wire_buf_append(joined, p + off + skip, len + 4 - skip))
            return false;
        off += 4 + len;
    }
    if (!attributes_skip(c, kind, joined->data, joined->len, &skip))
        return false;
    m->sql = (const char *)joined->data + skip;
    m->len = joined->len - skip;
    return true;
}

