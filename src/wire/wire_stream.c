/* The client-to-server half of the wire front: holding, checking and
 * replacing queries (the rules are in wire_stream.h; message boundaries in
 * wire_frame.c). */
#include "wire_stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Where message_text found a message's text. */
typedef enum text_found { TEXT_UNREADABLE, TEXT_IN_PLACE, TEXT_ELSEWHERE } text_found;

/* A PostgreSQL text, and a MySQL query in one packet that carries no
 * attributes, read in line: *m with the text where it lies (a MySQL
 * query's is the packet's payload after the command byte), or
 * TEXT_UNREADABLE; TEXT_ELSEWHERE for a MySQL text that
 * qg_wire_message_text must find (attributes, continuation packets). */
static inline text_found message_text(const qg_wire_conn *c, qg_wire_kind kind,
                                      const uint8_t *p, size_t n, qg_wire_msg *m)
{
    if (c->proto == QG_WIRE_MYSQL) {
        if (kind == QG_WIRE_MY_PREPARE ||
            (kind == QG_WIRE_MY_QUERY && !(c->my.caps & QG_MY_CLIENT_QUERY_ATTRIBUTES))) {
            uint32_t first = qg_wire_my_header_len(p); /* its command byte follows */
            if (first - 1 < QG_MY_PACKET_MAX - 1) {
                /* field by field: GCC may zero a compound literal with a
                 * string store, a step a word */
                m->kind = kind;
                m->sql = (const char *)p + 5;
                m->len = first - 1;
                m->name = NULL;
                m->name_len = 0;
                m->too_large = m->unreadable = m->at_start = false;
                return TEXT_IN_PLACE;
            }
        }
        return TEXT_ELSEWHERE;
    }
    if (c->proto == QG_WIRE_PG)
        return qg_wire_pg_message_text(kind, p, n, m) ? TEXT_IN_PLACE : TEXT_UNREADABLE;
    return TEXT_ELSEWHERE;
}

/* decide for a text qg_wire_message_text finds, maybe joined from MySQL's
 * continuation packets into a copy freed after the check (*m then no
 * longer points into it). */
__attribute__((noinline)) static bool decide_elsewhere(qg_wire_conn *c, const qg_wire_io *io,
                                                       qg_wire_kind kind, const uint8_t *p,
                                                       size_t n, bool at_start, qg_wire_buf *out,
                                                       qg_wire_msg *m)
{
    qg_wire_buf joined = {0};
    if (!qg_wire_message_text(c, kind, p, n, &joined, m))
        *m = (qg_wire_msg){.kind = kind, .unreadable = true};
    else
        m->at_start = at_start;
    bool pass = io->check(io->ctx, c, m, out);
    if (joined.data) {
        qg_wire_buf_free(&joined);
        m->sql = NULL;
    }
    return pass;
}

/* Asks io->check about the whole message p[0, n); fills *out with what to
 * send instead when it is blocked.  True: send it as it is.  *m is the
 * message as the check saw it; for PostgreSQL its text lies in p, so
 * qg_wire_pg_account reads it from there again without a search.  Inlined
 * into its callers: the front door's one check a query makes no call of
 * its own (docs/PERFORMANCE.md, "Choices in the code"). */
__attribute__((always_inline)) static inline bool decide(qg_wire_conn *c, const qg_wire_io *io,
                                                         qg_wire_kind kind, const uint8_t *p,
                                                         size_t n, bool too_large, bool at_start,
                                                         qg_wire_buf *out, qg_wire_msg *m)
{
    if (kind == QG_WIRE_MY_LOGIN) {
        /* compression, which is not read: the login goes where unread bytes
         * may pass; else the server refuses it with an error naming
         * quoteguard, and nothing after it passes */
        qg_wire_set_passthrough(c, QG_WIRE_UNREAD_COMPRESSED);
        if (io->unread_may_pass(io->ctx, c))
            return true;
        c->my_login_refused = true;
        if (!qg_wire_login_refusal(p, n, out))
            qg_wire_buf_free(out);
        return false;
    }
    if (too_large) {
        *m = (qg_wire_msg){.kind = kind, .too_large = true};
        return io->check(io->ctx, c, m, out);
    }
    text_found found = message_text(c, kind, p, n, m);
    if (found == TEXT_ELSEWHERE)
        return decide_elsewhere(c, io, kind, p, n, at_start, out, m);
    if (found == TEXT_UNREADABLE)
        *m = (qg_wire_msg){.kind = kind, .unreadable = true};
    else
        m->at_start = at_start;
    return io->check(io->ctx, c, m, out);
}

