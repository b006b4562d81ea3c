/* The wire front's streams (src/wire/wire_stream.c): whatever way a client's
 * bytes are cut into writes, and however little the kernel takes per call
 * (short writes, EAGAIN), the server receives exactly the client's stream
 * with each blocked query replaced, each query is checked once, and the
 * client's retries see ordinary write semantics.  Also the server side:
 * ParameterStatus and MySQL OK packets split anywhere.  And the switch into
 * TLS: the stream the TLS library carries is the one that stopped.  And
 * MySQL's compressed protocol, with the zlib the shim loads (and none). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pg_state.h"
#include "quoteguard.h"
#include "tap.h"
#include "wire_compress.h"
#include "wire_stream.h"
#include "zlib_loader.h"

/* ---------------------------------------------------------------- harness */

typedef struct sink {
    qg_wire_buf got;
    size_t max_per_call; /* 0: no limit */
    bool eagain_every_other;
    unsigned calls;
    unsigned checks;
    size_t last_len; /* the length of the last text checked */
} sink;

static ssize_t sink_send(void *ctx, const uint8_t *p, size_t n)
{
    sink *s = ctx;
    s->calls++;
    if (s->eagain_every_other && s->calls % 2 == 0) {
        errno = EAGAIN;
        return -1;
    }
    if (s->max_per_call && n > s->max_per_call)
        n = s->max_per_call;
    qg_wire_buf_append(&s->got, p, n);
    return (ssize_t)n;
}

/* Blocks every query whose text holds EVIL. */
static bool sink_check(void *ctx, qg_wire_conn *c, const qg_wire_msg *m, qg_wire_buf *out)
{
    sink *s = ctx;
    s->checks++;
    s->last_len = m->len;
    if (m->too_large || (!m->unreadable && !memmem(m->sql, m->len, "EVIL", 4)))
        return true;
    qg_wire_replacement(c, m, "quoteguard: blocked test", NULL, out);
    return false;
}

/* Lets a connection that is no longer read pass (as audit does). */
static bool unread_pass(void *ctx, qg_wire_conn *c)
{
    (void)ctx;
    (void)c;
    return true;
}

/* Refuses it (as enforce does). */
static bool unread_refuse(void *ctx, qg_wire_conn *c)
{
    (void)ctx;
    (void)c;
    return false;
}

static void put(qg_wire_buf *b, const void *p, size_t n)
{
    qg_wire_buf_append(b, p, n);
}

static void put_be32(qg_wire_buf *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    put(b, x, 4);
}

static void pg_msg(qg_wire_buf *b, char type, const char *body, size_t len)
{
    put(b, &type, 1);
    put_be32(b, (uint32_t)len + 4);
    put(b, body, len);
}

static void pg_query(qg_wire_buf *stream, qg_wire_buf *expect, const char *sql)
{
    qg_wire_buf one = {0};
    pg_msg(&one, 'Q', sql, strlen(sql) + 1);
    put(stream, one.data, one.len);
    if (strstr(sql, "EVIL")) {
        qg_wire_conn c;
        qg_wire_conn_init(&c, QG_WIRE_PG);
        qg_wire_msg m = {.kind = QG_WIRE_PG_QUERY, .sql = sql, .len = strlen(sql)};
        qg_wire_buf r = {0};
        qg_wire_replacement(&c, &m, "quoteguard: blocked test", NULL, &r);
        put(expect, r.data, r.len);
        qg_wire_buf_free(&r);
    } else {
        put(expect, one.data, one.len);
    }
    qg_wire_buf_free(&one);
}

/* A PG session: startup, simple queries, an extended-protocol round with a
 * Parse, a long query. */
static void pg_session(qg_wire_buf *stream, qg_wire_buf *expect, unsigned *queries)
{
    static const char startup[] = "user\0qg\0database\0qg\0\0";
    qg_wire_buf s = {0};
    put_be32(&s, (uint32_t)sizeof startup - 1 + 8);
    put_be32(&s, 0x00030000);
    put(&s, startup, sizeof startup - 1);
    put(stream, s.data, s.len);
    put(expect, s.data, s.len);
    qg_wire_buf_free(&s);
    pg_query(stream, expect, "SELECT 1");
    pg_query(stream, expect, "SELECT 'EVIL'");
    pg_query(stream, expect, "SELECT 2");
    /* Parse "s1" with one parameter type, Bind, Execute, Sync */
    static const char parse[] = "s1\0SELECT $1 || 'EVIL'\0\0\1\0\0\0\x19";
    qg_wire_buf p = {0};
    pg_msg(&p, 'P', parse, sizeof parse - 1);
    put(stream, p.data, p.len);
    qg_wire_conn c;
    qg_wire_conn_init(&c, QG_WIRE_PG);
    qg_wire_msg m = {.kind = QG_WIRE_PG_PARSE, .sql = "", .name = "s1", .name_len = 2};
    qg_wire_buf r = {0};
    qg_wire_replacement(&c, &m, "quoteguard: blocked test", NULL, &r);
    put(expect, r.data, r.len);
    qg_wire_buf_free(&r);
    qg_wire_buf_free(&p);
    qg_wire_buf rest = {0};
    static const char bind[] = "\0s1\0\0\0\0\1\0\0\0\1x\0\0";
    pg_msg(&rest, 'B', bind, sizeof bind - 1);
    pg_msg(&rest, 'E', "\0\0\0\0\0", 5);
    pg_msg(&rest, 'S', "", 0);
    put(stream, rest.data, rest.len);
    put(expect, rest.data, rest.len);
    qg_wire_buf_free(&rest);
    char longq[3000];
    memset(longq, ' ', sizeof longq);
    memcpy(longq, "SELECT", 6);
    longq[sizeof longq - 1] = '\0';
    pg_query(stream, expect, longq);
    *queries = 5;
}

static void my_packet(qg_wire_buf *b, uint8_t seq, const void *payload, size_t len)
{
    uint8_t h[4] = {(uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16), seq};
    put(b, h, 4);
    put(b, payload, len);
}

/* A MySQL command of n payload bytes (the command byte included), cut into
 * 16 MiB packets as the protocol wants. */
static void my_command(qg_wire_buf *b, const uint8_t *payload, size_t n)
{
    uint8_t seq = 0;
    size_t off = 0;
    for (;;) {
        size_t len = n - off < 0xffffff ? n - off : 0xffffff;
        my_packet(b, seq++, payload + off, len);
        off += len;
        if (len < 0xffffff)
            break;
    }
}

static void my_query(qg_wire_buf *stream, qg_wire_buf *expect, uint8_t command, const char *sql,
                     size_t len)
{
    uint8_t *payload = malloc(len + 1);
    payload[0] = command;
    memcpy(payload + 1, sql, len);
    qg_wire_buf one = {0};
    my_command(&one, payload, len + 1);
    put(stream, one.data, one.len);
    if (memmem(sql, len, "EVIL", 4)) {
        qg_wire_conn c;
        qg_wire_conn_init(&c, QG_WIRE_MYSQL);
        qg_wire_msg m = {.kind = command == 3 ? QG_WIRE_MY_QUERY : QG_WIRE_MY_PREPARE};
        qg_wire_buf r = {0};
        qg_wire_replacement(&c, &m, "quoteguard: blocked test", NULL, &r);
        put(expect, r.data, r.len);
        qg_wire_buf_free(&r);
    } else {
        put(expect, one.data, one.len);
    }
    qg_wire_buf_free(&one);
    free(payload);
}

static void my_handshake(qg_wire_buf *stream, qg_wire_buf *expect)
{
    uint8_t response[64] = {0};
    uint32_t caps = 0x200 | 0x8000 | 0x80000; /* PROTOCOL_41, SECURE_CONNECTION, PLUGIN_AUTH */
    memcpy(response, &caps, 4);
    response[8] = 28; /* gbk_chinese_ci */
    memcpy(response + 32, "root\0", 5);
    qg_wire_buf one = {0};
    my_packet(&one, 1, response, 40);
    put(stream, one.data, one.len);
    put(expect, one.data, one.len);
    qg_wire_buf_free(&one);
}

/* What the server says before the client's commands: greeting, auth OK. */
static void my_server_hello(qg_wire_conn *c)
{
    qg_wire_buf in = {0};
    uint8_t greeting[40] = {10, '1', '0', '.', '1', '1', 0};
    my_packet(&in, 0, greeting, sizeof greeting);
    static const uint8_t ok[] = {0, 0, 0, 2, 0, 0, 0};
    my_packet(&in, 2, ok, sizeof ok);
    qg_wire_read(c, in.data, in.len);
    qg_wire_buf_free(&in);
}

/* ------------------------------------------------------------- driving */

/* Feeds the stream in writes of the sizes `cuts` gives (cycled), retrying
 * as a program does after a short count or EAGAIN; true when what the
 * sink got equals expect. */
