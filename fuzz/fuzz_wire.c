/*
 * The wire front's stream reassembly (src/wire/wire_stream.c): any client byte
 * stream, cut into writes anywhere and pushed through a kernel that takes a
 * few bytes a call and says EAGAIN every other call, reaches the server
 * exactly as when written whole: same bytes, same order, the same messages
 * checked, each once, and the same held at the end.  With nothing blocked,
 * what was sent followed by what is held is the input itself.  The same
 * bytes read as the server's side never crash the observer.
 * Input: protocol byte (low bit: PG or MySQL; bit 1: MySQL already
 * authenticated; bit 2: block queries whose text starts with 'X'; bit 7:
 * MySQL query attributes agreed), a seed
 * byte for the cut sizes, a byte for the kernel's limit, then the stream.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "wire_stream.h"

typedef struct sink {
    qg_wire_buf got;
    size_t limit;
    bool eagain;
    unsigned calls;
    bool block_x;
    qg_wire_buf checked; /* each message checked: kind, length, text */
} sink;

static ssize_t sink_send(void *ctx, const uint8_t *p, size_t n)
{
    sink *s = ctx;
    s->calls++;
    if (s->eagain && s->calls % 2 == 0) {
        errno = EAGAIN;
        return -1;
    }
    if (s->limit && n > s->limit)
        n = s->limit;
    FUZZ_CHECK(qg_wire_buf_append(&s->got, p, n), "out of memory");
    return (ssize_t)n;
}

static bool sink_check(void *ctx, qg_wire_conn *c, const qg_wire_msg *m, qg_wire_buf *out)
{
    sink *s = ctx;
    const uint64_t head[4] = {m->kind, m->len, m->too_large, m->unreadable};
    FUZZ_CHECK(qg_wire_buf_append(&s->checked, head, sizeof head) &&
                   (!m->sql || qg_wire_buf_append(&s->checked, m->sql, m->len)),
               "out of memory");
    if (!s->block_x || m->too_large || m->unreadable || m->len == 0 || m->sql[0] != 'X')
        return true;
    FUZZ_CHECK(qg_wire_replacement(c, m, "quoteguard: blocked fuzz", NULL, out), "no replacement");
    return false;
}

/* A connection that is no longer read passes (audit's way; the stream's
 * bytes are compared whole). */
static bool sink_unread_pass(void *ctx, qg_wire_conn *c)
{
    (void)ctx;
    (void)c;
    return true;
}

/* Writes data[0, n) in pieces; returns the conn's state for comparison. */
static void run(const uint8_t *data, size_t n, qg_wire_proto proto, bool authenticated,
                uint32_t caps, sink *s, unsigned seed, qg_wire_conn *c)
{
    qg_wire_conn_init(c, proto);
    c->my_command_phase = c->my.response_seen = authenticated;
    c->my.caps |= caps;
    qg_wire_io io = {sink_send, sink_check, sink_unread_pass, s};
    size_t off = 0;
    unsigned spins = 0;
    while (off < n) {
        size_t piece = seed ? 1 + (seed = seed * 1103515245u + 12345u) % 37 : n - off;
        if (piece > n - off)
            piece = n - off;
        ssize_t r = qg_wire_write(c, &io, data + off, piece);
        FUZZ_CHECK(r != 0 && (r < 0 || (size_t)r <= piece), "write returned %zd of %zu", r, piece);
        FUZZ_CHECK(++spins < 10000000, "no progress");
        if (r > 0)
            off += (size_t)r;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    qg_wire_proto proto = data[0] & 1 ? QG_WIRE_MYSQL : QG_WIRE_PG;
    bool authenticated = data[0] & 2, block_x = data[0] & 4;
    uint32_t caps = data[0] & 0x80 ? QG_MY_CLIENT_QUERY_ATTRIBUTES : 0;
    unsigned seed = data[1] | 1u;
    size_t limit = data[2] % 16;
    const uint8_t *stream = data + 3;
    size_t n = size - 3;

    sink whole = {.block_x = block_x}, pieces = {.block_x = block_x, .limit = limit,
                                                 .eagain = limit != 0};
    qg_wire_conn a, b;
    run(stream, n, proto, authenticated, caps, &whole, 0, &a);
    run(stream, n, proto, authenticated, caps, &pieces, seed, &b);

    FUZZ_CHECK(whole.got.len == pieces.got.len &&
                   (whole.got.len == 0 || memcmp(whole.got.data, pieces.got.data, whole.got.len) == 0),
               "sent %zu bytes whole but %zu in pieces", whole.got.len, pieces.got.len);
    FUZZ_CHECK(whole.checked.len == pieces.checked.len &&
                   (whole.checked.len == 0 ||
                    memcmp(whole.checked.data, pieces.checked.data, whole.checked.len) == 0),
               "the messages checked whole and in pieces differ");
    FUZZ_CHECK(a.hold.len == b.hold.len && a.passthrough == b.passthrough,
               "held %zu whole but %zu in pieces", a.hold.len, b.hold.len);
    if (!block_x) {
        FUZZ_CHECK(whole.got.len + a.hold.len == n &&
                       (whole.got.len == 0 || memcmp(whole.got.data, stream, whole.got.len) == 0) &&
                       (a.hold.len == 0 || memcmp(a.hold.data, stream + whole.got.len, a.hold.len) == 0),
                   "nothing blocked, yet %zu sent + %zu held of %zu differ from the input",
                   whole.got.len, a.hold.len, n);
    }
    /* the same bytes as the server's, a byte at a time and whole */
    qg_wire_conn r1, r2;
    qg_wire_conn_init(&r1, proto);
    qg_wire_conn_init(&r2, proto);
    r1.my_command_phase = r2.my_command_phase = authenticated;
    r1.my.response_seen = r2.my.response_seen = authenticated;
    qg_wire_read(&r1, stream, n);
    for (size_t i = 0; i < n; i++)
        qg_wire_read(&r2, stream + i, 1);
    FUZZ_CHECK(strcmp(r1.session.encoding, r2.session.encoding) == 0 &&
                   r1.session.no_backslash_escapes == r2.session.no_backslash_escapes &&
                   r1.session.std_strings == r2.session.std_strings,
               "the server's words read whole and byte-wise disagree");

    qg_wire_conn_release(&a);
    qg_wire_conn_release(&b);
    qg_wire_conn_release(&r1);
    qg_wire_conn_release(&r2);
    qg_wire_buf_free(&whole.got);
    qg_wire_buf_free(&pieces.got);
    qg_wire_buf_free(&whole.checked);
    qg_wire_buf_free(&pieces.checked);
    return 0;
}
