/*
 * The wire front's stream reassembly (src/wire/wire_stream.c): any client byte
 * stream, cut into writes anywhere and pushed through a kernel that takes a
 * few bytes a call and says EAGAIN every other call, reaches the server
 * exactly as when written whole: same bytes, same order, the same messages
 * checked, each once, and the same held at the end, with the same
 * PostgreSQL answers due and states pending.  With nothing blocked,
 * what was sent followed by what is held is the input itself.  The same
 * bytes read as the server's side never crash the observer, are read as
 * a direct TLS ClientHello alike with more bytes after them, and as MySQL
 * answers to commands written before them leave the same state read whole
 * (the walk of whole packets) and a byte at a time (each packet framed and
 * read alone).
 * Input: protocol byte (low bit: PG or MySQL; bit 1: MySQL already
 * authenticated; bit 2: block queries whose text starts with 'X'; bit 3:
 * MySQL compressed, the stream cut into frames, some stored, some deflated;
 * bit 4: MySQL CLIENT_DEPRECATE_EOF agreed for the server's side; bit 7:
 * MySQL query attributes agreed), a seed byte for the cut sizes (and the
 * frames), a byte for the kernel's limit (its high half: the MySQL
 * commands whose answers the server's side is read as), then the stream.  Compressed, the frames are also compared with the plain
 * stream: the same messages checked, and what reaches the server, inflated,
 * is what the plain stream sends; with nothing blocked the frames go as
 * they are.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "fuzz_common.h"
#include "wire_compress.h"
#include "wire_stream.h"
#include "zlib_loader.h"

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

/* Writes data[0, n) in pieces; returns the conn's state for comparison.
 * `zlib`: the connection is past a login that agreed compression. */
