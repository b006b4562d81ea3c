/* MySQL's compressed protocol, followed in both directions (the rules are
 * in wire_compress.h); and the wire stream's entry points, which go through
 * the frames once a connection is compressed. */
#include "wire_compress.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The inflated bytes the server's side is observed in at a time. */
#define IN_CHUNK 16384u
/* Buffers a group grew past this are given back once it went. */
#define KEEP_CAP 65536u

static qg_wire_z *z_state(qg_wire_conn *c)
{
    if (!c->z)
        c->z = calloc(1, sizeof *c->z);
    if (!c->z)
        qg_wire_set_passthrough(c, QG_WIRE_UNREAD_STREAM);
    return c->z;
}

/* Starts a zlib stream in *f (made once, reset after). */
static bool inflater_start(const qg_wire_zlib *lib, qg_wire_inflater *f)
{
    if (f->ready)
        return lib->inflate_reset(&f->zs) == Z_OK;
    memset(&f->zs, 0, sizeof f->zs);
    f->ready = lib->inflate_init(&f->zs, ZLIB_VERSION, (int)sizeof f->zs) == Z_OK;
    return f->ready;
}

static void inflater_end(const qg_wire_zlib *lib, qg_wire_inflater *f)
{
    if (f->ready)
        lib->inflate_end(&f->zs);
    f->ready = false;
}

static void put_le24(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
}

/* b holds room for n bytes from its start (its length set to n). */
static bool sized(qg_wire_buf *b, size_t n)
{
    if (n > b->cap) {
        uint8_t *grown = realloc(b->data, n);
        if (!grown)
            return false;
        b->data = grown;
        b->cap = n;
    }
    b->len = n;
    return true;
}

/* A buffer a large group grew: given back, else kept for the next. */
static void drained(qg_wire_buf *b)
{
    if (b->cap > KEEP_CAP)
        qg_wire_buf_free(b);
    b->len = 0;
}

/* --------------------------------------------------- client to server */

/* The packet stream inside the frames goes to z->sent; a query replaced
 * there marks the group changed. */
typedef struct inner_ctx {
    const qg_wire_io *outer;
    qg_wire_conn *c;
} inner_ctx;

static ssize_t inner_send(void *ctx, const uint8_t *p, size_t n)
{
    inner_ctx *in = ctx;
    if (!qg_wire_buf_append(&in->c->z->sent, p, n)) {
        errno = ENOMEM;
        return -1;
    }
    return (ssize_t)n;
}

static bool inner_check(void *ctx, qg_wire_conn *c, const qg_wire_msg *m, qg_wire_buf *replacement)
{
    inner_ctx *in = ctx;
    bool pass = in->outer->check(in->outer->ctx, c, m, replacement);
    if (!pass)
        c->z->changed = true;
    /* a query too long to hold would be dropped as it comes, frames after
     * its replacement: the server would number its answer short of them */
    if (!pass && m->too_large)
        qg_wire_set_passthrough(c, QG_WIRE_UNREAD_STREAM);
    return pass;
}

static bool inner_unread_may_pass(void *ctx, qg_wire_conn *c)
{
    inner_ctx *in = ctx;
    return in->outer->unread_may_pass(in->outer->ctx, c);
}

static void group_reset(qg_wire_z *z)
{
    drained(&z->raw);
    drained(&z->frames);
    drained(&z->plain);
    drained(&z->sent);
    z->frame_at = 0;
    z->plain_total = 0;
    z->changed = false;
}

typedef enum group_state { GROUP_OPEN, GROUP_DONE, GROUP_UNREAD } group_state;

/* A whole frame of the group: its number, and where the packet stream's
 * bytes that went on while it was read end in z->sent. */
typedef struct frame_record {
    uint32_t sent_end;
    uint8_t seq;
} frame_record;