static bool drive(qg_wire_proto proto, const qg_wire_buf *stream, const qg_wire_buf *expect,
                  const size_t *cuts, size_t ncuts, size_t max_per_call, bool eagain,
                  unsigned *checks)
{
    qg_wire_conn c;
    qg_wire_conn_init(&c, proto);
    sink s = {.max_per_call = max_per_call, .eagain_every_other = eagain};
    qg_wire_io io = {sink_send, sink_check, unread_pass, &s};
    size_t off = 0, k = 0;
    unsigned spins = 0;
    bool hello = proto != QG_WIRE_MYSQL;
    while (off < stream->len && spins < 100000000) {
        if (!hello && off >= 44) { /* the handshake response went */
            my_server_hello(&c);
            hello = true;
        }
        size_t n = cuts[k++ % ncuts];
        if (n > stream->len - off)
            n = stream->len - off;
        if (!hello && off + n > 44) /* no command before the server's OK */
            n = 44 - off;
        ssize_t r = qg_wire_write(&c, &io, stream->data + off, n);
        spins++;
        if (r < 0) {
            if (errno != EAGAIN)
                break;
            k--; /* retry the same write */
            continue;
        }
        if (r == 0 || (size_t)r > n)
            break;
        off += (size_t)r;
        if ((size_t)r < n)
            k--; /* a short count: the rest is written again (maybe cut anew) */
    }
    /* a program's last write returned only once its bytes were taken */
    bool same = off == stream->len && c.hold.len == 0 && c.owed.len == 0 &&
                s.got.len == expect->len && memcmp(s.got.data, expect->data, expect->len) == 0;
    *checks = s.checks;
    qg_wire_buf_free(&s.got);
    qg_wire_conn_release(&c);
    return same;
}

static void every_split(const char *what, qg_wire_proto proto, const qg_wire_buf *stream,
                        const qg_wire_buf *expect, unsigned queries)
{
    unsigned failures = 0, extra_checks = 0, checks;
    size_t whole = stream->len;
    for (size_t cut = 1; cut < stream->len; cut++) {
        size_t cuts[2] = {cut, whole};
        if (!drive(proto, stream, expect, cuts, 2, 0, false, &checks))
            failures++;
        if (checks != queries)
            extra_checks++;
    }
    tap_ok(failures == 0, "%s: two writes split at each of %zu points: the server gets the stream "
                          "with the blocked queries replaced (%u differ)",
           what, stream->len - 1, failures);
    tap_ok(extra_checks == 0, "%s: each query checked exactly once at every split (%u not)",
           what, extra_checks);

    failures = 0;
    extra_checks = 0;
    for (size_t chunk = 1; chunk <= 64; chunk++) {
        size_t cuts[1] = {chunk};
        if (!drive(proto, stream, expect, cuts, 1, 0, false, &checks))
            failures++;
    }
    tap_ok(failures == 0, "%s: writes of 1..64 bytes each: same stream (%u differ)", what,
           failures);

    failures = 0;
    for (size_t limit = 1; limit <= 64; limit++) {
        size_t cuts[3] = {7, whole, 3};
        if (!drive(proto, stream, expect, cuts, 3, limit, false, &checks))
            failures++;
        if (checks != queries)
            extra_checks++;
        if (!drive(proto, stream, expect, cuts, 3, limit, true, &checks))
            failures++;
        if (checks != queries)
            extra_checks++;
    }
    tap_ok(failures == 0, "%s: a kernel taking 1..64 bytes a call, and EAGAIN every other call: "
                          "same stream (%u differ)",
           what, failures);
    tap_ok(extra_checks == 0, "%s: short writes and EAGAIN never check a query twice (%u did)",
           what, extra_checks);
}

static void test_pg(void)
{
    qg_wire_buf stream = {0}, expect = {0};
    unsigned queries;
    pg_session(&stream, &expect, &queries);
    tap_ok(stream.len != expect.len || memcmp(stream.data, expect.data, stream.len) != 0,
           "pg: the blocked queries make the expected stream differ from the client's");
    every_split("pg", QG_WIRE_PG, &stream, &expect, queries);
    qg_wire_buf_free(&stream);
    qg_wire_buf_free(&expect);
}

static void test_mysql(void)
{
    qg_wire_buf stream = {0}, expect = {0};
    my_handshake(&stream, &expect);
    my_query(&stream, &expect, 3, "SELECT 1", 8);
    my_query(&stream, &expect, 3, "SELECT 'EVIL'", 13);
    my_packet(&stream, 0, "\x0e", 1); /* COM_PING */
    my_packet(&expect, 0, "\x0e", 1);
    my_query(&stream, &expect, 0x16, "SELECT ? FROM EVIL", 18);
    my_query(&stream, &expect, 3, "SELECT 2", 8);
    every_split("mysql", QG_WIRE_MYSQL, &stream, &expect, 4);
    qg_wire_buf_free(&stream);
    qg_wire_buf_free(&expect);
}

/* Queries longer than one 16 MiB packet, clean and blocked, in writes of
 * 1 MiB and through a kernel that takes 300 KB a call. */
static void test_mysql_large(void)
{
    size_t len = (16u << 20) + 12345;
    char *sql = malloc(len);
    memset(sql, ' ', len);
    memcpy(sql, "SELECT 1", 8);
    for (int evil = 0; evil < 2; evil++) {
        if (evil)
            memcpy(sql + len - 10, "'EVIL'", 6);
        qg_wire_buf stream = {0}, expect = {0};
        my_handshake(&stream, &expect);
        my_query(&stream, &expect, 3, sql, len);
        my_query(&stream, &expect, 3, "SELECT 2", 8);
        size_t cuts[2] = {1u << 20, 77777};
        unsigned checks;
        bool same = drive(QG_WIRE_MYSQL, &stream, &expect, cuts, 2, 300000, true, &checks);
        tap_ok(same && checks == 2, "mysql: a %zu-byte query in two packets, %s: the server "
                                    "gets %s (%u checks)",
               len, evil ? "blocked" : "clean", evil ? "one replacement packet" : "it as it is",
               checks);
        qg_wire_buf_free(&stream);
        qg_wire_buf_free(&expect);
    }
    free(sql);
}

/* ------------------------------------------------------------ the server */

static void test_pg_parameter_status(void)
{
    qg_wire_buf in = {0};
    pg_msg(&in, 'R', "\0\0\0\0", 4);
    static const char enc[] = "client_encoding\0SJIS\0";
    pg_msg(&in, 'S', enc, sizeof enc - 1);
    static const char scs[] = "standard_conforming_strings\0off\0";
    pg_msg(&in, 'S', scs, sizeof scs - 1);
    pg_msg(&in, 'Z', "I", 1);
    unsigned wrong = 0;
    for (size_t cut = 0; cut <= in.len; cut++) {
        qg_wire_conn c;
        qg_wire_conn_init(&c, QG_WIRE_PG);
        c.session.std_strings = true;
        qg_wire_read(&c, in.data, cut);
        qg_wire_read(&c, in.data + cut, in.len - cut);
        wrong += strcmp(c.session.encoding, "SJIS") != 0 || c.session.std_strings;
        qg_wire_conn_release(&c);
    }
    tap_ok(wrong == 0, "pg: ParameterStatus read at every split: client_encoding SJIS, "
                       "standard_conforming_strings off (%u wrong)",
           wrong);
    qg_wire_buf_free(&in);
}

static void test_mysql_ok_status(void)
{
    qg_wire_conn c;
    qg_wire_conn_init(&c, QG_WIRE_MYSQL);
    qg_wire_buf out = {0}, ignored = {0};
    my_handshake(&out, &ignored);
    sink s = {0};
    qg_wire_io io = {sink_send, sink_check, unread_pass, &s};
    qg_wire_write(&c, &io, out.data, out.len);
    tap_ok(strcmp(c.session.encoding, "gbk") == 0,
           "mysql: the handshake response's collation 28 gives gbk");
    my_server_hello(&c);
    out.len = 0;
    static const char set[] = "SET sql_mode=CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')";
    uint8_t command[sizeof set] = {3};
    memcpy(command + 1, set, sizeof set - 1);
    my_packet(&out, 0, command, sizeof command);
    qg_my_state gbk = {.charset = "gbk"};
    qg_my_plan plan;
    qg_my_plan_init(&plan, set, sizeof set - 1);
    qg_wire_my_query_effect(&c.my, &plan, &gbk);
    qg_wire_write(&c, &io, out.data, out.len);
    static const uint8_t ok[] = {0, 0, 0, 0x02, 0x02, 0, 0}; /* status: NO_BACKSLASH_ESCAPES */
    qg_wire_buf in = {0};
    my_packet(&in, 1, ok, sizeof ok);
    for (size_t i = 0; i < in.len; i++)
        qg_wire_read(&c, in.data + i, 1);
    tap_ok(c.session.no_backslash_escapes,
           "mysql: the OK of a SET sql_mode = expression, read a byte at a time, sets "
           "NO_BACKSLASH_ESCAPES from its status");
    qg_wire_buf_free(&in);
    qg_wire_buf_free(&out);
    qg_wire_buf_free(&ignored);
    qg_wire_buf_free(&s.got);
    qg_wire_conn_release(&c);
}

