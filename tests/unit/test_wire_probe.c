/* The wire front's question about a MySQL connection's state
 * (src/wire/wire_probe.c): when it may be asked, the packet, the reading of
 * the answer as MariaDB sends it (with and without CLIENT_DEPRECATE_EOF, cut
 * anywhere), errors and answers that are not the question's; and a check
 * that finds the connection broken lets no byte of the query or its
 * replacement go (src/wire/wire_stream.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "quoteguard.h"
#include "tap.h"
#include "wire_probe.h"
#include "wire_stream.h"

enum {
    CAPS_BASE = 0x01 | 0x200 | 0x8000 | 0x80000, /* CLIENT_MYSQL, 41, SECURE, PLUGIN_AUTH */
    DEPRECATE_EOF = 1 << 24,
};

typedef struct sink {
    qg_wire_buf got;
    bool broken; /* the check gives the connection up */
} sink;

static ssize_t sink_send(void *ctx, const uint8_t *p, size_t n)
{
    sink *s = ctx;
    qg_wire_buf_append(&s->got, p, n);
    return (ssize_t)n;
}

/* Passes every query, or gives the connection up and blocks the query. */
static bool sink_check(void *ctx, qg_wire_conn *c, const qg_wire_msg *m, qg_wire_buf *out)
{
    sink *s = ctx;
    if (!s->broken)
        return true;
    qg_wire_set_passthrough(c, QG_WIRE_UNREAD_PROBE);
    qg_wire_replacement(c, m, "quoteguard: blocked test", NULL, out);
    return false;
}

static bool unread_refuse(void *ctx, qg_wire_conn *c)
{
    (void)ctx;
    (void)c;
    return false;
}

static void my_packet(qg_wire_buf *b, uint8_t seq, const void *payload, size_t len)
{
    uint8_t h[4] = {(uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16), seq};
    qg_wire_buf_append(b, h, 4);
    qg_wire_buf_append(b, payload, len);
}

/* A connection to a server of `version` ("5.5.5-10.11.19-MariaDB") that
 * agreed `caps`, logged in with utf8mb4, no command pending. */
static void session(qg_wire_conn *c, const char *version, uint32_t caps, sink *s)
{
    qg_wire_conn_init(c, QG_WIRE_MYSQL);
    uint8_t greeting[80] = {10};
    size_t vlen = strlen(version) + 1;
    memcpy(greeting + 1, version, vlen);
    size_t at = 1 + vlen + 4 + 8 + 1;
    greeting[at] = (uint8_t)caps;
    greeting[at + 1] = (uint8_t)(caps >> 8);
    greeting[at + 5] = (uint8_t)(caps >> 16);
    greeting[at + 6] = (uint8_t)(caps >> 24);
    uint8_t response[64] = {0};
    memcpy(response, &caps, 4);
    response[8] = 45; /* utf8mb4_general_ci */
    memcpy(response + 32, "root\0", 5);
    static const uint8_t ok[] = {0, 0, 0, 2, 0, 0, 0};
    qg_wire_buf in = {0}, out = {0};
    my_packet(&in, 0, greeting, at + 20);
    qg_wire_read(c, in.data, in.len);
    my_packet(&out, 1, response, 40);
    qg_wire_io io = {sink_send, sink_check, unread_refuse, s};
    qg_wire_write(c, &io, out.data, out.len);
    in.len = 0;
    my_packet(&in, 2, ok, sizeof ok);
    qg_wire_read(c, in.data, in.len);
    qg_wire_buf_free(&in);
    qg_wire_buf_free(&out);
}

/* The client writes sql (a COM_QUERY) and reads an OK: its effect read
 * with the state before. */
static void exchange(qg_wire_conn *c, sink *s, const char *sql)
{
    qg_my_state st = {.flags = 0};
    qg_my_state_set_charset(&st, c->session.encoding, strlen(c->session.encoding));
    size_t len = strlen(sql);
    qg_my_plan plan;
    qg_my_plan_init(&plan, sql, len);
    qg_wire_my_query_effect(&c->my, &plan, &st);
    uint8_t command[256] = {3};
    memcpy(command + 1, sql, len);
    qg_wire_buf out = {0}, in = {0};
    my_packet(&out, 0, command, len + 1);
    qg_wire_io io = {sink_send, sink_check, unread_refuse, s};
    qg_wire_write(c, &io, out.data, out.len);
    static const uint8_t ok[] = {0, 0, 0, 2, 0, 0, 0};
    my_packet(&in, 1, ok, sizeof ok);
    qg_wire_read(c, in.data, in.len);
    qg_wire_buf_free(&out);
    qg_wire_buf_free(&in);
}