/* The check gave the connection up (the front's own question to the server
 * left the stream broken): neither the query nor a replacement goes, and
 * io->unread_may_pass refuses what would follow. */
static bool given_up(const qg_wire_conn *c)
{
    return c->passthrough && c->unread == QG_WIRE_UNREAD_PROBE;
}

/* A PostgreSQL message classified at stream position pos, accounted
 * (qg_wire_pg_account); a MySQL stream has nothing to account. */
static inline void account(qg_wire_conn *c, uint64_t pos, const uint8_t *p, size_t avail,
                           const qg_wire_classified *cl, bool blocked, const qg_wire_msg *text)
{
    if (c->proto == QG_WIRE_PG)
        qg_wire_pg_account(c, pos, p, avail, cl, blocked, text);
}

/* A MySQL command classified at stream position pos: its answer is
 * followed (recorded once, whatever retries classify it again). */
static inline void record(qg_wire_conn *c, const qg_wire_classified *cl, uint64_t pos,
                          const uint8_t *p, size_t n, bool replaced)
{
    if (c->proto == QG_WIRE_MYSQL && cl->command)
        qg_wire_my_record(&c->my, pos, p, n, replaced);
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
        qg_wire_set_passthrough(c, QG_WIRE_UNREAD_STREAM);
    owe(c, replacement, covers);
}

/* An oversized query whose head is held: the bytes of its current message
 * (PG) or packet (MySQL) that are not held yet; sets `continues` (MySQL). */