/* A MariaDB session whose client asked for session tracking. */
static void my_tracked_session(qg_wire_conn *c, sink *s)
{
    qg_wire_conn_init(c, QG_WIRE_MYSQL);
    /* CLIENT_MYSQL, PROTOCOL_41, SECURE_CONNECTION; SESSION_TRACK */
    static const uint8_t caps[4] = {0x01, 0x82, 0x80, 0x00};
    uint8_t greeting[64] = {10};
    static const char version[] = "5.5.5-10.11.19-MariaDB";
    memcpy(greeting + 1, version, sizeof version);
    size_t at = 1 + sizeof version + 4 + 8 + 1;
    memcpy(greeting + at, caps, 2);
    memcpy(greeting + at + 5, caps + 2, 2);
    uint8_t response[64] = {0};
    memcpy(response, caps, 4);
    response[8] = 45; /* utf8mb4_general_ci */
    memcpy(response + 32, "root\0", 5);
    static const uint8_t ok[] = {0, 0, 0, 2, 0, 0, 0, 0};
    qg_wire_buf in = {0}, out = {0};
    my_packet(&in, 0, greeting, sizeof greeting);
    qg_wire_read(c, in.data, in.len);
    my_packet(&out, 1, response, 40);
    qg_wire_io io = {sink_send, sink_check, unread_pass, s};
    qg_wire_write(c, &io, out.data, out.len);
    in.len = 0;
    my_packet(&in, 2, ok, sizeof ok);
    qg_wire_read(c, in.data, in.len);
    qg_wire_buf_free(&in);
    qg_wire_buf_free(&out);
}

/* An OK packet: status bits, and a report of character_set_client unless
 * `charset` is NULL. */
static void my_ok(qg_wire_buf *b, uint8_t seq, unsigned status, const char *charset)
{
    uint8_t p[128] = {0, 0, 0, (uint8_t)status, (uint8_t)(status >> 8), 0, 0, 0};
    size_t n = 8;
    if (charset) {
        p[4] |= 0x40; /* SESSION_STATE_CHANGED */
        size_t name = strlen("character_set_client"), value = strlen(charset);
        size_t entry = 1 + name + 1 + value;
        p[n++] = (uint8_t)(2 + entry);
        p[n++] = 0; /* SESSION_TRACK_SYSTEM_VARIABLES */
        p[n++] = (uint8_t)entry;
        p[n++] = (uint8_t)name;
        memcpy(p + n, "character_set_client", name);
        n += name;
        p[n++] = (uint8_t)value;
        memcpy(p + n, charset, value);
        n += value;
    }
    my_packet(b, seq, p, n);
}

/* The client writes `sql`; the server answers with the OK packets given. */
static void my_exchange(qg_wire_conn *c, sink *s, const char *sql, const qg_wire_buf *answer)
{
    qg_my_state st;
    size_t count;
    if (!qg_wire_my_states(&c->my, &c->session, &st, 1, &count)) {
        st = (qg_my_state){.flags = 0};
        qg_my_state_set_charset(&st, c->session.encoding, strlen(c->session.encoding));
    }
    size_t len = strlen(sql);
    qg_my_plan plan;
    qg_my_plan_init(&plan, sql, len);
    qg_wire_my_query_effect(&c->my, &plan, &st);
    qg_wire_buf out = {0};
    uint8_t command[256] = {3};
    memcpy(command + 1, sql, len);
    my_packet(&out, 0, command, len + 1);
    qg_wire_io io = {sink_send, sink_check, unread_pass, s};
    qg_wire_write(c, &io, out.data, out.len);
    qg_wire_read(c, answer->data, answer->len);
    qg_wire_buf_free(&out);
}

/* The one state a query may meet now is `charset` with `flags`; with
 * `charset` NULL: the state is the server's alone to know. */
static bool my_state_is(const qg_wire_conn *c, const char *charset, unsigned flags)
{
    qg_my_state st[4];
    size_t count;
    if (!qg_wire_my_states(&c->my, &c->session, st, 4, &count))
        return !charset;
    return charset && count == 1 && strcmp(st[0].charset, charset) == 0 && st[0].flags == flags;
}

enum { MY_MORE = 0x0008, MY_NBE = 0x0200, MY_ANSI = 0x8000, MY_AUTOCOMMIT = 0x0002 };
/* Not a status bit: the answer is an error packet. */
#define MY_ERROR 0x10000u

/* A query, the OK packets of its answer (a second one when `more` is set
 * in the first's status; `report`: the character_set_client reported), and
 * the state it leaves. */
typedef struct routine_step {
    const char *sql;
    unsigned status1;
    const char *report1;
    unsigned status2;
    const char *report2;
    const char *charset; /* NULL: unknown */
    unsigned flags;
    const char *what;
} routine_step;

static void test_mysql_routines(void)
{
    static const routine_step steps[] = {
        {"SET NAMES gbk", MY_AUTOCOMMIT, "gbk", 0, NULL, "gbk", 0, "SET NAMES gbk, reported"},
        /* a procedure that runs SET NAMES latin1 and a SELECT: the result's
         * end reports latin1 from inside it, the return is not reported */
        {"CALL p()", MY_AUTOCOMMIT | MY_MORE, "latin1", MY_AUTOCOMMIT, NULL, "gbk", 0,
         "after CALL the caller's gbk, not the report from inside the procedure"},
        {"CALL p()", MY_AUTOCOMMIT, "gbk", 0, NULL, "gbk", 0,
         "a report at the end of a CALL's answer is taken"},
        /* a procedure that sets NO_BACKSLASH_ESCAPES leaves the bit, not the mode */
        {"CALL p_mode()", MY_AUTOCOMMIT | MY_NBE, NULL, 0, NULL, "gbk", 0,
         "the status bit a procedure left is not taken"},
        {"SELECT 1", MY_AUTOCOMMIT | MY_NBE, NULL, 0, NULL, "gbk", 0,
         "nor after the next statement"},
        {"SET sql_mode = @saved", MY_AUTOCOMMIT | MY_ANSI, NULL, 0, NULL, "gbk", QG_ANSI_QUOTES,
         "a SET of sql_mode to an expression: the bits after it"},
        {"SET STATEMENT max_statement_time = 1 FOR SET sql_mode = @saved",
         MY_AUTOCOMMIT | MY_ANSI, NULL, 0, NULL, "gbk", QG_ANSI_QUOTES,
         "the same inside SET STATEMENT"},
        /* a statement prepared out of sight, run by name */
        {"EXECUTE s", MY_AUTOCOMMIT | MY_ANSI, NULL, 0, NULL, NULL, 0,
         "the character set is the server's to say"},
        {"SET NAMES gbk", MY_AUTOCOMMIT | MY_ANSI, "gbk", 0, NULL, "gbk", QG_ANSI_QUOTES,
         "the quoting modes stayed: the bits after the EXECUTE were as before"},
        {"EXECUTE s", MY_AUTOCOMMIT | MY_NBE, NULL, 0, NULL, NULL, 0,
         "the character set is the server's to say"},
        {"SET NAMES gbk", MY_AUTOCOMMIT | MY_NBE, "gbk", 0, NULL, NULL, 0,
         "the quoting modes are unknown: the bits after the EXECUTE changed"},
        {"SET NAMES utf8mb4, sql_mode = ''", MY_AUTOCOMMIT, "utf8mb4", 0, NULL, "utf8mb4", 0,
         "known again after SET NAMES and sql_mode"},
        /* several statements: a report before the end counts where nothing
         * after it can change the value unreported */
        {"SET character_set_client = @v; DO 1", MY_AUTOCOMMIT | MY_MORE, "big5", MY_AUTOCOMMIT,
         NULL, "big5", 0, "a report before the end of two statements"},
        {"SET character_set_client = @v; SET @@character_set_client = @w",
         MY_AUTOCOMMIT | MY_MORE, "gbk", MY_AUTOCOMMIT, NULL, NULL, 0,
         "not when a SET @@name follows it"},
        /* a single statement that failed set no sql_mode (one it ran gives
         * it back as it ends) */
        {"SET NAMES utf8mb4", MY_AUTOCOMMIT, "utf8mb4", 0, NULL, "utf8mb4", 0,
         "known again"},
        {"EXECUTE s", MY_ERROR, NULL, 0, NULL, NULL, 0,
         "an error: the character set is the server's to say"},
        {"SET NAMES utf8mb4", MY_AUTOCOMMIT | MY_NBE, "utf8mb4", 0, NULL, "utf8mb4", 0,
         "the quoting modes stayed, whatever bits it left"},
    };
    qg_wire_conn c;
    sink s = {0};
    my_tracked_session(&c, &s);
    tap_ok(my_state_is(&c, "utf8mb4", 0), "mysql: a tracked session starts in utf8mb4");
    qg_wire_buf a = {0};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        const routine_step *st = &steps[i];
        a.len = 0;
        if (st->status1 == MY_ERROR)
            my_packet(&a, 1, "\xff\x28\x04#42000parse", 15);
        else
            my_ok(&a, 1, st->status1, st->report1);
        if (st->status1 & MY_MORE)
            my_ok(&a, 2, st->status2, st->report2);
        my_exchange(&c, &s, st->sql, &a);
        tap_ok(my_state_is(&c, st->charset, st->flags), "mysql: %s: %s", st->sql, st->what);
    }
    qg_wire_buf_free(&a);
    qg_wire_buf_free(&s.got);
    qg_wire_conn_release(&c);
}