static qg_wire_msg query(const char *sql)
{
    return (qg_wire_msg){.kind = QG_WIRE_MY_QUERY, .sql = sql, .len = strlen(sql), .at_start = true};
}

static const char *const mariadb = "5.5.5-10.11.19-MariaDB";

static void test_when(void)
{
    sink s = {0};
    qg_wire_conn c;
    session(&c, mariadb, CAPS_BASE, &s);
    qg_wire_msg m = query("SELECT 'x'");
    tap_ok(!qg_wire_probe_may(&c, &m), "not asked while the state is known");
    exchange(&c, &s, "SET character_set_client = @v");
    tap_ok(!c.my.known, "SET character_set_client = @v: the state is unknown");
    tap_ok(qg_wire_probe_may(&c, &m), "asked before the next query, the connection idle");
    m.at_start = false;
    tap_ok(!qg_wire_probe_may(&c, &m), "not while bytes of the client's stream before it are unsent");
    static const char *const unasked[] = {
        "SELECT ROW_COUNT(), 'x'", "INSERT INTO t VALUES (row_count())", "CALL p('x')",
        "EXECUTE s", "EXECUTE IMMEDIATE 'SELECT 1'", "SELECT 1; CALL p('x')",
    };
    for (size_t i = 0; i < sizeof unasked / sizeof *unasked; i++) {
        m = query(unasked[i]);
        tap_ok(!qg_wire_probe_may(&c, &m), "not before %s (it may read ROW_COUNT())", unasked[i]);
    }
    m = query("SELECT 'x'");
    m.kind = QG_WIRE_MY_PREPARE;
    tap_ok(!qg_wire_probe_may(&c, &m), "not before a COM_STMT_PREPARE");
    m = query("SELECT 'x'");
    /* a command written, its answer not read */
    qg_wire_buf out = {0};
    static const uint8_t ping[] = {0x0e};
    my_packet(&out, 0, ping, 1);
    qg_wire_io io = {sink_send, sink_check, unread_refuse, &s};
    qg_wire_write(&c, &io, out.data, out.len);
    tap_ok(!qg_wire_probe_may(&c, &m), "not while an earlier answer is unread (pipelined)");
    static const uint8_t ok[] = {0, 0, 0, 2, 0, 0, 0};
    qg_wire_buf in = {0};
    my_packet(&in, 1, ok, sizeof ok);
    qg_wire_read(&c, in.data, 6); /* its header and 2 bytes */
    tap_ok(!qg_wire_probe_may(&c, &m), "not while an answer is read part way");
    qg_wire_read(&c, in.data + 6, in.len - 6);
    tap_ok(qg_wire_probe_may(&c, &m), "asked once that answer is read");
    qg_wire_conn_release(&c);

    session(&c, "8.0.36", CAPS_BASE & ~1u, &s);
    exchange(&c, &s, "SET character_set_client = @v");
    tap_ok(!c.my.known && !qg_wire_probe_may(&c, &m), "not asked of MySQL (no VALUES statement)");
    qg_wire_conn_release(&c);
    session(&c, "5.5.5-10.2.44-MariaDB", CAPS_BASE, &s);
    exchange(&c, &s, "SET character_set_client = @v");
    tap_ok(!qg_wire_probe_may(&c, &m), "not asked of MariaDB before 10.3.3");
    qg_wire_conn_release(&c);
    session(&c, mariadb, CAPS_BASE | 0x20, &s);
    exchange(&c, &s, "SET character_set_client = @v");
    tap_ok(!qg_wire_probe_may(&c, &m), "not asked on a compressed connection");
    qg_wire_conn_release(&c);
    qg_wire_buf_free(&out);
    qg_wire_buf_free(&in);
    qg_wire_buf_free(&s.got);

    qg_wire_buf q = {0};
    tap_ok(qg_wire_probe_packet(&q) && q.len == 48 && q.data[3] == 0 && q.data[4] == 3 &&
               memcmp(q.data + 5, "VALUES (@@character_set_client, @@sql_mode)", 43) == 0,
           "the question: a COM_QUERY at sequence 0");
    qg_wire_buf_free(&q);
}

