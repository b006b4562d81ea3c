/*
 * The wire front's reading of the answer to its own question about a MySQL
 * connection's state (src/wire/wire_probe.c).
 * Input: a flags byte (bit 0: CLIENT_DEPRECATE_EOF agreed; bit 1: MariaDB's
 * metadata cache agreed; bit 2: the rest is the answer as it is), then
 * either the answer's bytes, or two NUL-separated values (charset, sql_mode)
 * that an answer as the server builds it carries.
 * Invariants: the reader never reads past the bytes given and says the same
 * twice; whatever it says of the whole answer it said NEED of every proper
 * prefix of it unless that prefix was already an error or not an answer;
 * DONE gives a NUL-terminated charset and only the quoting flags; an answer
 * built from two values gives what the session-tracking reader gives for
 * them, and is NEED at every shorter length.
 */
#include "fuzz_common.h"
#include "wire_probe.h"
#include "wire_stream.h"

static void packet(qg_wire_buf *b, uint8_t seq, const void *payload, size_t len)
{
    uint8_t h[4] = {(uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16), seq};
    FUZZ_CHECK(qg_wire_buf_append(b, h, 4) && qg_wire_buf_append(b, payload, len), "memory");
}

static void lenenc_str(qg_wire_buf *b, const char *s, size_t len)
{
    uint8_t head[3] = {0xfc, (uint8_t)len, (uint8_t)(len >> 8)};
    if (len < 0xfb)
        FUZZ_CHECK(qg_wire_buf_append(b, &head[1], 1), "memory");
    else
        FUZZ_CHECK(qg_wire_buf_append(b, head, 3), "memory");
    FUZZ_CHECK(qg_wire_buf_append(b, s, len), "memory");
}

/* The answer MariaDB sends: count, two definitions, [EOF], the row, the end. */
static void build(qg_wire_buf *b, bool deprecate_eof, bool cache, const char *charset,
                  size_t charset_len, const char *mode, size_t mode_len)
{
    uint8_t seq = 1;
    static const uint8_t count[2] = {2, 1};
    packet(b, seq++, count, cache ? 2 : 1);
    static const uint8_t def[] = {3, 'd', 'e', 'f', 0, 0, 0, 2, '@', '@', 0, 0x0c,
                                  0x21, 0, 0x60, 0, 0, 0, 0xfd, 0, 0, 0x27, 0, 0};
    packet(b, seq++, def, sizeof def);
    packet(b, seq++, def, sizeof def);
    static const uint8_t eof[] = {0xfe, 0, 0, 2, 0};
    if (!deprecate_eof)
        packet(b, seq++, eof, sizeof eof);
    qg_wire_buf row = {0};
    lenenc_str(&row, charset, charset_len);
    lenenc_str(&row, mode, mode_len);
    packet(b, seq++, row.data, row.len);
    qg_wire_buf_free(&row);
    static const uint8_t ok_end[] = {0xfe, 0, 0, 2, 0, 0, 0};
    if (deprecate_eof)
        packet(b, seq, ok_end, sizeof ok_end);
    else
        packet(b, seq, eof, sizeof eof);
}

static void check_done(qg_wire_probe_status s, const qg_my_state *st)
{
    if (s != QG_PROBE_DONE)
        return;
    FUZZ_CHECK(memchr(st->charset, 0, sizeof st->charset) != NULL, "charset not terminated");
    FUZZ_CHECK((st->flags & ~(unsigned)(QG_NO_BACKSLASH_ESCAPES | QG_ANSI_QUOTES)) == 0,
               "flags %u", st->flags);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 0xffff)
        return 0;
    uint8_t flags = data[0];
    qg_wire_conn c;
    qg_wire_conn_init(&c, QG_WIRE_MYSQL);
    c.my.caps = flags & 1 ? QG_MY_CLIENT_DEPRECATE_EOF : 0;
    c.my.ext_caps = flags & 2 ? QG_MARIADB_CLIENT_CACHE_METADATA : 0;
    qg_wire_buf answer = {0};
    bool built = !(flags & 4);
    qg_my_state want = {{0}, 0};
    bool want_ok = false;
    if (built) {
        const char *text = (const char *)data + 1, *end = text + (size - 1);
        const char *nul = memchr(text, 0, (size_t)(end - text));
        const char *mode = nul ? nul + 1 : end;
        size_t charset_len = (size_t)((nul ? nul : end) - text);
        size_t mode_len = (size_t)(end - mode);
        build(&answer, flags & 1, flags & 2, text, charset_len, mode, mode_len);
        bool list;
        want_ok = qg_my_state_apply(&want, "character_set_client", 20, text, charset_len, &list) &&
                  qg_my_state_apply(&want, "sql_mode", 8, mode, mode_len, &list);
    } else {
        FUZZ_CHECK(qg_wire_buf_append(&answer, data + 1, size - 1), "memory");
    }
    /* each length as an exact heap copy, so that ASan sees a read past it */
    qg_wire_probe_status whole = QG_PROBE_NEED;
    bool stopped = false; /* a prefix was already an error or not an answer */
    for (size_t n = 0; n <= answer.len; n++) {
        unsigned char *copy = fuzz_exact_copy(answer.data, n);
        qg_my_state a, b;
        qg_wire_probe_status s = qg_wire_probe_answer(&c, copy, n, &a);
        FUZZ_CHECK(s == qg_wire_probe_answer(&c, copy, n, &b), "not deterministic at %zu", n);
        FUZZ_CHECK(s != QG_PROBE_DONE || qg_my_state_equal(&a, &b), "two states at %zu", n);
        check_done(s, &a);
        if (n < answer.len && s != QG_PROBE_NEED)
            stopped = true;
        if (n == answer.len) {
            whole = s;
            if (built && s == QG_PROBE_DONE)
                FUZZ_CHECK(qg_my_state_equal(&a, &want), "%s %u, not %s %u", a.charset, a.flags,
                           want.charset, want.flags);
        }
        free(copy);
    }
    if (built) {
        FUZZ_CHECK(!stopped, "a part of a whole answer was taken for the end");
        FUZZ_CHECK((whole == QG_PROBE_DONE) == want_ok, "read %d, the values say %d", (int)whole,
                   (int)want_ok);
    }
    qg_wire_buf_free(&answer);
    qg_wire_conn_release(&c);
    return 0;
}