/* ------------------------------------------------------------------ TLS */

/* What the TLS library's calls carry (front_wire_tls.c feeds them here):
 * the same stream, picked up where the plaintext one stopped. */
static void test_tls_switch(void)
{
    sink s = {0};
    qg_wire_io io = {sink_send, sink_check, unread_pass, &s};

    qg_wire_conn c;
    qg_wire_conn_init(&c, QG_WIRE_PG);
    static const uint8_t ssl_request[8] = {0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f};
    qg_wire_write(&c, &io, ssl_request, sizeof ssl_request);
    qg_wire_read(&c, (const uint8_t *)"S", 1);
    tap_ok(c.tls && !c.passthrough, "pg: SSLRequest answered 'S': the stream goes on inside TLS");
    qg_wire_buf stream = {0}, expect = {0};
    unsigned queries;
    pg_session(&stream, &expect, &queries);
    s.got.len = 0;
    qg_wire_write(&c, &io, stream.data, stream.len);
    tap_ok(s.got.len == expect.len && memcmp(s.got.data, expect.data, expect.len) == 0,
           "pg inside TLS: StartupMessage, then queries checked and the blocked ones replaced");
    qg_wire_buf in = {0};
    static const char enc[] = "client_encoding\0BIG5\0";
    pg_msg(&in, 'S', enc, sizeof enc - 1);
    qg_wire_read(&c, in.data, in.len);
    tap_ok(strcmp(c.session.encoding, "BIG5") == 0,
           "pg inside TLS: ParameterStatus gives client_encoding");
    qg_wire_conn_release(&c);
    qg_wire_conn_init(&c, QG_WIRE_PG);
    qg_wire_write(&c, &io, ssl_request, sizeof ssl_request);
    qg_wire_read(&c, (const uint8_t *)"N", 1);
    tap_ok(!c.tls && !c.passthrough, "pg: SSLRequest answered 'N': plaintext goes on");
    qg_wire_conn_release(&c);
    qg_wire_conn_init(&c, QG_WIRE_PG);
    static const uint8_t gss_request[8] = {0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x30};
    qg_wire_write(&c, &io, gss_request, sizeof gss_request);
    qg_wire_read(&c, (const uint8_t *)"G", 1);
    tap_ok(!c.tls && c.passthrough, "pg: GSSENCRequest answered 'G': not followed");
    qg_wire_conn_release(&c);

    /* MySQL: greeting; SSL request (CLIENT_SSL, collation 28 gbk); inside
     * TLS the whole response (collation 95 cp932), OK, commands */
    qg_wire_conn_init(&c, QG_WIRE_MYSQL);
    in.len = 0;
    uint8_t greeting[40] = {10, '1', '0', '.', '1', '1', 0};
    my_packet(&in, 0, greeting, sizeof greeting);
    qg_wire_read(&c, in.data, in.len);
    uint8_t request[32] = {0};
    uint32_t caps = 0x200 | 0x800 | 0x8000 | 0x80000; /* PROTOCOL_41, SSL, SECURE_CONN, PLUGIN_AUTH */
    memcpy(request, &caps, 4);
    request[8] = 28;
    qg_wire_buf out = {0};
    my_packet(&out, 1, request, sizeof request);
    qg_wire_write(&c, &io, out.data, out.len);
    tap_ok(c.tls && !c.passthrough && strcmp(c.session.encoding, "gbk") == 0,
           "mysql: the SSL request (CLIENT_SSL) moves the stream inside TLS, collation 28 gbk");
    uint8_t response[40] = {0};
    memcpy(response, &caps, 4);
    response[8] = 95;
    memcpy(response + 32, "root\0", 5);
    out.len = 0;
    my_packet(&out, 2, response, sizeof response);
    qg_wire_write(&c, &io, out.data, out.len);
    tap_ok(strcmp(c.session.encoding, "cp932") == 0 && !c.passthrough,
           "mysql inside TLS: the handshake response (the client's second packet) is read");
    in.len = 0;
    static const uint8_t ok[] = {0, 0, 0, 2, 0, 0, 0};
    my_packet(&in, 3, ok, sizeof ok);
    qg_wire_read(&c, in.data, in.len);
    out.len = 0;
    expect.len = 0;
    my_query(&out, &expect, 3, "SELECT 'EVIL'", 13);
    s.got.len = 0;
    qg_wire_write(&c, &io, out.data, out.len);
    tap_ok(c.my_command_phase && s.got.len == expect.len &&
               memcmp(s.got.data, expect.data, expect.len) == 0,
           "mysql inside TLS: after the OK a blocked COM_QUERY is replaced");
    qg_wire_conn_release(&c);
    qg_wire_buf_free(&in);
    qg_wire_buf_free(&out);
    qg_wire_buf_free(&stream);
    qg_wire_buf_free(&expect);
    qg_wire_buf_free(&s.got);
}

static void test_recognition(void)
{
    static const uint8_t startup[8] = {0, 0, 0, 40, 0, 3, 0, 0};
    static const uint8_t ssl[8] = {0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f};
    tap_ok(qg_wire_looks_like_pg(startup, 8) && qg_wire_looks_like_pg(ssl, 8),
           "a StartupMessage and an SSLRequest are PostgreSQL");
    tap_ok(!qg_wire_looks_like_pg((const uint8_t *)"GET / HTTP/1.1\r\n", 16),
           "an HTTP request is not");
    static const uint8_t greeting[] = {40, 0, 0, 0, 10, '1', '1', '.', '0', 0};
    tap_ok(qg_wire_looks_like_mysql(greeting, sizeof greeting), "a protocol-10 greeting is MySQL");
    tap_ok(!qg_wire_looks_like_mysql((const uint8_t *)"HTTP/1.1 200 OK\r\n", 17),
           "an HTTP answer is not");

    /* a start split across calls: every prefix of a first message may
     * still become one; other bytes are given up at once */
    bool every = true;
    for (size_t n = 1; n < 8; n++)
        every = every && qg_wire_may_become_pg(startup, n) && qg_wire_may_become_pg(ssl, n);
    tap_ok(every, "every prefix of a StartupMessage or SSLRequest may become PostgreSQL");
    static const uint8_t cancel[7] = {0, 0, 0, 16, 0x04, 0xd2, 0x16};
    static const uint8_t long_ssl[7] = {0, 0, 0, 40, 0x04, 0xd2, 0x16};
    tap_ok(qg_wire_may_become_pg(cancel, 7) && !qg_wire_may_become_pg(long_ssl, 7),
           "a request code needs its request's length");
    tap_ok(!qg_wire_may_become_pg((const uint8_t *)"GET", 3) &&
               !qg_wire_may_become_pg((const uint8_t[4]){0, 0, 0, 4}, 4) &&
               !qg_wire_may_become_pg((const uint8_t[5]){0, 0, 0, 40, 9}, 5),
           "text, a length under 8, an unknown code cannot");
    every = true;
    for (size_t n = 1; n < 6; n++)
        every = every && qg_wire_may_become_mysql(greeting, n);
    tap_ok(every, "every prefix of a greeting may become MySQL");
    tap_ok(!qg_wire_may_become_mysql((const uint8_t *)"HTTP", 4) &&
               !qg_wire_may_become_mysql((const uint8_t[5]){40, 0, 0, 0, 9}, 5),
           "text and protocol 9 cannot");

    /* the head that passed before recognition: the rest of the startup
     * passes, the query after it is read */
    qg_wire_conn c;
    qg_wire_conn_init(&c, QG_WIRE_PG);
    qg_wire_already_sent(&c, startup, 8, 4);
    tap_ok(c.out.left == 36 && c.out.startup && c.out_pos == 4,
           "4 bytes of a 40-byte StartupMessage already sent: 36 left of it");
    qg_wire_conn_release(&c);
}

/* What the check of the query "SELECT 'probe'" saw of the answers due. */
typedef struct probe {
    unsigned seen;
    uint32_t unanswered;
    bool sjis_pending, unknown_pending;
} probe;

static ssize_t probe_send(void *ctx, const uint8_t *p, size_t n)
{
    (void)ctx, (void)p;
    return (ssize_t)n;
}

static bool probe_check(void *ctx, qg_wire_conn *c, const qg_wire_msg *m, qg_wire_buf *out)
{
    (void)out;
    probe *pr = ctx;
    if (m->len == 14 && memcmp(m->sql, "SELECT 'probe'", 14) == 0) {
        pr->seen++;
        pr->unanswered = c->pg_unanswered;
        pr->sjis_pending = false;
        for (unsigned i = 0; i < c->pg_pending.encoding_count; i++)
            pr->sjis_pending |= strcmp(c->pg_pending.encodings[i], "SJIS") == 0;
        pr->unknown_pending = c->pg_pending.encoding_unknown;
    }
    return true;
}