/* The answer MariaDB sends to the question. */
static void answer(qg_wire_buf *b, bool deprecate_eof, const char *charset, const char *mode)
{
    uint8_t seq = 1;
    static const uint8_t count[] = {2};
    my_packet(b, seq++, count, 1);
    static const uint8_t def[] = {3, 'd', 'e', 'f', 0, 0, 0, 2, '@', '@', 0, 0x0c,
                                  0x21, 0, 0x60, 0, 0, 0, 0xfd, 0, 0, 0x27, 0, 0};
    my_packet(b, seq++, def, sizeof def);
    my_packet(b, seq++, def, sizeof def);
    static const uint8_t eof[] = {0xfe, 0, 0, 2, 0};
    if (!deprecate_eof)
        my_packet(b, seq++, eof, sizeof eof);
    uint8_t row[300];
    size_t n = 0, len = strlen(charset);
    row[n++] = (uint8_t)len;
    memcpy(row + n, charset, len);
    n += len;
    len = strlen(mode);
    row[n++] = (uint8_t)len;
    memcpy(row + n, mode, len);
    n += len;
    my_packet(b, seq++, row, n);
    static const uint8_t ok_end[] = {0xfe, 0, 0, 2, 0, 0, 0};
    if (deprecate_eof)
        my_packet(b, seq++, ok_end, sizeof ok_end);
    else
        my_packet(b, seq++, eof, sizeof eof);
}