/* The whole frame at z->frame_at: inflated, its packets read. */
static group_state take_frame(qg_wire_conn *c, const qg_wire_io *io)
{
    qg_wire_z *z = c->z;
    const uint8_t *h = z->raw.data + z->frame_at;
    uint32_t payload = qg_wire_le24(h), inflated = qg_wire_le24(h + 4);
    const uint8_t *plain = h + QG_WIRE_Z_HEADER;
    size_t plain_len = payload;
    if (inflated) {
        if (!sized(&z->plain, inflated)) {
            qg_wire_set_passthrough(c, QG_WIRE_UNREAD_STREAM);
            return GROUP_UNREAD;
        }
        z_stream *zs = &z->out_z.zs;
        bool whole = inflater_start(c->zlib, &z->out_z);
        if (whole) {
            zs->next_in = plain;
            zs->avail_in = payload;
            zs->next_out = z->plain.data;
            zs->avail_out = inflated;
            /* exactly `inflated` bytes, the stream's end, no byte after it */
            whole = c->zlib->inflate(zs, Z_FINISH) == Z_STREAM_END && zs->avail_in == 0 &&
                    zs->avail_out == 0;
        }
        if (!whole) {
            qg_wire_set_passthrough(c, QG_WIRE_UNREAD_INFLATE);
            return GROUP_UNREAD;
        }
        plain = z->plain.data;
        plain_len = inflated;
    }
    uint8_t seq = h[3];
    z->frame_at = z->raw.len;
    z->plain_total += plain_len;
    inner_ctx in = {io, c};
    qg_wire_io inner = {inner_send, inner_check, inner_unread_may_pass, &in};
    ssize_t r = plain_len ? qg_wire_packets_write(c, &inner, plain, plain_len) : 0;
    frame_record record = {(uint32_t)z->sent.len, seq};
    if (z->sent.len > UINT32_MAX || !qg_wire_buf_append(&z->frames, &record, sizeof record))
        qg_wire_set_passthrough(c, QG_WIRE_UNREAD_STREAM);
    if (r != (ssize_t)plain_len || c->passthrough) {
        /* what the packet stream still owes its sink is dropped with it */
        qg_wire_buf_free(&c->owed);
        c->owed_done = c->covers = 0;
        qg_wire_set_passthrough(c, QG_WIRE_UNREAD_STREAM);
        return GROUP_UNREAD;
    }
    return c->hold.len > 0 ? GROUP_OPEN : GROUP_DONE;
}

/* The frames that go for the whole group: as written when nothing in them
 * changed.  Else stored frames with the same numbers, each carrying what
 * went on while it was read: a packet ends in the frame it ended in, so the
 * server reads as many frames for each command as the client wrote.  A
 * frame that would be empty (a query held across it, sent with the frame
 * that completed it) takes the next byte instead, so that the first frame
 * of a command is never empty.  False when the bytes do not fit. */
static bool group_frames(qg_wire_z *z, qg_wire_buf *out)
{
    if (!z->changed && z->sent.len == z->plain_total) {
        *out = z->raw;
        z->raw = (qg_wire_buf){0};
        return true;
    }
    size_t count = z->frames.len / sizeof(frame_record), from = 0;
    for (size_t k = 0; k < count; k++) {
        frame_record record;
        memcpy(&record, z->frames.data + k * sizeof record, sizeof record);
        size_t to = record.sent_end > from ? record.sent_end : from + 1;
        if (k == count - 1 && to < z->sent.len)
            to = z->sent.len;
        if (to > z->sent.len || to - from > 0xffffffu)
            return false;
        uint8_t header[QG_WIRE_Z_HEADER] = {0, 0, 0, record.seq, 0, 0, 0};
        put_le24(header, (uint32_t)(to - from));
        if (!qg_wire_buf_append(out, header, sizeof header) ||
            !qg_wire_buf_append(out, z->sent.data + from, to - from))
            return false;
        from = to;
    }
    return true;
}

/* The group stops being read: its frames go as written where unread bytes
 * may pass, the next `covers` client bytes counting once they are in;
 * else they never go. */
static void group_unread(qg_wire_conn *c, const qg_wire_io *io, size_t covers)
{
    qg_wire_z *z = c->z;
    if (io->unread_may_pass(io->ctx, c)) {
        qg_wire_buf_free(&z->owed);
        z->owed = z->raw;
        z->raw = (qg_wire_buf){0};
        z->owed_done = 0;
        z->covers = covers;
    }
    group_reset(z);
}