static uint64_t oversized_rest(qg_wire_conn *c, const qg_wire_classified *cl)
{
    if (c->proto == QG_WIRE_PG)
        return cl->total - c->hold.len;
    size_t off = 0;
    uint32_t last = qg_wire_le24(c->hold.data);
    while (off + 4 + (size_t)last < c->hold.len) {
        off += 4 + last;
        last = qg_wire_le24(c->hold.data + off);
    }
    c->out.continues = last == QG_MY_PACKET_MAX;
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
    qg_wire_classified cl;
    for (;;) {
        qg_wire_classify(c, &c->out, c->hold.data, c->hold.len, &cl);
        if (cl.status != QG_CL_NEED || st.taken == n)
            break;
        size_t want = cl.need > c->hold.len ? cl.need - c->hold.len : 1;
        if (want > n - st.taken)
            want = n - st.taken;
        if (!qg_wire_buf_append(&c->hold, p + st.taken, want)) {
            /* no memory to hold it: it can no longer be checked */
            qg_wire_set_passthrough(c, QG_WIRE_UNREAD_STREAM);
            break;
        }
        st.taken += want;
    }
    if (c->passthrough) {
        /* what is held goes unread, or not at all */
        if (io->unread_may_pass(io->ctx, c))
            owe(c, &c->hold, st.taken);
        else
            qg_wire_buf_free(&c->hold);
        st.done = true;
        return st;
    }
    if (cl.status == QG_CL_NEED)
        return st; /* every byte held; the message is still incomplete */
    st.done = true;
    uint64_t hold_pos = c->out_pos - (c->hold.len - st.taken);
    if (cl.status == QG_CL_PASS) {
        account(c, hold_pos, c->hold.data, c->hold.len, &cl, false, NULL);
        record(c, &cl, hold_pos, c->hold.data, c->hold.len, false);
        c->out = cl.next;
        c->out.left -= c->hold.len; /* the header is complete, its body may not be */
        if (c->out.left == 0)
            qg_wire_message_ended(&c->out);
        owe(c, &c->hold, st.taken);
        return st;
    }
    /* A short write may have cut the header of a query decided in an
     * earlier call: its verdict stands (checked, and logged, once). */
    qg_wire_buf replacement = {0};
    qg_wire_msg m;
    const qg_wire_msg *text = NULL;
    bool pass;
    uint64_t end = hold_pos + cl.total;
    if (c->decided.data && c->decided_at == hold_pos) {
        replacement = c->decided;
        c->decided = (qg_wire_buf){0};
        pass = false;
    } else if (end <= c->approved_end) {
        pass = true;
    } else {
        /* the hold starts at a message boundary, and nothing is owed */
        pass = decide(c, io, cl.kind, c->hold.data, c->hold.len, cl.too_large, true,
                      &replacement, &m);
        text = &m;
        if (pass)
            c->approved_end = end;
    }
    if (!pass && given_up(c)) {
        qg_wire_buf_free(&replacement);
        qg_wire_buf_free(&c->hold);
        return st;
    }
    account(c, hold_pos, c->hold.data, c->hold.len, &cl, !pass, text);
    record(c, &cl, hold_pos, c->hold.data, c->hold.len, !pass);
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

/* Plans from p: the bytes that pass as they are (*run), and what follows;
 * *after is the client's framer once the whole run went. */
static run_end plan_run(qg_wire_conn *c, const qg_wire_io *io, const uint8_t *p, size_t n,
                        size_t *run, qg_wire_buf *replacement, qg_wire_classified *stop,
                        qg_wire_framer *after)
{
    qg_wire_framer f = c->out;
    size_t q = 0;
    while (q < n) {
        if (f.left > 0) {
            uint64_t step = f.left < n - q ? f.left : n - q;
            f.left -= step;
            q += (size_t)step;
            if (f.left == 0)
                qg_wire_message_ended(&f);
            continue;
        }
        if (c->proto == QG_WIRE_PG && !f.untyped && p[q] != 'P' && p[q] != 'Q') {
            size_t plain = qg_wire_pg_pass_plain(c, &f, c->out_pos + q, p + q, n - q);
            if (plain > 0) {
                q += plain;
                continue;
            }
        }
        qg_wire_classified cl;
        qg_wire_classify(c, &f, p + q, n - q, &cl);
        if (c->passthrough)
            break; /* this message on is not read: qg_wire_write decides */
        /* MySQL learns a query is too large only while holding it */
        if (cl.status == QG_CL_NEED || (cl.too_large && c->proto == QG_WIRE_MYSQL)) {
            *run = q;
            *after = f;
            return RUN_HOLD;
        }
        if (cl.status == QG_CL_PASS)
            record(c, &cl, c->out_pos + q, p + q, n - q, false);
        if (cl.status == QG_CL_SQL && cl.complete && c->decided.data &&
            c->decided_at == c->out_pos + q) {
            /* blocked before a short write stopped short of it */
            qg_wire_buf_free(replacement);
            *replacement = c->decided;
            c->decided = (qg_wire_buf){0};
            *run = q;
            *stop = cl;
            *after = f;
            return RUN_REPLACE;
        }
        if (cl.status == QG_CL_SQL && c->out_pos + q + cl.total > c->approved_end) {
            qg_wire_msg m;
            bool pass = decide(c, io, cl.kind, p + q, cl.complete ? (size_t)cl.total : 0,
                               cl.too_large, q == 0, replacement, &m);
            account(c, c->out_pos + q, p + q, n - q, &cl, !pass, &m);
            record(c, &cl, c->out_pos + q, p + q, n - q, !pass);
            if (!pass) {
                *run = q;
                *stop = cl;
                *after = f;
                return cl.complete ? RUN_REPLACE : RUN_DROP;
            }
            if (replacement->data)
                qg_wire_buf_free(replacement);
            c->approved_end = c->out_pos + q + cl.total;
        } else {
            account(c, c->out_pos + q, p + q, n - q, &cl, false, NULL);
        }
        f = cl.next;
    }
    *run = q;
    *after = f;
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
            uint32_t len = qg_wire_le24(c->drop_hdr);
            c->drop_hdr_len = 0;
            f->left = len;
            f->continues = len == QG_MY_PACKET_MAX;
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

/* qg_wire_packets_write: every case. */
__attribute__((noinline)) static ssize_t packets_write_all(qg_wire_conn *c, const qg_wire_io *io,
                                                           const uint8_t *p, size_t n)
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
            if (!io->unread_may_pass(io->ctx, c)) {
                errno = EACCES;
                return done ? (ssize_t)done : -1;
            }
            ssize_t r = io->send(io->ctx, p + done, n - done);
            if (r < 0)
                return done ? (ssize_t)done : -1;
            c->out_pos += (size_t)r;
            return (ssize_t)(done + (size_t)r);
        }
        size_t run = 0;
        qg_wire_buf replacement = {0};
        qg_wire_classified stop = {0};
        qg_wire_framer after;
        run_end end = plan_run(c, io, p + done, n - done, &run, &replacement, &stop, &after);
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
            /* the framer planned for the whole run, else read again as far as it went */
            if (!c->passthrough && (size_t)r == run)
                c->out = after;
            else if (!c->passthrough)
                qg_wire_advance(c, p + done, (size_t)r, n - done);
            c->out_pos += (size_t)r;
            done += (size_t)r;
            if (end == RUN_END && done == n)
                return (ssize_t)n;
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
                qg_wire_set_passthrough(c, QG_WIRE_UNREAD_STREAM); /* cannot hold it */
                continue;
            }
            c->out_pos += n - done;
            return (ssize_t)n;
        }
        if (end == RUN_DROP) { /* PG, too large to hold: dropped as it comes */
            c->out = stop.next;
            c->dropping = true;
            owe_replacement(c, &replacement, 0);
        } else if (end == RUN_REPLACE && given_up(c)) {
            qg_wire_buf_free(&replacement);
            errno = EACCES;
            return done ? (ssize_t)done : -1;
        } else if (end == RUN_REPLACE) {
            owe_replacement(c, &replacement, (size_t)stop.total);
        }
    }
}