/* A stream of messages written before any answer, cut at every point: the
 * probe query is checked once, with the answers due and the states the
 * messages ahead of it may leave the same at every cut. */
static void pipeline_case(const char *what, const qg_wire_buf *stream, uint32_t unanswered,
                          bool sjis, bool unknown)
{
    unsigned wrong = 0;
    for (size_t cut = 1; cut <= stream->len; cut++) {
        qg_wire_conn c;
        qg_wire_conn_init(&c, QG_WIRE_PG);
        probe pr = {0};
        qg_wire_io io = {probe_send, probe_check, unread_pass, &pr};
        for (size_t off = 0; off < stream->len;) {
            size_t n = cut < stream->len - off ? cut : stream->len - off;
            ssize_t r = qg_wire_write(&c, &io, stream->data + off, n);
            if (r <= 0)
                break;
            off += (size_t)r;
        }
        if (pr.seen != 1 || pr.unanswered != unanswered || pr.sjis_pending != sjis ||
            pr.unknown_pending != unknown)
            wrong++;
        qg_wire_conn_release(&c);
    }
    tap_ok(wrong == 0, "%s: at every cut (%u wrong)", what, wrong);
}

/* A query written on a socket whose start was not seen. */
static void test_midstream_query(void)
{
    static const uint8_t query[] = "Q\0\0\0\x0dSELECT 1";
    tap_ok(qg_wire_midstream_query(query, sizeof query - 1, sizeof query),
           "mid-stream: a whole PostgreSQL Query is a query");
    tap_ok(!qg_wire_midstream_query(query, sizeof query - 1, sizeof query - 1),
           "mid-stream: not while its message runs past the write");
    static const uint8_t parse[] = "P\0\0\0\x10\0SELECT $1\0\0";
    tap_ok(qg_wire_midstream_query(parse, sizeof parse - 1, sizeof parse - 1),
           "mid-stream: a whole Parse is a query");
    tap_ok(!qg_wire_midstream_query((const uint8_t *)"QUIT\r\n", 6, 6) &&
               !qg_wire_midstream_query((const uint8_t *)"POST / HTTP/1.1\r\n", 17, 17) &&
               !qg_wire_midstream_query((const uint8_t *)"Q inherited", 11, 11),
           "mid-stream: text that begins with Q or P is not");
    static const uint8_t com_query[] = {9, 0, 0, 0, 0x03, 'S', 'E', 'L', 'E', 'C', 'T', ' ', '1'};
    tap_ok(qg_wire_midstream_query(com_query, sizeof com_query, sizeof com_query),
           "mid-stream: a MySQL COM_QUERY at sequence 0 is a query");
    static const uint8_t answer[] = {9, 0, 0, 1, 0x03, 'S', 'E', 'L', 'E', 'C', 'T', ' ', '1'};
    static const uint8_t greeting[] = {40, 0, 0, 0, 10, '1', '1', '.', '0', 0};
    static const uint8_t data_row[] = {'D', 0, 0, 0, 11, 0, 1, 0, 0, 0, 1, 'x'};
    tap_ok(!qg_wire_midstream_query(answer, sizeof answer, sizeof answer) &&
               !qg_wire_midstream_query(greeting, sizeof greeting, sizeof greeting) &&
               !qg_wire_midstream_query(data_row, sizeof data_row, sizeof data_row),
           "mid-stream: what a server sends is not (a packet past sequence 0, a greeting, a DataRow)");
}

static void test_pg_pipeline(void)
{
    static const char startup[] = "user\0qg\0client_encoding\0UTF8\0\0";
    qg_wire_buf s = {0};
    put_be32(&s, (uint32_t)sizeof startup - 1 + 8);
    put_be32(&s, 0x00030000);
    put(&s, startup, sizeof startup - 1);
    qg_wire_buf simple = {0}, extended = {0}, bare = {0};
    put(&simple, s.data, s.len);
    pg_msg(&simple, 'Q', "SET client_encoding TO 'SJIS'", 30);
    pg_msg(&simple, 'Q', "SELECT 'probe'", 15);
    pipeline_case("Query(SET client_encoding) before the probe: startup and SET unanswered, "
                  "SJIS among the states",
                  &simple, 2, true, false);

    put(&extended, s.data, s.len);
    pg_msg(&extended, 'P', "\0SET client_encoding TO 'SJIS'\0\0", 33);
    pg_msg(&extended, 'B', "\0\0\0\0\0\0\0", 7);
    pg_msg(&extended, 'E', "\0\0\0\0", 5);
    pg_msg(&extended, 'S', "", 0);
    pg_msg(&extended, 'Q', "SELECT 'probe'", 15);
    pipeline_case("the SET as Parse/Bind/Execute/Sync: its Bind of the statement just parsed "
                  "adds nothing unknown",
                  &extended, 2, true, false);

    static const char no_encoding[] = "user\0qg\0\0";
    put_be32(&bare, (uint32_t)sizeof no_encoding - 1 + 8);
    put_be32(&bare, 0x00030000);
    put(&bare, no_encoding, sizeof no_encoding - 1);
    pg_msg(&bare, 'Q', "SELECT 'probe'", 15);
    pipeline_case("a query with a StartupMessage that names no client_encoding: unknown", &bare,
                  1, false, true);

    qg_wire_conn c;
    qg_wire_conn_init(&c, QG_WIRE_PG);
    probe pr = {0};
    qg_wire_io io = {probe_send, probe_check, unread_pass, &pr};
    qg_wire_write(&c, &io, simple.data, simple.len - 20); /* startup and the SET */
    static const uint8_t ready[] = {'Z', 0, 0, 0, 5, 'I'};
    qg_wire_read(&c, ready, sizeof ready);
    qg_wire_read(&c, ready, sizeof ready);
    qg_wire_write(&c, &io, simple.data + simple.len - 20, 20);
    tap_ok(pr.seen == 1 && pr.unanswered == 0 && !pr.sjis_pending,
           "after a ReadyForQuery for each, nothing is due and the states are the reported one");
    qg_wire_conn_release(&c);
    qg_wire_buf_free(&s);
    qg_wire_buf_free(&simple);
    qg_wire_buf_free(&extended);
    qg_wire_buf_free(&bare);
}

/* ------------------------------------------------------- not read */

/* A MySQL greeting payload offering caps (version "10.11"). */
static void my_greeting_caps(uint8_t greeting[40], uint32_t caps)
{
    static const uint8_t head[7] = {10, '1', '0', '.', '1', '1', 0};
    memset(greeting, 0, 40);
    memcpy(greeting, head, sizeof head);
    greeting[20] = (uint8_t)caps; /* after the NUL at 6: 4 + 8 + 1 */
    greeting[21] = (uint8_t)(caps >> 8);
    greeting[22] = 8; /* latin1 */
    greeting[25] = (uint8_t)(caps >> 16);
    greeting[26] = (uint8_t)(caps >> 24);
}

/* A connection the framing cannot follow any more: with the front's
 * refusal nothing from that point is sent and the write fails with EACCES;
 * with its leave (audit) every byte passes as before. */
