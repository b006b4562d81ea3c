/* The client-to-server half of the wire front: message boundaries, holding,
 * checking and replacing (the rules are in wire_stream.h). */
#include "wire_stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* PostgreSQL request codes of the untyped first messages. */
#define PG_PROTOCOL_3 0x00030000u
#define PG_SSL_REQUEST 80877103u
#define PG_GSSENC_REQUEST 80877104u
#define PG_CANCEL_REQUEST 80877102u
#define PG_STARTUP_MAX 10000u

#define MY_PACKET_MAX 0xffffffu
#define MY_COM_QUERY 0x03
#define MY_COM_STMT_PREPARE 0x16
#define MY_CLIENT_COMPRESS 0x20u
#define MY_CLIENT_PROTOCOL_41 0x200u
#define MY_CLIENT_SSL 0x800u
#define MY_CLIENT_QUERY_ATTRIBUTES (1u << 27)

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t le24(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
}

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
    free(b->data);
    *b = (qg_wire_buf){0};
}

void qg_wire_conn_init(qg_wire_conn *c, qg_wire_proto proto)
{
    memset(c, 0, sizeof *c);
    c->proto = proto;
    c->out.untyped = proto == QG_WIRE_PG;
}

void qg_wire_conn_release(qg_wire_conn *c)
{
    qg_wire_buf_free(&c->hold);
    qg_wire_buf_free(&c->owed);
    qg_wire_buf_free(&c->decided);
    qg_wire_buf_free(&c->in_body);
}

bool qg_wire_looks_like_pg(const uint8_t *p, size_t n)
{
    if (n < 8)
        return false;
    uint32_t len = be32(p), code = be32(p + 4);
    if (code == PG_SSL_REQUEST || code == PG_GSSENC_REQUEST)
        return len == 8;
    if (code == PG_CANCEL_REQUEST)
        return len == 16;
    return code >> 16 == 3 && len >= 8 && len <= PG_STARTUP_MAX;
}