/* A stream at a message or packet boundary with nothing held, owed,
 * dropped or decided ahead, still read: where a write may take the front
 * door.  For PostgreSQL past its startup message; for MySQL where a packet
 * at sequence 0 starts a command (after the handshake response, not in
 * LOAD DATA LOCAL's file, compressed frames followed from the login OK). */
static bool out_clear(const qg_wire_conn *c)
{
    /* the counts or'ed: one test for all of them, not a branch each */
    if ((c->out.left | c->hold.len | c->owed.len | c->covers) != 0 || c->dropping ||
        c->decided.data || c->passthrough)
        return false;
    if (c->proto == QG_WIRE_PG)
        return !c->out.untyped;
    return !c->out.continues && !c->out.infile && c->my.response_seen && (!c->zlib || c->z_on);
}

/* A whole query p[0, total) of `kind` that begins a write on a stream in
 * the clear (out_clear) and was not approved yet: checked, accounted
 * (PostgreSQL) and recorded (MySQL) as plan_run does.  True when it
 * passes; else what the write returns is in *r, the replacement owed as
 * for RUN_REPLACE.  In line in both front doors. */
__attribute__((always_inline)) static inline bool lead_query(qg_wire_conn *c, const qg_wire_io *io,
                                                             const uint8_t *p, size_t n,
                                                             qg_wire_kind kind, size_t total,
                                                             ssize_t *r)
{
    qg_wire_buf replacement = {0};
    qg_wire_msg m;
    bool pass = decide(c, io, kind, p, total, false, true, &replacement, &m);
    if (c->proto == QG_WIRE_PG) {
        qg_wire_pg_account_lead(c, kind, total, !pass, &m);
    } else {
        qg_wire_my_record(&c->my, c->out_pos, p, n, !pass); /* a command */
    }
    if (pass) {
        if (replacement.data)
            qg_wire_buf_free(&replacement);
        c->approved_end = c->out_pos + total;
        return true;
    }
    if (given_up(c)) {
        qg_wire_buf_free(&replacement);
        errno = EACCES;
        *r = -1;
        return false;
    }
    owe_replacement(c, &replacement, total);
    *r = packets_write_all(c, io, p, n);
    return false;
}