static void test_unread(void)
{
    enum { COMPRESS = 0x20, ZSTD = 1 << 26, BASE = 0x200 | 0x8000 | 0x80000 };
    for (int refuse = 0; refuse <= 1; refuse++) {
        const char *how = refuse ? "refused" : "passes (audit)";
        sink s = {0};
        qg_wire_io io = {sink_send, sink_check, refuse ? unread_refuse : unread_pass, &s};
        qg_wire_conn c;

        /* MySQL: the server offers compression, the client asks for it */
        qg_wire_conn_init(&c, QG_WIRE_MYSQL);
        qg_wire_buf in = {0}, out = {0};
        uint8_t greeting[40];
        my_greeting_caps(greeting, BASE | COMPRESS);
        my_packet(&in, 0, greeting, sizeof greeting);
        qg_wire_read(&c, in.data, in.len);
        uint8_t response[40] = {0};
        uint32_t caps = BASE | COMPRESS;
        memcpy(response, &caps, 4);
        response[8] = 28;
        memcpy(response + 32, "root\0", 5);
        my_packet(&out, 1, response, sizeof response);
        ssize_t r = 0;
        for (size_t off = 0; off < out.len && r >= 0; off += (size_t)r) /* a byte a call */
            r = qg_wire_write(&c, &io, out.data + off, 1);
        tap_ok(c.passthrough && c.unread == QG_WIRE_UNREAD_COMPRESSED,
               "mysql compression agreed: the connection is no longer read (compressed)");
        if (refuse) {
            static const char user[] = QG_WIRE_REFUSED_LOGIN_USER;
            uint32_t sent_caps = 0;
            if (s.got.len >= 8)
                memcpy(&sent_caps, s.got.data + 4, 4);
            tap_ok(r == 1 && s.got.len == out.len + sizeof user - 1 - 4 &&
                       qg_wire_le24(s.got.data) == s.got.len - 4 && s.got.data[3] == 1 &&
                       sent_caps == BASE &&
                       memcmp(s.got.data + 4 + 32, user, sizeof user) == 0 &&
                       memcmp(s.got.data + 4 + 4, response + 4, 28) == 0,
                   "mysql compression %s: the response, written a byte a call, goes as a login "
                   "without compression for the user '%s'",
                   how, user);
            errno = 0;
            r = qg_wire_write(&c, &io, out.data, 4);
            tap_ok(r == -1 && errno == EACCES, "mysql compression %s: a later write fails with EACCES",
                   how);
        } else {
            tap_ok(r == 1 && s.got.len == out.len && memcmp(s.got.data, out.data, out.len) == 0,
                   "mysql compression %s: the handshake response goes as it is", how);
        }
        qg_wire_conn_release(&c);

        /* compression the client did not ask for, or the server did not offer */
        for (int side = 0; side < 2; side++) {
            qg_wire_conn_init(&c, QG_WIRE_MYSQL);
            in.len = out.len = s.got.len = 0;
            my_greeting_caps(greeting, BASE | (side ? 0 : COMPRESS | ZSTD));
            my_packet(&in, 0, greeting, sizeof greeting);
            qg_wire_read(&c, in.data, in.len);
            caps = BASE | (side ? COMPRESS | ZSTD : 0);
            memcpy(response, &caps, 4);
            my_packet(&out, 1, response, sizeof response);
            r = qg_wire_write(&c, &io, out.data, out.len);
            tap_ok(!c.passthrough && r == (ssize_t)out.len && s.got.len == out.len,
                   "mysql %s: followed, the response sent (%s)",
                   side ? "client asks for compression the server did not offer"
                        : "server offers compression, the client does not ask",
                   how);
            qg_wire_conn_release(&c);
        }

        /* MySQL 8's zstd flag agreed is compression too */
        qg_wire_conn_init(&c, QG_WIRE_MYSQL);
        in.len = out.len = s.got.len = 0;
        my_greeting_caps(greeting, BASE | ZSTD);
        my_packet(&in, 0, greeting, sizeof greeting);
        qg_wire_read(&c, in.data, in.len);
        caps = BASE | ZSTD;
        memcpy(response, &caps, 4);
        my_packet(&out, 1, response, sizeof response);
        s.got.len = 0;
        r = qg_wire_write(&c, &io, out.data, out.len);
        tap_ok(c.unread == QG_WIRE_UNREAD_COMPRESSED && r == (ssize_t)out.len &&
                   (refuse ? s.got.len > 8 && (s.got.data[7] & 0x04) == 0
                           : s.got.len == out.len),
               "mysql zstd compression agreed: not read, %s", how);
        qg_wire_conn_release(&c);

        /* PostgreSQL GSSAPI encryption: the client's next bytes */
        qg_wire_conn_init(&c, QG_WIRE_PG);
        s.got.len = 0;
        static const uint8_t gss_request[8] = {0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x30};
        qg_wire_write(&c, &io, gss_request, sizeof gss_request);
        qg_wire_read(&c, (const uint8_t *)"G", 1);
        static const uint8_t token[6] = {0, 0, 0, 2, 0x60, 0x01};
        errno = 0;
        r = qg_wire_write(&c, &io, token, sizeof token);
        tap_ok(c.unread == QG_WIRE_UNREAD_GSSAPI &&
                   (refuse ? r == -1 && errno == EACCES && s.got.len == 8
                           : r == (ssize_t)sizeof token && s.got.len == 14),
               "pg GSSENCRequest answered 'G': the next write %s", how);
        qg_wire_conn_release(&c);

        /* a Query, then a message whose length cannot be (3 < 4), in one
         * write: the Query goes; from the broken message on, nothing */
        qg_wire_conn_init(&c, QG_WIRE_PG);
        s.got.len = 0;
        qg_wire_buf stream = {0};
        static const char startup[] = "\0\0\0\x11\0\x03\0\0user\0qg\0\0";
        put(&stream, startup, sizeof startup - 1);
        qg_wire_write(&c, &io, stream.data, stream.len);
        size_t before = s.got.len;
        stream.len = 0;
        pg_msg(&stream, 'Q', "SELECT 1", 9);
        size_t query_len = stream.len;
        static const uint8_t broken[5] = {'Q', 0, 0, 0, 3};
        put(&stream, broken, sizeof broken);
        put(&stream, "SELECT 2", 9);
        r = qg_wire_write(&c, &io, stream.data, stream.len);
        if (refuse) {
            tap_ok(r == (ssize_t)query_len && s.got.len == before + query_len,
                   "pg unframable message refused: the Query before it is sent, the write stops there");
            errno = 0;
            r = qg_wire_write(&c, &io, stream.data + query_len, stream.len - query_len);
            tap_ok(r == -1 && errno == EACCES && s.got.len == before + query_len,
                   "pg unframable message refused: the retry fails with EACCES, nothing sent");
        } else {
            tap_ok(r == (ssize_t)stream.len && s.got.len == before + stream.len,
                   "pg unframable message passes (audit): every byte sent");
        }
        qg_wire_conn_release(&c);
        qg_wire_buf_free(&stream);
        qg_wire_buf_free(&in);
        qg_wire_buf_free(&out);
        qg_wire_buf_free(&s.got);
    }
}

/* The greeting the client reads offers no compression when the front hides
 * it, however the reads cut it; the wire front keeps the server's offer. */
static void test_hide_compression(void)
{
    enum { COMPRESS = 0x20, ZSTD = 1 << 26, BASE = 0x200 | 0x8000 | 0x80000 };
    qg_wire_buf in = {0};
    uint8_t greeting[40];
    my_greeting_caps(greeting, BASE | COMPRESS | ZSTD);
    my_packet(&in, 0, greeting, sizeof greeting);
    static const uint8_t ok[] = {0, 0, 0, 2, 0, 0, 0};
    my_packet(&in, 2, ok, sizeof ok);
    for (size_t cut = 1; cut <= in.len; cut *= 3) {
        for (int hide = 0; hide <= 1; hide++) {
            qg_wire_conn c;
            qg_wire_conn_init(&c, QG_WIRE_MYSQL);
            c.hide_compression = hide;
            qg_wire_buf copy = {0};
            put(&copy, in.data, in.len);
            for (size_t off = 0; off < copy.len; off += cut) {
                size_t n = cut < copy.len - off ? cut : copy.len - off;
                qg_wire_read(&c, copy.data + off, n);
                qg_wire_my_hide_compression(&c, copy.data + off, n);
            }
            uint32_t low = copy.data[4 + 20] | (uint32_t)copy.data[4 + 21] << 8;
            uint32_t high = copy.data[4 + 25] | (uint32_t)copy.data[4 + 26] << 8;
            uint32_t client_sees = low | high << 16;
            bool changed_only_those = true;
            for (size_t i = 0; i < in.len; i++)
                if (i != 4 + 20 && i != 4 + 26 && copy.data[i] != in.data[i])
                    changed_only_those = false;
            if (hide)
                tap_ok(client_sees == BASE && changed_only_those &&
                           (c.my.server_caps & (COMPRESS | ZSTD)) == (COMPRESS | ZSTD),
                       "greeting read %zu bytes at a time: the client sees no compression offered, "
                       "the wire front the server's offer",
                       cut);
            else
                tap_ok(memcmp(copy.data, in.data, in.len) == 0,
                       "greeting read %zu bytes at a time, not hidden (audit): unchanged", cut);
            qg_wire_buf_free(&copy);
            qg_wire_conn_release(&c);
        }
    }
    qg_wire_buf_free(&in);
}

/* MySQL 8's query attributes (CLIENT_QUERY_ATTRIBUTES agreed): a
 * COM_QUERY's text is read after them, a blocked one is replaced by a
 * COM_QUERY that says it carries none, and one whose attributes cannot be
 * read is blocked. */