static void run(const uint8_t *data, size_t n, qg_wire_proto proto, bool authenticated,
                uint32_t caps, const qg_wire_zlib *zlib, sink *s, unsigned seed, qg_wire_conn *c)
{
    qg_wire_conn_init(c, proto);
    c->my_command_phase = c->my.response_seen = authenticated;
    c->my.caps |= caps;
    if (zlib) {
        c->my.caps |= QG_MY_CLIENT_COMPRESS;
        c->zlib = zlib;
        c->z_on = true;
    }
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

/* plain[0, n) cut into frames of 1..97 bytes, numbered from 0, each stored
 * or deflated as the seed says. */
static void frames_of(const uint8_t *plain, size_t n, unsigned seed, qg_wire_buf *out)
{
    uint8_t seq = 0;
    for (size_t off = 0; off < n;) {
        seed = seed * 1103515245u + 12345u;
        size_t len = 1 + (seed >> 8) % 97;
        if (len > n - off)
            len = n - off;
        uint8_t packed[256];
        uLongf packed_len = sizeof packed;
        bool stored = (seed >> 20) & 1 || compress(packed, &packed_len, plain + off, len) != Z_OK;
        size_t payload = stored ? len : packed_len, inflated = stored ? 0 : len;
        uint8_t h[7] = {(uint8_t)payload, (uint8_t)(payload >> 8), (uint8_t)(payload >> 16), seq++,
                        (uint8_t)inflated, (uint8_t)(inflated >> 8), (uint8_t)(inflated >> 16)};
        FUZZ_CHECK(qg_wire_buf_append(out, h, sizeof h) &&
                       qg_wire_buf_append(out, stored ? plain + off : packed, payload),
                   "out of memory");
        off += len;
    }
}

/* The contents of the frames in b[0, n), joined; false if they are not
 * whole frames that inflate as they say. */
static bool unframed(const uint8_t *b, size_t n, qg_wire_buf *plain)
{
    for (size_t off = 0; off < n;) {
        if (n - off < 7)
            return false;
        size_t payload = qg_wire_le24(b + off), inflated = qg_wire_le24(b + off + 4);
        if (n - off - 7 < payload)
            return false;
        if (inflated) {
            uint8_t out[256];
            uLongf out_len = sizeof out;
            if (inflated > sizeof out ||
                uncompress(out, &out_len, b + off + 7, payload) != Z_OK || out_len != inflated)
                return false;
            FUZZ_CHECK(qg_wire_buf_append(plain, out, out_len), "out of memory");
        } else {
            FUZZ_CHECK(qg_wire_buf_append(plain, b + off + 7, payload), "out of memory");
        }
        off += 7 + payload;
    }
    return true;
}

/* The MySQL stream plain[0, n) in compressed frames, written whole and in
 * pieces, against the plain stream written whole. */
static void compressed(const uint8_t *plain, size_t n, bool block_x, uint32_t caps,
                       unsigned seed, size_t limit)
{
    const qg_wire_zlib *zlib = qg_zlib_load();
    FUZZ_CHECK(zlib != NULL, "libz.so.1 does not load");
    qg_wire_buf framed = {0};
    frames_of(plain, n, seed, &framed);
    sink whole = {.block_x = block_x}, pieces = {.block_x = block_x, .limit = limit,
                                                 .eagain = limit != 0},
         direct = {.block_x = block_x};
    qg_wire_conn a, b, d;
    run(framed.data, framed.len, QG_WIRE_MYSQL, true, caps, zlib, &whole, 0, &a);
    run(framed.data, framed.len, QG_WIRE_MYSQL, true, caps, zlib, &pieces, seed, &b);
    run(plain, n, QG_WIRE_MYSQL, true, caps, NULL, &direct, 0, &d);

    FUZZ_CHECK(whole.got.len == pieces.got.len &&
                   (whole.got.len == 0 || memcmp(whole.got.data, pieces.got.data, whole.got.len) == 0),
               "compressed: sent %zu bytes whole but %zu in pieces", whole.got.len, pieces.got.len);
    FUZZ_CHECK(whole.checked.len == pieces.checked.len &&
                   (whole.checked.len == 0 ||
                    memcmp(whole.checked.data, pieces.checked.data, whole.checked.len) == 0),
               "compressed: the messages checked whole and in pieces differ");
    FUZZ_CHECK(a.passthrough == b.passthrough && qg_wire_z_holds(&a) == qg_wire_z_holds(&b),
               "compressed: whole and in pieces end apart");
    bool settled = !a.passthrough && !d.passthrough && !qg_wire_z_holds(&a) && d.hold.len == 0;
    if (settled) {
        FUZZ_CHECK(whole.checked.len == direct.checked.len &&
                       (whole.checked.len == 0 ||
                        memcmp(whole.checked.data, direct.checked.data, whole.checked.len) == 0),
                   "compressed and plain streams check different messages");
        qg_wire_buf sent = {0};
        FUZZ_CHECK(unframed(whole.got.data, whole.got.len, &sent),
                   "compressed: what was sent is not whole frames");
        FUZZ_CHECK(sent.len == direct.got.len &&
                       (sent.len == 0 || memcmp(sent.data, direct.got.data, sent.len) == 0),
                   "compressed: %zu bytes inflated reach the server, %zu from the plain stream",
                   sent.len, direct.got.len);
        qg_wire_buf_free(&sent);
    }
    if (!block_x && !a.passthrough)
        FUZZ_CHECK(whole.got.len <= framed.len &&
                       (whole.got.len == 0 || memcmp(whole.got.data, framed.data, whole.got.len) == 0) &&
                       (qg_wire_z_holds(&a) || whole.got.len == framed.len),
                   "compressed, nothing blocked: the frames sent differ from the frames written");

    /* the frames as the server's, a byte at a time and whole */
    qg_wire_conn r1, r2;
    qg_wire_conn_init(&r1, QG_WIRE_MYSQL);
    qg_wire_conn_init(&r2, QG_WIRE_MYSQL);
    r1.my_command_phase = r2.my_command_phase = r1.my.response_seen = r2.my.response_seen = true;
    r1.zlib = r2.zlib = zlib;
    r1.z_on = r2.z_on = true;
    qg_wire_read(&r1, framed.data, framed.len);
    for (size_t i = 0; i < framed.len; i++)
        qg_wire_read(&r2, framed.data + i, 1);
    FUZZ_CHECK(strcmp(r1.session.encoding, r2.session.encoding) == 0 &&
                   r1.session.no_backslash_escapes == r2.session.no_backslash_escapes &&
                   r1.passthrough == r2.passthrough,
               "compressed: the server's words read whole and byte-wise disagree");

    qg_wire_conn_release(&a);
    qg_wire_conn_release(&b);
    qg_wire_conn_release(&d);
    qg_wire_conn_release(&r1);
    qg_wire_conn_release(&r2);
    qg_wire_buf_free(&framed);
    qg_wire_buf_free(&whole.got);
    qg_wire_buf_free(&pieces.got);
    qg_wire_buf_free(&direct.got);
    qg_wire_buf_free(&whole.checked);
    qg_wire_buf_free(&pieces.checked);
    qg_wire_buf_free(&direct.checked);
}

/* `count` commands written before the server's bytes are read, their
 * kinds from `seed`: COM_QUERY (a result set, an OK or an error, LOAD DATA
 * LOCAL's request), COM_STMT_PREPARE, COM_FIELD_LIST. */
static void written_commands(qg_wire_conn *c, unsigned count, unsigned seed)
{
    static const uint8_t commands[] = {QG_MY_COM_QUERY, QG_MY_COM_STMT_PREPARE,
                                       QG_MY_COM_FIELD_LIST, QG_MY_COM_QUERY};
    for (unsigned i = 0; i < count; i++) {
        uint8_t packet[6] = {2, 0, 0, 0, commands[(seed >> (2 * (i % 4))) & 3], 'x'};
        qg_wire_my_record(&c->my, 6 * i, packet, sizeof packet, false);
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
    if (proto == QG_WIRE_MYSQL && data[0] & 8) {
        compressed(stream, n, block_x, caps, seed, limit);
        return 0;
    }

    sink whole = {.block_x = block_x}, pieces = {.block_x = block_x, .limit = limit,
                                                 .eagain = limit != 0};
    qg_wire_conn a, b;
    run(stream, n, proto, authenticated, caps, NULL, &whole, 0, &a);
    run(stream, n, proto, authenticated, caps, NULL, &pieces, seed, &b);

    FUZZ_CHECK(whole.got.len == pieces.got.len &&
                   (whole.got.len == 0 || memcmp(whole.got.data, pieces.got.data, whole.got.len) == 0),
               "sent %zu bytes whole but %zu in pieces", whole.got.len, pieces.got.len);
    FUZZ_CHECK(whole.checked.len == pieces.checked.len &&
                   (whole.checked.len == 0 ||
                    memcmp(whole.checked.data, pieces.checked.data, whole.checked.len) == 0),
               "the messages checked whole and in pieces differ");
    FUZZ_CHECK(a.hold.len == b.hold.len && a.passthrough == b.passthrough,
               "held %zu whole but %zu in pieces", a.hold.len, b.hold.len);
    FUZZ_CHECK(a.pg_unanswered == b.pg_unanswered &&
                   a.pg_prepared_sets_state == b.pg_prepared_sets_state &&
                   memcmp(&a.pg_pending, &b.pg_pending, sizeof a.pg_pending) == 0,
               "PostgreSQL answers due or states pending differ whole (%u) and in pieces (%u)",
               a.pg_unanswered, b.pg_unanswered);
    if (!block_x) {
        FUZZ_CHECK(whole.got.len + a.hold.len == n &&
                       (whole.got.len == 0 || memcmp(whole.got.data, stream, whole.got.len) == 0) &&
                       (a.hold.len == 0 || memcmp(a.hold.data, stream + whole.got.len, a.hold.len) == 0),
                   "nothing blocked, yet %zu sent + %zu held of %zu differ from the input",
                   whole.got.len, a.hold.len, n);
    }
    /* a direct TLS ClientHello is read inside its record: bytes after it
     * change nothing */
    if (qg_wire_is_pg_direct_tls(stream, n)) {
        uint8_t *longer = malloc(n + 1);
        FUZZ_CHECK(longer, "out of memory");
        memcpy(longer, stream, n);
        longer[n] = 0x16;
        FUZZ_CHECK(qg_wire_is_pg_direct_tls(longer, n + 1),
                   "a direct TLS ClientHello no longer one with a byte after it");
        free(longer);
    }
    /* the same bytes as the server's, a byte at a time and whole */
    qg_wire_conn r1, r2;
    qg_wire_conn_init(&r1, proto);
    qg_wire_conn_init(&r2, proto);
    r1.my_command_phase = r2.my_command_phase = authenticated;
    r1.my.response_seen = r2.my.response_seen = authenticated;
    if (proto == QG_WIRE_MYSQL && authenticated) {
        if (data[0] & 0x10)
            r1.my.caps = r2.my.caps = QG_MY_CLIENT_DEPRECATE_EOF;
        written_commands(&r1, data[2] >> 4, seed);
        written_commands(&r2, data[2] >> 4, seed);
    }
    qg_wire_read(&r1, stream, n);
    for (size_t i = 0; i < n; i++)
        qg_wire_read(&r2, stream + i, 1);
    FUZZ_CHECK(strcmp(r1.session.encoding, r2.session.encoding) == 0 &&
                   r1.session.no_backslash_escapes == r2.session.no_backslash_escapes &&
                   r1.session.std_strings == r2.session.std_strings,
               "the server's words read whole and byte-wise disagree");
    FUZZ_CHECK(r1.my.len - r1.my.head == r2.my.len - r2.my.head && r1.my.answer == r2.my.answer &&
                   r1.my.skip == r2.my.skip && r1.my.answer_status_seen == r2.my.answer_status_seen &&
                   r1.my.answer_status == r2.my.answer_status && r1.out.infile == r2.out.infile,
               "MySQL answers read whole and byte-wise stand apart: %zu and %zu commands unanswered",
               r1.my.len - r1.my.head, r2.my.len - r2.my.head);

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