/* Not inlined, as z_read: a stream without compression then passes
 * through qg_wire_write and qg_wire_read without saving registers. */
__attribute__((noinline)) static ssize_t z_write(qg_wire_conn *c, const qg_wire_io *io,
                                                 const uint8_t *p, size_t n)
{
    qg_wire_z *z = z_state(c);
    if (!z)
        return qg_wire_packets_write(c, io, p, n); /* no longer read: passes or is refused */
    size_t done = 0, pending = 0; /* pending: bytes of p after `done` taken into z->raw */
    for (;;) {
        while (z->owed_done < z->owed.len) {
            ssize_t r = io->send(io->ctx, z->owed.data + z->owed_done, z->owed.len - z->owed_done);
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0)
                return done ? (ssize_t)done : -1;
            z->owed_done += (size_t)r;
        }
        if (z->owed.data) {
            qg_wire_buf_free(&z->owed);
            z->owed_done = 0;
        }
        if (z->covers > 0 && done < n) {
            size_t take = z->covers < n - done ? z->covers : n - done;
            z->covers -= take;
            done += take;
            continue;
        }
        if (c->passthrough) {
            if (z->raw.len > 0) {
                group_unread(c, io, pending);
                pending = 0;
                continue;
            }
            if (!io->unread_may_pass(io->ctx, c)) {
                errno = EACCES;
                return done ? (ssize_t)done : -1;
            }
            ssize_t r = io->send(io->ctx, p + done, n - done);
            if (r < 0)
                return done ? (ssize_t)done : -1;
            return (ssize_t)(done + (size_t)r);
        }
        if (done + pending == n)
            return (ssize_t)n; /* the rest is held in an open group */
        /* the current frame's header, then its payload */
        size_t have = z->raw.len - z->frame_at;
        size_t frame = have < QG_WIRE_Z_HEADER
                           ? QG_WIRE_Z_HEADER
                           : QG_WIRE_Z_HEADER + (size_t)qg_wire_le24(z->raw.data + z->frame_at);
        size_t take = frame - have < n - done - pending ? frame - have : n - done - pending;
        if (z->raw.len + take > QG_WIRE_Z_GROUP_MAX ||
            !qg_wire_buf_append(&z->raw, p + done + pending, take)) {
            qg_wire_set_passthrough(c, QG_WIRE_UNREAD_STREAM);
            continue;
        }
        pending += take;
        have += take;
        if (have < QG_WIRE_Z_HEADER ||
            have < QG_WIRE_Z_HEADER + (size_t)qg_wire_le24(z->raw.data + z->frame_at))
            continue;
        group_state g = take_frame(c, io);
        if (g != GROUP_DONE)
            continue; /* open: more frames; unread: see above */
        qg_wire_buf out = {0};
        if (!group_frames(z, &out)) {
            qg_wire_buf_free(&out);
            qg_wire_set_passthrough(c, QG_WIRE_UNREAD_STREAM);
            continue;
        }
        group_reset(z);
        z->owed = out;
        z->owed_done = 0;
        z->covers = pending;
        pending = 0;
    }
}

bool qg_wire_z_holds(const qg_wire_conn *c)
{
    const qg_wire_z *z = c->z;
    return z && (z->raw.len > 0 || z->owed.len > 0 || z->covers > 0);
}

/* --------------------------------------------------- server to client */

/* Inflates in[0, n) of the current frame's payload, observing what comes
 * out; false when it does not inflate as the header says. */