static void test_answer(void)
{
    for (int deprecate = 0; deprecate < 2; deprecate++) {
        sink s = {0};
        qg_wire_conn c;
        session(&c, mariadb, CAPS_BASE | (deprecate ? DEPRECATE_EOF : 0), &s);
        exchange(&c, &s, "SET NAMES DEFAULT");
        qg_wire_buf a = {0};
        answer(&a, deprecate, "gbk", "NO_BACKSLASH_ESCAPES,ANSI_QUOTES,STRICT_TRANS_TABLES");
        bool need = true;
        qg_my_state st;
        for (size_t n = 0; n < a.len; n++)
            need = need && qg_wire_probe_answer(&c, a.data, n, &st) == QG_PROBE_NEED;
        tap_ok(need, "deprecate_eof=%d: every part of the answer wants more", deprecate);
        tap_ok(qg_wire_probe_answer(&c, a.data, a.len, &st) == QG_PROBE_DONE &&
                   strcmp(st.charset, "gbk") == 0 &&
                   st.flags == (QG_NO_BACKSLASH_ESCAPES | QG_ANSI_QUOTES),
               "deprecate_eof=%d: the whole answer gives gbk and both quoting modes", deprecate);
        qg_wire_buf_append(&a, "", 1);
        tap_ok(qg_wire_probe_answer(&c, a.data, a.len, &st) == QG_PROBE_FAILED,
               "deprecate_eof=%d: a byte past the answer is not the answer", deprecate);
        a.len = 0;
        answer(&a, deprecate, "latin1", "");
        tap_ok(qg_wire_probe_answer(&c, a.data, a.len, &st) == QG_PROBE_DONE &&
                   strcmp(st.charset, "latin1") == 0 && st.flags == 0,
               "deprecate_eof=%d: an empty sql_mode", deprecate);
        /* the other answer's state is taken */
        qg_wire_probe_taken(&c, &st);
        qg_my_state now[2];
        size_t count;
        tap_ok(qg_wire_my_states(&c.my, &c.session, now, 2, &count) && count == 1 &&
                   strcmp(now[0].charset, "latin1") == 0 && now[0].flags == 0,
               "deprecate_eof=%d: taken, the state is known", deprecate);
        qg_wire_buf_free(&a);
        qg_wire_conn_release(&c);
        qg_wire_buf_free(&s.got);
    }

    sink s = {0};
    qg_wire_conn c;
    session(&c, mariadb, CAPS_BASE, &s);
    qg_my_state st;
    qg_wire_buf a = {0};
    static const uint8_t err[] = {0xff, 0x19, 0x04, '#', '4', '2', '0', '0', '0', 'x'};
    my_packet(&a, 1, err, sizeof err);
    tap_ok(qg_wire_probe_answer(&c, a.data, a.len, &st) == QG_PROBE_ERROR,
           "an error packet read whole: an error answer");
    a.len = 0;
    answer(&a, false, "gbk", "");
    qg_wire_buf cut = {0};
    qg_wire_buf_append(&cut, a.data, 4 + 1 + 4 + 24); /* the count, one definition */
    my_packet(&cut, 3, err, sizeof err);
    tap_ok(qg_wire_probe_answer(&c, cut.data, cut.len, &st) == QG_PROBE_ERROR,
           "an error after a definition: an error answer");
    qg_wire_buf_append(&cut, "", 1);
    tap_ok(qg_wire_probe_answer(&c, cut.data, cut.len, &st) == QG_PROBE_FAILED,
           "an error packet with bytes after it: not the answer");
    a.data[3] = 2;
    tap_ok(qg_wire_probe_answer(&c, a.data, a.len, &st) == QG_PROBE_FAILED,
           "a wrong sequence id: not the answer");
    a.len = 0;
    static const uint8_t three[] = {3};
    my_packet(&a, 1, three, 1);
    tap_ok(qg_wire_probe_answer(&c, a.data, a.len, &st) == QG_PROBE_FAILED,
           "three columns: not the answer");
    a.len = 0;
    static const uint8_t ok[] = {0, 0, 0, 2, 0, 0, 0};
    my_packet(&a, 1, ok, sizeof ok);
    tap_ok(qg_wire_probe_answer(&c, a.data, a.len, &st) == QG_PROBE_FAILED,
           "an OK: not the answer");
    a.len = 0;
    answer(&a, false, "gbk", "");
    /* the row: a NULL in place of character_set_client */
    size_t row_at = 4 + 1 + 2 * (4 + 24) + 4 + 5;
    a.data[row_at + 4] = 0xfb;
    tap_ok(qg_wire_probe_answer(&c, a.data, a.len, &st) == QG_PROBE_FAILED,
           "a NULL value: not the answer");
    a.len = 0;
    answer(&a, false, "gbk", "2097152");
    tap_ok(qg_wire_probe_answer(&c, a.data, a.len, &st) == QG_PROBE_FAILED,
           "a sql_mode that is not a list of modes: not read");
    qg_wire_buf_free(&a);
    qg_wire_buf_free(&cut);
    qg_wire_conn_release(&c);
    qg_wire_buf_free(&s.got);
}

/* A check that gives the connection up: neither the query nor its
 * replacement goes, the write fails with EACCES, whole or cut. */
static void test_broken(void)
{
    for (size_t cut = 0; cut < 3; cut++) {
        sink s = {0};
        qg_wire_conn c;
        session(&c, mariadb, CAPS_BASE, &s);
        s.got.len = 0;
        s.broken = true;
        qg_wire_buf out = {0};
        static const uint8_t q[] = {3, 'S', 'E', 'L', 'E', 'C', 'T', ' ', '1'};
        my_packet(&out, 0, q, sizeof q);
        qg_wire_io io = {sink_send, sink_check, unread_refuse, &s};
        size_t first = cut == 0 ? out.len : cut == 1 ? 3 : 7;
        ssize_t r = qg_wire_write(&c, &io, out.data, first);
        if (first < out.len && r == (ssize_t)first) /* held: the rest completes it */
            r = qg_wire_write(&c, &io, out.data + first, out.len - first);
        int e = errno;
        tap_ok(r == -1 && e == EACCES && s.got.len == 0,
               "given up by the check (the first write %zu of %zu bytes): EACCES, nothing sent",
               first, out.len);
        r = qg_wire_write(&c, &io, out.data, out.len);
        tap_ok(r == -1 && errno == EACCES && s.got.len == 0, "and every later write is refused");
        qg_wire_buf_free(&out);
        qg_wire_conn_release(&c);
        qg_wire_buf_free(&s.got);
    }
}

int main(void)
{
    test_when();
    test_answer();
    test_broken();
    return tap_done();
}