static void test_query_attributes(void)
{
    enum { BASE = 0x200 | 0x8000 | 0x80000, ATTRIBUTES = 1 << 27 };
    static const uint8_t attributes[] = {
        2, 1,                          /* two attributes, one set */
        0x02, 1,                       /* the second is NULL; types follow */
        253, 0, 5, 't', 'r', 'a', 'c', 'e', /* VAR_STRING "trace" */
        8, 0x80, 1, 'n',               /* unsigned LONGLONG "n" */
        4, 'E', 'V', 'I', 'L',         /* trace's value (n is NULL: none) */
    };
    static const char *const texts[] = {"SELECT 'ok'", "SELECT 'EVIL'"};
    for (int evil = 0; evil <= 1; evil++) {
        for (int known_type = 0; known_type <= 1; known_type++) {
            sink s = {0};
            qg_wire_io io = {sink_send, sink_check, unread_refuse, &s};
            qg_wire_conn c;
            qg_wire_conn_init(&c, QG_WIRE_MYSQL);
            qg_wire_buf in = {0}, out = {0};
            uint8_t greeting[40];
            my_greeting_caps(greeting, BASE | ATTRIBUTES);
            my_packet(&in, 0, greeting, sizeof greeting);
            static const uint8_t ok[] = {0, 0, 0, 2, 0, 0, 0};
            my_packet(&in, 2, ok, sizeof ok);
            uint8_t response[40] = {0};
            uint32_t caps = BASE | ATTRIBUTES;
            memcpy(response, &caps, 4);
            response[8] = 28;
            memcpy(response + 32, "root\0", 5);
            my_packet(&out, 1, response, sizeof response);
            qg_wire_read(&c, in.data, in.len - (4 + sizeof ok));
            qg_wire_write(&c, &io, out.data, out.len);
            qg_wire_read(&c, in.data + in.len - (4 + sizeof ok), 4 + sizeof ok);

            uint8_t payload[128] = {QG_MY_COM_QUERY};
            memcpy(payload + 1, attributes, sizeof attributes);
            if (!known_type)
                payload[1 + 4] = 20; /* trace's type: one no client sends */
            size_t text_len = strlen(texts[evil]);
            memcpy(payload + 1 + sizeof attributes, texts[evil], text_len);
            size_t len = 1 + sizeof attributes + text_len;
            out.len = s.got.len = 0;
            my_packet(&out, 0, payload, len);
            unsigned checks = s.checks;
            ssize_t r = qg_wire_write(&c, &io, out.data, out.len);
            bool passed = s.got.len == out.len && memcmp(s.got.data, out.data, out.len) == 0 &&
                          s.last_len == text_len;
            bool replaced = s.got.len > 7 && s.got.data[4] == QG_MY_COM_QUERY &&
                            s.got.data[5] == 0 && s.got.data[6] == 1 &&
                            !memmem(s.got.data, s.got.len, "EVIL", 4) &&
                            qg_wire_le24(s.got.data) == s.got.len - 4;
            tap_ok(r == (ssize_t)out.len && s.checks == checks + 1 &&
                       (known_type && !evil ? passed : replaced),
                   "mysql query attributes, %s type, %s text: %s", known_type ? "known" : "unknown",
                   evil ? "blocked" : "legit",
                   known_type && !evil ? "read and sent as it is"
                                       : "replaced by a COM_QUERY without attributes");
            qg_wire_buf_free(&in);
            qg_wire_buf_free(&out);
            qg_wire_buf_free(&s.got);
            qg_wire_conn_release(&c);
        }
    }
}

/* ------------------------------------------------ MySQL compression */

/* A frame: sequence number, payload compressed (or stored). */
static void z_frame(qg_wire_buf *b, uint8_t seq, const uint8_t *plain, size_t len, bool stored)
{
    uint8_t packed[512];
    uLongf packed_len = sizeof packed;
    if (!stored && compress(packed, &packed_len, plain, len) != Z_OK)
        stored = true;
    const uint8_t *payload = stored ? plain : packed;
    size_t payload_len = stored ? len : packed_len;
    size_t inflated = stored ? 0 : len;
    uint8_t h[7] = {(uint8_t)payload_len, (uint8_t)(payload_len >> 8), (uint8_t)(payload_len >> 16),
                    seq, (uint8_t)inflated, (uint8_t)(inflated >> 8), (uint8_t)(inflated >> 16)};
    put(b, h, 7);
    put(b, payload, payload_len);
}

/* A COM_QUERY packet of sql. */
static void z_query(qg_wire_buf *b, const char *sql)
{
    qg_wire_buf payload = {0};
    put(&payload, "\x03", 1);
    put(&payload, sql, strlen(sql));
    my_packet(b, 0, payload.data, payload.len);
    qg_wire_buf_free(&payload);
}

static const qg_wire_zlib *no_zlib(void)
{
    return NULL;
}

/* Greeting and response agreeing CLIENT_COMPRESS, then (with `ok`) the
 * login OK: the connection c is compressed from there on. */
static void z_handshake(qg_wire_conn *c, const qg_wire_io *io, qg_wire_zlib_loader load, bool ok)
{
    enum { COMPRESS = 0x20, BASE = 0x200 | 0x8000 | 0x80000 };
    qg_wire_conn_init(c, QG_WIRE_MYSQL);
    c->load_zlib = load;
    qg_wire_buf in = {0}, out = {0};
    uint8_t greeting[40];
    my_greeting_caps(greeting, BASE | COMPRESS);
    my_packet(&in, 0, greeting, sizeof greeting);
    qg_wire_read(c, in.data, in.len);
    uint8_t response[40] = {0};
    uint32_t caps = BASE | COMPRESS;
    memcpy(response, &caps, 4);
    response[8] = 28; /* gbk */
    memcpy(response + 32, "root\0", 5);
    my_packet(&out, 1, response, sizeof response);
    for (size_t off = 0; off < out.len;) { /* retried as a program does */
        ssize_t r = qg_wire_write(c, io, out.data + off, out.len - off);
        if (r > 0)
            off += (size_t)r;
        else if (r < 0 && errno != EAGAIN)
            break;
    }
    if (ok) {
        in.len = 0;
        static const uint8_t login_ok[] = {0, 0, 0, 2, 0, 0, 0};
        my_packet(&in, 2, login_ok, sizeof login_ok);
        qg_wire_read(c, in.data, in.len);
    }
    qg_wire_buf_free(&in);
    qg_wire_buf_free(&out);
}

/* The frames in b[0, n): each one's number and inflated contents joined. */
static bool z_unframe(const uint8_t *b, size_t n, qg_wire_buf *plain, qg_wire_buf *seqs)
{
    for (size_t off = 0; off < n;) {
        if (n - off < 7)
            return false;
        size_t payload = qg_wire_le24(b + off), inflated = qg_wire_le24(b + off + 4);
        if (n - off - 7 < payload)
            return false;
        put(seqs, b + off + 3, 1);
        if (inflated) {
            uint8_t out[512];
            uLongf out_len = sizeof out;
            if (uncompress(out, &out_len, b + off + 7, payload) != Z_OK || out_len != inflated)
                return false;
            put(plain, out, out_len);
        } else {
            put(plain, b + off + 7, payload);
        }
        off += 7 + payload;
    }
    return true;
}

/* Compressed frames written in every cut, through a kernel that takes a
 * few bytes a call and says EAGAIN: a passing query's frame goes byte for
 * byte; a blocked query cut across two frames goes as two stored frames of
 * the same numbers, the first not empty, carrying its replacement; each
 * query checked once.  The server's OK inside frames, cut anywhere, gives
 * its status bits. */