/* The bytes of p[0, n) that begin a PostgreSQL write with one whole Query
 * or Parse on a stream in the clear, not approved yet, and its kind; 0 for
 * none. */
static size_t pg_lead_query_len(const qg_wire_conn *c, const uint8_t *p, size_t n,
                                qg_wire_kind *kind)
{
    if (p[0] != 'P' && p[0] != 'Q')
        return 0;
    uint32_t len = qg_wire_be32(p + 1);
    if (len < 4 || len > QG_WIRE_HOLD_MAX)
        return 0;
    *kind = p[0] == 'Q' ? QG_WIRE_PG_QUERY : QG_WIRE_PG_PARSE;
    uint64_t total = 1 + (uint64_t)len;
    return total <= n && c->out_pos + total > c->approved_end ? (size_t)total : 0;
}

/* qg_wire_packets_write of a MySQL stream in the clear: a write that is
 * one whole COM_QUERY or COM_STMT_PREPARE in one packet, not approved yet,
 * is checked, recorded and sent at once; anything else is planned. */
static inline ssize_t my_front_door(qg_wire_conn *c, const qg_wire_io *io, const uint8_t *p,
                                    size_t n)
{
    uint32_t len = qg_wire_my_header_len(p); /* n >= 5 */
    /* a command at sequence 0, one packet (not continued), the whole write */
    if (p[3] != 0 || (p[4] != QG_MY_COM_QUERY && p[4] != QG_MY_COM_STMT_PREPARE) ||
        len >= QG_MY_PACKET_MAX || 4 + (size_t)len != n || c->out_pos + n <= c->approved_end)
        return packets_write_all(c, io, p, n);
    qg_wire_kind kind = p[4] == QG_MY_COM_QUERY ? QG_WIRE_MY_QUERY : QG_WIRE_MY_PREPARE;
    ssize_t r;
    if (!lead_query(c, io, p, n, kind, n, &r))
        return r;
    r = io->send(io->ctx, p, n);
    if (r < 0)
        return -1;
    if ((size_t)r == n) /* the packet counted as qg_wire_classify counts it */
        c->out.packets += c->out.packets < 255;
    else
        qg_wire_advance(c, p, (size_t)r, n);
    c->out_pos += (size_t)r;
    return r;
}

ssize_t qg_wire_packets_write(qg_wire_conn *c, const qg_wire_io *io, const uint8_t *p, size_t n)
{
    /* A write on a stream in the clear of one whole query, or for
     * PostgreSQL of messages without SQL (Bind, Execute, Sync …) maybe
     * after one whole Query or Parse: one walk of their headers, one check
     * and one send, without the planner's steps (docs/PERFORMANCE.md,
     * "Choices in the code").  Anything else is planned. */
    if (n < 5 || !out_clear(c))
        return packets_write_all(c, io, p, n);
    if (c->proto == QG_WIRE_MYSQL)
        return my_front_door(c, io, p, n);
    qg_wire_kind kind = QG_WIRE_OTHER;
    size_t q = pg_lead_query_len(c, p, n, &kind);
    if (q == 0 && (p[0] == 'P' || p[0] == 'Q'))
        return packets_write_all(c, io, p, n);
    ssize_t r;
    if (q > 0 && !lead_query(c, io, p, n, kind, q, &r))
        return r;
    qg_wire_framer f = c->out;
    if (q + qg_wire_pg_pass_plain(c, &f, c->out_pos + q, p + q, n - q) != n)
        return packets_write_all(c, io, p, n);
    r = io->send(io->ctx, p, n);
    if (r < 0)
        return -1;
    if ((size_t)r == n)
        c->out = f;
    else
        qg_wire_advance(c, p, (size_t)r, n);
    c->out_pos += (size_t)r;
    return r;
}