static bool inflate_some(qg_wire_conn *c, const uint8_t *in, size_t n)
{
    qg_wire_z *z = c->z;
    z_stream *zs = &z->in_z.zs;
    if (z->in_ended)
        return false; /* a byte after the zlib stream's end */
    if (!z->in_chunk && !(z->in_chunk = malloc(IN_CHUNK)))
        return false;
    zs->next_in = in;
    zs->avail_in = (uInt)n;
    for (;;) {
        zs->next_out = z->in_chunk;
        zs->avail_out = IN_CHUNK;
        int r = c->zlib->inflate(zs, Z_NO_FLUSH);
        size_t got = IN_CHUNK - zs->avail_out;
        bool stalled = r == Z_BUF_ERROR && got == 0 && zs->avail_in == 0;
        if ((r != Z_OK && r != Z_STREAM_END && !stalled) || got > z->in_plain - z->in_out)
            return false;
        z->in_out += (uint32_t)got;
        if (got > 0)
            qg_wire_packets_read(c, z->in_chunk, got);
        if (r == Z_STREAM_END) {
            z->in_ended = true;
            return zs->avail_in == 0;
        }
        if (stalled || (zs->avail_in == 0 && zs->avail_out > 0))
            return true;
    }
}

/* The current frame's payload ended. */
static void frame_read(qg_wire_conn *c)
{
    qg_wire_z *z = c->z;
    if (z->in_plain && (!z->in_ended || z->in_out != z->in_plain))
        qg_wire_set_passthrough(c, QG_WIRE_UNREAD_INFLATE);
    z->in_hdr_len = 0;
}

__attribute__((noinline)) static void z_read(qg_wire_conn *c, const uint8_t *p, size_t n)
{
    qg_wire_z *z = z_state(c);
    size_t i = 0;
    while (z && i < n && !c->passthrough) {
        if (z->in_hdr_len < QG_WIRE_Z_HEADER) {
            z->in_hdr[z->in_hdr_len++] = p[i++];
            if (z->in_hdr_len < QG_WIRE_Z_HEADER)
                continue;
            z->in_left = qg_wire_le24(z->in_hdr);
            z->in_plain = qg_wire_le24(z->in_hdr + 4);
            z->in_out = 0;
            z->in_ended = false;
            if (z->in_plain && !inflater_start(c->zlib, &z->in_z))
                qg_wire_set_passthrough(c, QG_WIRE_UNREAD_STREAM);
            else if (z->in_left == 0)
                frame_read(c);
            continue;
        }
        size_t step = z->in_left < n - i ? z->in_left : n - i;
        if (!z->in_plain)
            qg_wire_packets_read(c, p + i, step);
        else if (!inflate_some(c, p + i, step))
            qg_wire_set_passthrough(c, QG_WIRE_UNREAD_INFLATE);
        z->in_left -= (uint32_t)step;
        i += step;
        if (z->in_left == 0)
            frame_read(c);
    }
}

/* ------------------------------------------------------- entry points */

ssize_t qg_wire_write(qg_wire_conn *c, const qg_wire_io *io, const uint8_t *p, size_t n)
{
    if (c->z_on)
        return z_write(c, io, p, n);
    return qg_wire_packets_write(c, io, p, n);
}

void qg_wire_read_rest(qg_wire_conn *c, const uint8_t *p, size_t n, size_t i)
{
    /* packets, then (MySQL) compressed frames from the login OK on; a
     * PostgreSQL stream is never compressed */
    size_t used = c->z_on ? 0 : qg_wire_packets_read_from(c, p, n, i);
    if (__builtin_expect(used < n && c->z_on, 0))
        z_read(c, p + used, n - used);
}

void qg_wire_conn_release(qg_wire_conn *c)
{
    qg_wire_buf_free(&c->hold);
    qg_wire_buf_free(&c->owed);
    qg_wire_buf_free(&c->decided);
    qg_wire_buf_free(&c->in_body);
    qg_wire_my_release(&c->my);
    qg_wire_z *z = c->z;
    if (!z)
        return;
    qg_wire_buf_free(&z->raw);
    qg_wire_buf_free(&z->frames);
    qg_wire_buf_free(&z->plain);
    qg_wire_buf_free(&z->sent);
    qg_wire_buf_free(&z->owed);
    free(z->in_chunk);
    inflater_end(c->zlib, &z->out_z);
    inflater_end(c->zlib, &z->in_z);
    free(z);
    c->z = NULL;
}