static void test_compressed(void)
{
    const qg_wire_zlib *lib = qg_zlib_load();
    tap_ok(lib != NULL, "zlib: libz.so.1 loads");
    if (!lib)
        return;
    qg_wire_buf frames = {0}, expect_plain = {0}, one = {0}, evil = {0};
    z_query(&one, "SELECT 1");
    z_frame(&frames, 0, one.data, one.len, false);
    size_t first = frames.len;
    z_query(&evil, "SELECT 'EVIL', 'a long enough text to be worth compressing, twice over'");
    size_t cut = evil.len / 2;
    z_frame(&frames, 0, evil.data, cut, false);
    z_frame(&frames, 1, evil.data + cut, evil.len - cut, true);
    size_t evil_end = frames.len;
    qg_wire_buf two = {0};
    z_query(&two, "SELECT 2");
    z_frame(&frames, 0, two.data, two.len, true);
    qg_wire_conn model;
    qg_wire_conn_init(&model, QG_WIRE_MYSQL);
    qg_wire_msg m = {.kind = QG_WIRE_MY_QUERY};
    qg_wire_buf replacement = {0};
    qg_wire_replacement(&model, &m, "quoteguard: blocked test", NULL, &replacement);
    qg_wire_conn_release(&model);

    static const size_t cuts[] = {1, 2, 3, 5, 7, 11, 64, 4096};
    bool all_ok = true;
    for (size_t ci = 0; ci < sizeof cuts / sizeof cuts[0]; ci++) {
        for (int kernel = 0; kernel < 2; kernel++) {
            sink s = {.max_per_call = kernel ? 3 : 0, .eagain_every_other = kernel};
            qg_wire_io io = {sink_send, sink_check, unread_pass, &s};
            qg_wire_conn c;
            z_handshake(&c, &io, qg_zlib_load, true);
            size_t handshake = s.got.len;
            s.checks = 0;
            size_t off = 0;
            unsigned spins = 0;
            while (off < frames.len && spins++ < 1000000) {
                size_t n = cuts[ci] < frames.len - off ? cuts[ci] : frames.len - off;
                ssize_t r = qg_wire_write(&c, &io, frames.data + off, n);
                if (r > 0)
                    off += (size_t)r;
            }
            const uint8_t *got = s.got.data + handshake;
            size_t got_len = s.got.len - handshake;
            qg_wire_buf plain = {0}, seqs = {0};
            size_t rebuilt = got_len - first - (frames.len - evil_end);
            bool same_ends = got_len > first + (frames.len - evil_end) &&
                             memcmp(got, frames.data, first) == 0 &&
                             memcmp(got + got_len - (frames.len - evil_end), frames.data + evil_end,
                                    frames.len - evil_end) == 0;
            bool ok = c.z_on && !c.passthrough && s.checks == 3 && same_ends &&
                      z_unframe(got + first, rebuilt, &plain, &seqs) && seqs.len == 2 &&
                      seqs.data[0] == 0 && seqs.data[1] == 1 && got[first] != 0 &&
                      got[first + 4] == 0 && plain.len == replacement.len &&
                      memcmp(plain.data, replacement.data, plain.len) == 0;
            if (!ok) {
                all_ok = false;
                tap_diag("cut %zu, kernel %d: checks %u, sent %zu", cuts[ci], kernel, s.checks, got_len);
            }
            qg_wire_buf_free(&plain);
            qg_wire_buf_free(&seqs);
            qg_wire_buf_free(&s.got);
            qg_wire_conn_release(&c);
        }
    }
    tap_ok(all_ok, "compressed frames written in every cut through a short, EAGAIN kernel: the "
                   "passing frames byte for byte, the blocked query's two frames as two stored "
                   "frames (numbers 0, 1; the first not empty) carrying its replacement");

    /* the server's OK with NO_BACKSLASH_ESCAPES, compressed, read in pieces */
    qg_wire_buf ok_frame = {0}, ok_packet = {0};
    static const uint8_t ok[] = {0, 0, 0, 0x02, 0x02, 0, 0}; /* status: autocommit, NBE */
    my_packet(&ok_packet, 1, ok, sizeof ok);
    z_frame(&ok_frame, 1, ok_packet.data, ok_packet.len, false);
    bool read_ok = true;
    for (size_t piece = 1; piece <= ok_frame.len; piece++) {
        sink s = {0};
        qg_wire_io io = {sink_send, sink_check, unread_pass, &s};
        qg_wire_conn c;
        z_handshake(&c, &io, qg_zlib_load, true);
        static const char set[] = "SET sql_mode=CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')";
        qg_wire_buf q = {0};
        z_query(&q, set);
        qg_wire_buf qf = {0};
        z_frame(&qf, 0, q.data, q.len, false);
        qg_my_state gbk = {.charset = "gbk"};
        qg_my_plan plan;
        qg_my_plan_init(&plan, set, sizeof set - 1);
        qg_wire_my_query_effect(&c.my, &plan, &gbk);
        qg_wire_write(&c, &io, qf.data, qf.len);
        for (size_t off = 0; off < ok_frame.len; off += piece)
            qg_wire_read(&c, ok_frame.data + off,
                         piece < ok_frame.len - off ? piece : ok_frame.len - off);
        read_ok = read_ok && c.session.no_backslash_escapes && !c.passthrough;
        qg_wire_buf_free(&q);
        qg_wire_buf_free(&qf);
        qg_wire_buf_free(&s.got);
        qg_wire_conn_release(&c);
    }
    tap_ok(read_ok, "the OK of a SET sql_mode inside a compressed frame, read in every cut: its "
                    "NO_BACKSLASH_ESCAPES bit is taken");

    /* a frame that does not inflate as its header says: refused or passed */
    for (int refuse = 0; refuse <= 1; refuse++) {
        sink s = {0};
        qg_wire_io io = {sink_send, sink_check, refuse ? unread_refuse : unread_pass, &s};
        qg_wire_conn c;
        z_handshake(&c, &io, qg_zlib_load, true);
        size_t handshake = s.got.len;
        qg_wire_buf bad = {0};
        z_frame(&bad, 0, evil.data, evil.len, false);
        bad.data[4]++; /* says one byte more than it inflates to */
        errno = 0;
        ssize_t r = qg_wire_write(&c, &io, bad.data, bad.len);
        tap_ok(c.unread == QG_WIRE_UNREAD_INFLATE &&
                   (refuse ? r == -1 && errno == EACCES && s.got.len == handshake
                           : r == (ssize_t)bad.len && s.got.len == handshake + bad.len &&
                                 memcmp(s.got.data + handshake, bad.data, bad.len) == 0),
               "a frame that inflates to less than it says: %s",
               refuse ? "refused (EACCES), nothing sent" : "passes as written (audit)");
        qg_wire_buf_free(&bad);
        qg_wire_buf_free(&s.got);
        qg_wire_conn_release(&c);
    }
    /* the server's corrupt frame: the connection is no longer read */
    {
        sink s = {0};
        qg_wire_io io = {sink_send, sink_check, unread_refuse, &s};
        qg_wire_conn c;
        z_handshake(&c, &io, qg_zlib_load, true);
        qg_wire_buf bad = {0};
        z_frame(&bad, 1, ok_packet.data, ok_packet.len, false);
        bad.data[7 + 3] ^= 0x55;
        qg_wire_read(&c, bad.data, bad.len);
        tap_ok(c.passthrough && c.unread == QG_WIRE_UNREAD_INFLATE,
               "the server's frame that does not inflate: the connection is no longer read");
        qg_wire_buf_free(&bad);
        qg_wire_buf_free(&s.got);
        qg_wire_conn_release(&c);
    }

    /* zlib that cannot be loaded: the response goes as a refused login */
    {
        sink s = {0};
        qg_wire_io io = {sink_send, sink_check, unread_refuse, &s};
        qg_wire_conn c;
        z_handshake(&c, &io, no_zlib, false);
        static const char user[] = QG_WIRE_REFUSED_LOGIN_USER;
        tap_ok(c.passthrough && c.unread == QG_WIRE_UNREAD_COMPRESSED && !c.zlib &&
                   s.got.len > 4 + 32 + sizeof user &&
                   memcmp(s.got.data + 4 + 32, user, sizeof user) == 0,
               "zlib not loadable: the response asking for compression goes as a login for '%s'",
               user);
        qg_wire_buf_free(&s.got);
        qg_wire_conn_release(&c);
    }
    qg_wire_buf_free(&ok_frame);
    qg_wire_buf_free(&ok_packet);
    qg_wire_buf_free(&frames);
    qg_wire_buf_free(&one);
    qg_wire_buf_free(&two);
    qg_wire_buf_free(&evil);
    qg_wire_buf_free(&replacement);
    qg_wire_buf_free(&expect_plain);
}

/* What a text of one statement does, read from its first word (kept by a
 * connection's last short word), is what its plan says: a sequence of
 * texts whose first eight bytes repeat with other words after them. */
static void test_mysql_single_effect(void)
{
    static const char *const texts[] = {
        "SELECT c FROM sbtest WHERE id = '1'", "SELECT c FROM sbtest WHERE id = '2'",
        "SET NAMES sjis", "SELECT 1 FROM t x", "SELECT 1FROM t", "set names utf8mb4",
        "SET NAMES sjis, sql_mode = ''", "DESCRIBE t x", "DESCRIBEX t x", "  SELECT 1 x",
        "  SELECTS 1 x", "\0\0\0\0\0\0\0\0\0\0", "CALL p(1, 2)", "SELECT 1 FROM t x",
        "EXECUTE st USING @a", "PREPARE st FROM 'SET NAMES sjis'", "UPDATE t SET c = 1",
        "SET sql_mode = 'ANSI_QUOTES'", "SELECT @@sql_mode FROM t", "XA START 'x' y",
        "SET STATEMENT sql_mode = '' FOR SELECT 1", "select 1 from t x",
    };
    static const size_t lens[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10};
    qg_wire_my single = {0}, planned = {0};
    qg_my_state st = {.charset = "utf8mb4", .flags = 0};
    unsigned differ = 0, kept = 0;
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
            const char *sql = texts[i];
            size_t len = i < sizeof lens / sizeof lens[0] && lens[i] ? lens[i] : strlen(sql);
            uint64_t before = single.inert_head;
            qg_wire_my_single_effect(&single, sql, len, &st);
            kept += before != 0 && single.inert_head == before && len > 8 &&
                    memcmp(&before, sql, 8) == 0;
            qg_my_plan plan;
            qg_my_plan_init(&plan, sql, len);
            qg_wire_my_query_effect_read(&planned, &plan, &st);
            bool same = (single.next_effect == NULL) == (planned.next_effect == NULL) &&
                        single.next_several == planned.next_several &&
                        single.next_mid_reports == planned.next_mid_reports;
            if (same && single.next_effect)
                same = memcmp(single.next_effect, planned.next_effect,
                              sizeof *single.next_effect) == 0;
            if (!same)
                tap_diag("differs: %.*s", (int)len, sql);
            differ += !same;
        }
    }
    tap_ok(differ == 0 && kept > 2,
           "mysql: a text of one statement's effect from its first word is its plan's (%u differ; "
           "%u read by the kept first bytes)",
           differ, kept);
    qg_wire_my_release(&single);
    qg_wire_my_release(&planned);
}

int main(void)
{
    test_mysql_single_effect();
    test_recognition();
    test_midstream_query();
    test_pg_pipeline();
    test_pg();
    test_mysql();
    test_mysql_large();
    test_pg_parameter_status();
    test_mysql_ok_status();
    test_mysql_routines();
    test_tls_switch();
    test_unread();
    test_hide_compression();
    test_query_attributes();
    test_compressed();
    return tap_done();
}