bool qg_wire_looks_like_mysql(const uint8_t *p, size_t n)
{
    /* length (3), sequence 0, protocol 10, then a printable version string */
    if (n < 6 || p[3] != 0 || p[4] != 10)
        return false;
    uint32_t len = le24(p);
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

/* ------------------------------------------------------------ framing */

typedef enum cl_status {
    CL_NEED, /* more bytes are needed to know: `need` in all */
    CL_PASS, /* a packet or message without SQL: `total` bytes */
    CL_SQL,  /* a query message: whole when `complete` (then `total` bytes) */
} cl_status;

typedef struct classified {
    cl_status status;
    qg_wire_kind kind;
    uint64_t total;
    size_t need;
    bool complete;
    bool too_large; /* cannot be held: PG length known to exceed the bound */
    qg_wire_framer next; /* the framer at the start of this message, left = total */
} classified;

static void set_passthrough(qg_wire_conn *c)
{
    c->passthrough = true;
}

/* The MySQL handshake response (or SSL request): the client's collation and
 * what it negotiated.  Idempotent: a retried write reads it again. */
static void observe_handshake_response(qg_wire_conn *c, const uint8_t *payload, size_t len)
{
    if (len < 9) { /* not a protocol-41 response: nothing to follow */
        set_passthrough(c);
        return;
    }
    uint32_t caps = (uint32_t)payload[0] | (uint32_t)payload[1] << 8 |
                    (uint32_t)payload[2] << 16 | (uint32_t)payload[3] << 24;
    c->my_client_caps = caps;
    const char *charset = qg_wire_mysql_charset_of_collation(payload[8]);
    if (charset) {
        strncpy(c->session.encoding, charset, sizeof c->session.encoding - 1);
        c->session.encoding[sizeof c->session.encoding - 1] = '\0';
    }
    if (!(caps & MY_CLIENT_PROTOCOL_41) || (caps & (MY_CLIENT_SSL | MY_CLIENT_COMPRESS)) ||
        (caps & MY_CLIENT_QUERY_ATTRIBUTES))
        set_passthrough(c);
}

/* Walks the packets of a MySQL command from p: complete (total set) or the
 * bytes needed to know more. */
static void my_command_extent(const uint8_t *p, size_t n, classified *cl)
{
    uint64_t off = 0;
    for (;;) {
        if (off + 4 > n) {
            cl->need = (size_t)off + 4;
            return;
        }
        uint32_t len = le24(p + off);
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
        if (len < MY_PACKET_MAX) {
            cl->complete = true;
            cl->total = off;
            return;
        }
    }
}

static void classify_mysql(qg_wire_conn *c, const qg_wire_framer *f, const uint8_t *p,
                           size_t n, classified *cl)
{
    if (n < 4) {
        cl->need = 4;
        return;
    }
    uint32_t len = le24(p);
    uint8_t seq = p[3];
    cl->next = *f;
    cl->next.packets = f->packets < 255 ? f->packets + 1 : 255;
    if (!f->continues && c->my_command_phase && seq == 0 && len > 0) {
        if (n < 5) {
            cl->need = 5;
            return;
        }
        c->my_awaiting_reply = true;
        if (p[4] == MY_COM_QUERY || p[4] == MY_COM_STMT_PREPARE) {
            cl->status = CL_SQL;
            cl->kind = p[4] == MY_COM_QUERY ? QG_WIRE_MY_QUERY : QG_WIRE_MY_PREPARE;
            my_command_extent(p, n, cl);
            cl->next.continues = false;
            cl->next.left = cl->total;
            if (!cl->complete && !cl->too_large)
                cl->status = CL_NEED;
            return;
        }
    } else if (!c->my_command_phase && seq == 1 && f->packets == 0) {
        size_t want = len < 32 ? len : 32;
        if (n < 4 + want) {
            cl->need = 4 + want;
            return;
        }
        observe_handshake_response(c, p + 4, want);
    }
    cl->status = CL_PASS;
    cl->total = 4 + (uint64_t)len;
    cl->next.continues = len == MY_PACKET_MAX;
    cl->next.left = cl->total;
}

static void classify_pg(qg_wire_conn *c, const qg_wire_framer *f, const uint8_t *p, size_t n,
                        classified *cl)
{
    cl->next = *f;
    if (f->untyped) {
        if (n < 8) {
            cl->need = 8;
            return;
        }
        uint32_t len = be32(p), code = be32(p + 4);
        if (len < 8 || len > PG_STARTUP_MAX) {
            set_passthrough(c);
            len = 8;
        }
        c->pg_tls_asked = code == PG_SSL_REQUEST || code == PG_GSSENC_REQUEST;
        cl->status = CL_PASS;
        cl->total = len;
        cl->next.startup = code >> 16 == 3;
        cl->next.left = len;
        return;
    }
    if (n < 5) {
        cl->need = 5;
        return;
    }
    uint32_t len = be32(p + 1);
    if (len < 4) {
        set_passthrough(c);
        len = 4;
    }
    cl->total = 1 + (uint64_t)len;
    cl->next.left = cl->total;
    if ((p[0] != 'Q' && p[0] != 'P') || c->passthrough) {
        cl->status = CL_PASS;
        return;
    }
    cl->status = CL_SQL;
    cl->kind = p[0] == 'Q' ? QG_WIRE_PG_QUERY : QG_WIRE_PG_PARSE;
    cl->too_large = len > QG_WIRE_HOLD_MAX;
    cl->complete = !cl->too_large && cl->total <= n;
    if (!cl->complete && !cl->too_large) {
        cl->status = CL_NEED;
        cl->need = (size_t)cl->total;
    }
}

/* What starts at p (a message boundary of framer f). */
static void classify(qg_wire_conn *c, const qg_wire_framer *f, const uint8_t *p, size_t n,
                     classified *cl)
{
    memset(cl, 0, sizeof *cl);
    if (c->proto == QG_WIRE_PG)
        classify_pg(c, f, p, n, cl);
    else
        classify_mysql(c, f, p, n, cl);
}

/* The framer after the last byte of its message or packet. */
static void message_ended(qg_wire_framer *f)
{
    if (f->untyped && f->startup)
        f->untyped = false;
    f->startup = false;
}

/* Moves the framer over n bytes of p that were sent (all of them passed:
 * they lie inside a run planned by write_run, whose headers are complete
 * within `avail`). */
static void advance(qg_wire_conn *c, const uint8_t *p, size_t n, size_t avail)
{
    qg_wire_framer *f = &c->out;
    size_t i = 0;
    while (i < n) {
        if (f->left == 0) {
            classified cl;
            classify(c, f, p + i, avail - i, &cl);
            *f = cl.next;
            if (f->left == 0) /* cannot happen for planned bytes; never loop */
                f->left = n - i;
        }
        uint64_t step = f->left < n - i ? f->left : n - i;
        f->left -= step;
        i += (size_t)step;
        if (f->left == 0)
            message_ended(f);
    }
}

/* ----------------------------------------------------------- the query */

/* The text of a whole SQL message (headers of continuation packets removed
 * into `joined` when there are several). */
static bool message_text(const qg_wire_conn *c, qg_wire_kind kind, const uint8_t *p, size_t n,
                         qg_wire_buf *joined, qg_wire_msg *m)
{
    memset(m, 0, sizeof *m);
    m->kind = kind;
    if (c->proto == QG_WIRE_PG) {
        const uint8_t *body = p + 5, *end = p + n;
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
    uint32_t first = le24(p);
    if (first < MY_PACKET_MAX) {
        m->sql = (const char *)p + 5;
        m->len = first - 1;
        return true;
    }
    for (size_t off = 0; off < n;) {
        uint32_t len = le24(p + off);
        size_t skip = off == 0 ? 5 : 4;
        if (len + 4 < skip || !qg_wire_buf_append(joined, p + off + skip, len + 4 - skip))
            return false;
        off += 4 + len;
    }
    m->sql = (const char *)joined->data;
    m->len = joined->len;
    return true;
}

/* Asks io->check about the whole message p[0, n); fills *out with what to
 * send instead when it is blocked.  True: send it as it is. */
static bool decide(qg_wire_conn *c, const qg_wire_io *io, qg_wire_kind kind, const uint8_t *p,
                   size_t n, bool too_large, qg_wire_buf *out)
{
    qg_wire_buf joined = {0};
    qg_wire_msg m;
    bool pass;
    if (too_large) {
        memset(&m, 0, sizeof m);
        m.kind = kind;
        m.too_large = true;
        pass = io->check(io->ctx, c, &m, out);
    } else if (!message_text(c, kind, p, n, &joined, &m)) {
        m = (qg_wire_msg){.kind = kind, .too_large = true};
        pass = io->check(io->ctx, c, &m, out);
    } else {
        pass = io->check(io->ctx, c, &m, out);
    }
    qg_wire_buf_free(&joined);
    return pass;
}

/* ------------------------------------------------------------ writing */

/* Pushes what is owed to the kernel; 0 when all of it went, else -1. */
static int push_owed(qg_wire_conn *c, const qg_wire_io *io)
{
    while (c->owed_done < c->owed.len) {
        ssize_t r = io->send(io->ctx, c->owed.data + c->owed_done, c->owed.len - c->owed_done);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        c->owed_done += (size_t)r;
    }
    qg_wire_buf_free(&c->owed);
    c->owed_done = 0;
    return 0;
}

/* Makes `b` (a whole message, or its replacement) owed; the next `covers`
 * client bytes count as written once it is pushed. */
static void owe(qg_wire_conn *c, qg_wire_buf *b, size_t covers)
{
    qg_wire_buf_free(&c->owed);
    c->owed = *b;
    *b = (qg_wire_buf){0};
    c->owed_done = 0;
    c->covers = covers;
}

/* Without memory for a replacement, a blocked query is dropped and the
 * connection can no longer be followed: everything after passes. */
static void owe_replacement(qg_wire_conn *c, qg_wire_buf *replacement, size_t covers)
{
    if (!replacement->data)
        set_passthrough(c);
    owe(c, replacement, covers);
}

/* An oversized query whose head is held: the bytes of its current message
 * (PG) or packet (MySQL) that are not held yet; sets `continues` (MySQL). */
static uint64_t oversized_rest(qg_wire_conn *c, const classified *cl)
{
    if (c->proto == QG_WIRE_PG)
        return cl->total - c->hold.len;
    size_t off = 0;
    uint32_t last = le24(c->hold.data);
    while (off + 4 + (size_t)last < c->hold.len) {
        off += 4 + last;
        last = le24(c->hold.data + off);
    }
    c->out.continues = last == MY_PACKET_MAX;
    return off + 4 + last - c->hold.len;
}

/* Bytes appended to the hold in this call (not yet reported written). */
typedef struct hold_step {
    size_t taken;
    bool done; /* the hold became owed (or the input ran out) */
} hold_step;

/* Feeds p into the held message until it is whole or p runs out. */
static hold_step continue_hold(qg_wire_conn *c, const qg_wire_io *io, const uint8_t *p,
                               size_t n)
{
    hold_step st = {0, false};
    classified cl;
    for (;;) {
        classify(c, &c->out, c->hold.data, c->hold.len, &cl);
        if (cl.status != CL_NEED || st.taken == n)
            break;
        size_t want = cl.need > c->hold.len ? cl.need - c->hold.len : 1;
        if (want > n - st.taken)
            want = n - st.taken;
        if (!qg_wire_buf_append(&c->hold, p + st.taken, want)) {
            /* no memory to hold it: it can no longer be checked */
            set_passthrough(c);
            break;
        }
        st.taken += want;
    }
    if (c->passthrough && cl.status == CL_NEED) {
        owe(c, &c->hold, st.taken);
        st.done = true;
        return st;
    }
    if (cl.status == CL_NEED)
        return st; /* every byte held; the message is still incomplete */
    st.done = true;
    if (cl.status == CL_PASS) {
        c->out = cl.next;
        c->out.left -= c->hold.len; /* the header is complete, its body may not be */
        if (c->out.left == 0)
            message_ended(&c->out);
        owe(c, &c->hold, st.taken);
        return st;
    }
    qg_wire_buf replacement = {0};
    bool pass = decide(c, io, cl.kind, c->hold.data, c->hold.len, cl.too_large, &replacement);
    if (cl.too_large) {
        /* past the bound: what is held goes (or is dropped) now, the rest of
         * the query follows as it comes */
        c->out = cl.next;
        c->out.left = oversized_rest(c, &cl);
        c->dropping = !pass;
    } else {
        c->out.left = 0;
        c->out.continues = false;
    }
    if (pass) {
        qg_wire_buf_free(&replacement);
        owe(c, &c->hold, st.taken);
    } else {
        qg_wire_buf_free(&c->hold);
        owe_replacement(c, &replacement, st.taken);
    }
    return st;
}

/* How a run of passing bytes ends. */
typedef enum run_end { RUN_END, RUN_HOLD, RUN_REPLACE, RUN_DROP } run_end;

/* Plans from p: the bytes that pass as they are (*run), and what follows. */
static run_end plan_run(qg_wire_conn *c, const qg_wire_io *io, const uint8_t *p, size_t n,
                        size_t *run, qg_wire_buf *replacement, classified *stop)
{
    qg_wire_framer f = c->out;
    size_t q = 0;
    while (q < n) {
        if (f.left > 0) {
            uint64_t step = f.left < n - q ? f.left : n - q;
            f.left -= step;
            q += (size_t)step;
            if (f.left == 0)
                message_ended(&f);
            continue;
        }
        classified cl;
        classify(c, &f, p + q, n - q, &cl);
        if (c->passthrough) {
            q = n;
            break;
        }
        /* MySQL learns a query is too large only while holding it */
        if (cl.status == CL_NEED || (cl.too_large && c->proto == QG_WIRE_MYSQL)) {
            *run = q;
            return RUN_HOLD;
        }
        if (cl.status == CL_SQL && cl.complete && c->decided.data &&
            c->decided_at == c->out_pos + q) {
            /* blocked before a short write stopped short of it */
            qg_wire_buf_free(replacement);
            *replacement = c->decided;
            c->decided = (qg_wire_buf){0};
            *run = q;
            *stop = cl;
            return RUN_REPLACE;
        }
        if (cl.status == CL_SQL) {
            uint64_t end = c->out_pos + q + cl.total;
            if (end > c->approved_end) {
                qg_wire_buf_free(replacement);
                bool pass = decide(c, io, cl.kind, p + q, cl.complete ? (size_t)cl.total : 0,
                                   cl.too_large, replacement);
                if (!pass) {
                    *run = q;
                    *stop = cl;
                    return cl.complete ? RUN_REPLACE : RUN_DROP;
                }
                qg_wire_buf_free(replacement);
                c->approved_end = end;
            }
        }
        f = cl.next;
    }
    *run = q;
    return RUN_END;
}

/* Drops the bytes of a blocked oversized query that is not held: the rest
 * of its message (PG) or packets (MySQL continuation packets, whose headers
 * may arrive a byte at a time). */
static size_t drop_bytes(qg_wire_conn *c, const uint8_t *p, size_t n)
{
    qg_wire_framer *f = &c->out;
    size_t i = 0;
    while (i < n) {
        if (f->left == 0) {
            if (!f->continues) {
                c->dropping = false;
                break;
            }
            while (c->drop_hdr_len < 4 && i < n)
                c->drop_hdr[c->drop_hdr_len++] = p[i++];
            if (c->drop_hdr_len < 4)
                break;
            uint32_t len = le24(c->drop_hdr);
            c->drop_hdr_len = 0;
            f->left = len;
            f->continues = len == MY_PACKET_MAX;
            continue;
        }
        uint64_t step = f->left < n - i ? f->left : n - i;
        f->left -= step;
        i += (size_t)step;
    }
    if (f->left == 0 && !f->continues && c->drop_hdr_len == 0)
        c->dropping = false;
    return i;
}

ssize_t qg_wire_write(qg_wire_conn *c, const qg_wire_io *io, const uint8_t *p, size_t n)
{
    size_t done = 0;
    for (;;) {
        if (c->owed.len > 0 && push_owed(c, io) < 0)
            return done ? (ssize_t)done : -1;
        if (c->covers > 0 && done < n) {
            /* a retry may be shorter than the message it completes */
            size_t take = c->covers < n - done ? c->covers : n - done;
            c->covers -= take;
            done += take;
            c->out_pos += take;
            continue;
        }
        if (done == n)
            return (ssize_t)done;
        if (c->dropping) {
            size_t dropped = drop_bytes(c, p + done, n - done);
            done += dropped;
            c->out_pos += dropped;
            continue;
        }
        if (c->hold.len > 0) {
            hold_step st = continue_hold(c, io, p + done, n - done);
            if (!st.done) { /* all of it held */
                c->out_pos += st.taken;
                done += st.taken;
            }
            continue;
        }
        if (c->passthrough) {
            ssize_t r = io->send(io->ctx, p + done, n - done);
            if (r < 0)
                return done ? (ssize_t)done : -1;
            c->out_pos += (size_t)r;
            return (ssize_t)(done + (size_t)r);
        }
        size_t run = 0;
        qg_wire_buf replacement = {0};
        classified stop = {0};
        run_end end = plan_run(c, io, p + done, n - done, &run, &replacement, &stop);
        if (run > 0) {
            ssize_t r = io->send(io->ctx, p + done, run);
            if (r < 0) {
                if (end == RUN_REPLACE) { /* keep the verdict for the retry */
                    qg_wire_buf_free(&c->decided);
                    c->decided = replacement;
                    c->decided_at = c->out_pos + run;
                } else {
                    qg_wire_buf_free(&replacement);
                }
                return done ? (ssize_t)done : -1;
            }
            if (!c->passthrough)
                advance(c, p + done, (size_t)r, n - done);
            c->out_pos += (size_t)r;
            done += (size_t)r;
            if ((size_t)r < run) {
                if (end == RUN_REPLACE) { /* keep the verdict for the retry */
                    qg_wire_buf_free(&c->decided);
                    c->decided = replacement;
                    c->decided_at = c->out_pos + (run - (size_t)r);
                } else {
                    qg_wire_buf_free(&replacement);
                }
                return (ssize_t)done;
            }
        }
        if (end == RUN_HOLD) {
            if (!qg_wire_buf_append(&c->hold, p + done, n - done)) {
                set_passthrough(c); /* cannot hold: from here on, unchecked */
                continue;
            }
            c->out_pos += n - done;
            return (ssize_t)n;
        }
        if (end == RUN_DROP) { /* PG, too large to hold: dropped as it comes */
            c->out = stop.next;
            c->dropping = true;
            owe_replacement(c, &replacement, 0);
        } else if (end == RUN_REPLACE) {
            owe_replacement(c, &replacement, (size_t)stop.total);
        }
    }
}
