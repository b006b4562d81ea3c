/*
 * The wire front's MySQL session state against a reference that replays
 * the server's answers.  The input is a script: the client pipelines
 * SET NAMES, SET sql_mode, both in one text, SELECT and
 * COM_RESET_CONNECTION commands (each written in pieces of the sizes the
 * seed gives), and the server answers the oldest command unanswered with
 * OKs, a result set or an error after any of its statements, also read in
 * pieces.  The reference knows the state the server is in and, for the
 * commands not yet answered, every state they may leave (any first few of
 * each one's statements run).
 * Each query's check must see every one of those states (a state missed
 * is a query checked under a guess), and once every answer is read, the
 * one state the server is in (anything else blocks legitimate queries).
 * Input: a seed byte for the cut sizes, a byte for the login's character
 * set (its high bit: a MariaDB server, else MySQL), then one byte per step: low three bits the step (0-3 SET NAMES, 4
 * SET NAMES and SET sql_mode in one text, 5 SET sql_mode, 6 SELECT or
 * COM_RESET_CONNECTION, 7 an answer), the rest its argument.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "wire_stream.h"

static const char *const charsets[] = {"latin1", "utf8mb4", "gbk", "sjis", "big5"};
/* The collations of the charsets above, for the handshake response. */
static const uint8_t collations[] = {8, 45, 28, 13, 1};
enum { CHARSETS = sizeof charsets / sizeof *charsets };
enum { STATUS_AUTOCOMMIT = 0x0002 };
#define PENDING_MAX 8

typedef struct ref_state {
    unsigned charset; /* index into charsets */
    bool nbe;         /* sql_mode has NO_BACKSLASH_ESCAPES */
} ref_state;

/* One statement's change; a command holds up to two. */
typedef struct ref_change {
    enum { SETS_CHARSET, SETS_MODE, SELECTS, RESETS } kind;
    unsigned arg;
} ref_change;

typedef struct ref_command {
    ref_change changes[2];
    unsigned count;
} ref_command;

typedef struct script {
    ref_state server;
    /* Whether the answers so far tell the character set and sql_mode: a
     * text of several statements that failed after some of them leaves
     * what it changes unknown to the front (which of them ran is not
     * matched to the answers) until a later text sets it again. */
    bool charset_told, mode_told;
    /* MariaDB's status bits say ANSI_QUOTES too: after a reset, the sql_mode
     * the session starts with is known from its OK */
    bool mariadb;
    unsigned login_charset;
    ref_command pending[PENDING_MAX];
    size_t pending_count;
    unsigned seed;
    qg_wire_conn conn;
    size_t checks;
} script;

static unsigned next_cut(script *s, size_t left)
{
    s->seed = s->seed * 1103515245u + 12345u;
    size_t cut = 1 + (s->seed >> 8) % 23;
    return (unsigned)(cut < left ? cut : left);
}

static ref_state apply(const script *s, ref_state st, const ref_change *ch)
{
    if (ch->kind == SETS_CHARSET)
        st.charset = ch->arg;
    else if (ch->kind == SETS_MODE)
        st.nbe = ch->arg;
    else if (ch->kind == RESETS) /* the login's character set, the global sql_mode ('') */
        st = (ref_state){.charset = s->login_charset};
    return st;
}

/* Whether the front's states hold st. */
static bool among(const qg_my_state *states, size_t count, ref_state st)
{
    for (size_t i = 0; i < count; i++)
        if (strcmp(states[i].charset, charsets[st.charset]) == 0 &&
            ((states[i].flags & QG_NO_BACKSLASH_ESCAPES) != 0) == st.nbe)
            return true;
    return false;
}

/* Every state the unanswered commands may leave (each runs any first few
 * of its statements) is among the front's. */
static void compare(const script *s, const qg_my_state *states, size_t count)
{
    unsigned ran[PENDING_MAX] = {0};
    for (;;) {
        ref_state st = s->server;
        for (size_t i = 0; i < s->pending_count; i++)
            for (unsigned j = 0; j < ran[i]; j++)
                st = apply(s, st, &s->pending[i].changes[j]);
        FUZZ_CHECK(among(states, count, st),
                   "query %zu: the server may be in %s%s after %zu unanswered commands, "
                   "which the front does not check",
                   s->checks, charsets[st.charset], st.nbe ? " NO_BACKSLASH_ESCAPES" : "",
                   s->pending_count);
        size_t i = 0; /* the next outcome, counting in mixed radix */
        while (i < s->pending_count && ran[i] == s->pending[i].count)
            ran[i++] = 0;
        if (i == s->pending_count)
            break;
        ran[i]++;
    }
    if (s->pending_count == 0)
        FUZZ_CHECK(count == 1, "query %zu: nothing unanswered, yet %zu states", s->checks, count);
}

static ssize_t sink_send(void *ctx, const uint8_t *p, size_t n)
{
    (void)ctx;
    (void)p;
    return (ssize_t)n;
}

/* As the front's check does: the query checked under the states the
 * front finds, then its effect recorded from the last of them. */
static bool sink_check(void *ctx, qg_wire_conn *c, const qg_wire_msg *m, qg_wire_buf *out)
{
    script *s = ctx;
    (void)out;
    qg_my_state states[QG_WIRE_MY_STATES];
    size_t count;
    s->checks++;
    if (!qg_wire_my_states(&c->my, &c->session, states, QG_WIRE_MY_STATES, &count)) {
        /* a reset returns to the global sql_mode, which only its answer tells */
        bool reset_unanswered = false;
        for (size_t i = 0; i < s->pending_count; i++)
            reset_unanswered |= s->pending[i].changes[0].kind == RESETS;
        FUZZ_CHECK(reset_unanswered || !s->charset_told || !s->mode_told,
                   "query %zu: the front calls the state unknown, which the server's answers tell",
                   s->checks);
        qg_my_state last = {.flags = c->session.no_backslash_escapes ? QG_NO_BACKSLASH_ESCAPES : 0};
        qg_my_state_set_charset(&last, c->session.encoding, strlen(c->session.encoding));
        qg_my_plan plan;
        qg_my_plan_init(&plan, m->sql, m->len);
        qg_wire_my_query_effect(&c->my, &plan, &last);
        return true;
    }
    compare(s, states, count);
    qg_my_plan plan;
    qg_my_plan_init(&plan, m->sql, m->len);
    qg_wire_my_query_effect(&c->my, &plan, &states[count - 1]);
    return true;
}

static bool sink_unread(void *ctx, qg_wire_conn *c)
{
    (void)ctx;
    (void)c;
    FUZZ_CHECK(false, "the connection is no longer read");
    return true;
}

static void put_packet(qg_wire_buf *b, uint8_t seq, const void *payload, size_t len)
{
    uint8_t h[4] = {(uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16), seq};
    FUZZ_CHECK(qg_wire_buf_append(b, h, 4) && qg_wire_buf_append(b, payload, len),
               "out of memory");
}

static void client_writes(script *s, const qg_wire_buf *b)
{
    qg_wire_io io = {sink_send, sink_check, sink_unread, s};
    for (size_t off = 0; off < b->len;) {
        ssize_t r = qg_wire_write(&s->conn, &io, b->data + off, next_cut(s, b->len - off));
        FUZZ_CHECK(r > 0, "write failed (errno %d)", errno);
        off += (size_t)r;
    }
}

static void server_says(script *s, const qg_wire_buf *b)
{
    for (size_t off = 0; off < b->len;) {
        size_t n = next_cut(s, b->len - off);
        qg_wire_read(&s->conn, b->data + off, n);
        off += n;
    }
}

static uint16_t status_of(ref_state st, bool more)
{
    return STATUS_AUTOCOMMIT | (more ? QG_MY_STATUS_MORE_RESULTS_EXIST : 0) |
           (st.nbe ? QG_MY_STATUS_NO_BACKSLASH_ESCAPES : 0);
}

static void put_ok(qg_wire_buf *b, uint8_t seq, ref_state st, bool more)
{
    uint16_t status = status_of(st, more);
    const uint8_t ok[7] = {0, 0, 0, (uint8_t)status, (uint8_t)(status >> 8), 0, 0};
    put_packet(b, seq, ok, sizeof ok);
}

static void put_eof(qg_wire_buf *b, uint8_t seq, ref_state st, bool more)
{
    uint16_t status = status_of(st, more);
    const uint8_t eof[5] = {0xfe, 0, 0, (uint8_t)status, (uint8_t)(status >> 8)};
    put_packet(b, seq, eof, sizeof eof);
}

static void login(script *s, unsigned charset, bool mariadb)
{
    /* and TRANSACTIONS, MULTI_STATEMENTS, MULTI_RESULTS, PLUGIN_AUTH */
    const uint32_t caps = QG_MY_CLIENT_PROTOCOL_41 | QG_MY_CLIENT_SECURE_CONNECTION | 0x2000 |
                          0x10000 | 0x20000 | 0x80000;
    qg_wire_buf b = {0};
    uint8_t greeting[64] = {10};
    const char *version = mariadb ? "5.5.5-10.11.19-MariaDB" : "8.0.36";
    size_t at = 1 + strlen(version) + 1 + 4 + 8 + 1; /* then thread id, scramble, filler */
    memcpy(greeting + 1, version, strlen(version));
    greeting[at] = (uint8_t)caps;
    greeting[at + 1] = (uint8_t)(caps >> 8);
    greeting[at + 2] = 8;
    greeting[at + 5] = (uint8_t)(caps >> 16);
    greeting[at + 6] = (uint8_t)(caps >> 24);
    put_packet(&b, 0, greeting, sizeof greeting);
    server_says(s, &b);
    uint8_t response[40] = {0};
    memcpy(response, &caps, 4);
    response[8] = collations[charset];
    memcpy(response + 32, "root", 5);
    b.len = 0;
    put_packet(&b, 1, response, sizeof response);
    client_writes(s, &b);
    s->server = (ref_state){.charset = charset};
    s->charset_told = s->mode_told = true;
    s->mariadb = mariadb;
    s->login_charset = charset;
    b.len = 0;
    put_ok(&b, 2, s->server, false);
    server_says(s, &b);
    qg_wire_buf_free(&b);
}

static size_t statement_text(char *out, size_t cap, const ref_change *ch)
{
    if (ch->kind == SETS_CHARSET)
        return (size_t)snprintf(out, cap, "SET NAMES %s", charsets[ch->arg]);
    if (ch->kind == SETS_MODE)
        return (size_t)snprintf(out, cap, "SET sql_mode = '%s'",
                                ch->arg ? "NO_BACKSLASH_ESCAPES" : "");
    return (size_t)snprintf(out, cap, "SELECT 1");
}

static void client_command(script *s, ref_command cmd)
{
    uint8_t payload[160] = {QG_MY_COM_QUERY};
    size_t len = 1;
    if (cmd.changes[0].kind == RESETS) {
        payload[0] = QG_MY_COM_RESET_CONNECTION;
    } else {
        for (unsigned i = 0; i < cmd.count; i++) {
            if (i > 0)
                payload[len++] = ';';
            len += statement_text((char *)payload + len, sizeof payload - len, &cmd.changes[i]);
        }
    }
    qg_wire_buf b = {0};
    put_packet(&b, 0, payload, len);
    client_writes(s, &b); /* checked against the commands before it */
    qg_wire_buf_free(&b);
    s->pending[s->pending_count++] = cmd;
}

/* The server runs the oldest command's first `ran` statements; an error
 * answers the one after them. */
static void server_answer(script *s, unsigned ran)
{
    ref_command cmd = s->pending[0];
    memmove(s->pending, s->pending + 1, --s->pending_count * sizeof *s->pending);
    qg_wire_buf b = {0};
    uint8_t seq = 1;
    for (unsigned i = 0; i < cmd.count; i++) {
        bool charset = cmd.changes[i].kind == SETS_CHARSET, mode = cmd.changes[i].kind == SETS_MODE;
        if (ran < cmd.count && cmd.count > 1) {
            s->charset_told &= !charset;
            s->mode_told &= !mode;
        } else if (ran == cmd.count) {
            s->charset_told |= charset;
            s->mode_told |= mode;
            if (cmd.changes[i].kind == RESETS)
                s->mode_told = s->mariadb;
        }
    }
    for (unsigned i = 0; i < ran; i++) {
        s->server = apply(s, s->server, &cmd.changes[i]);
        bool more = i + 1 < cmd.count;
        if (cmd.changes[i].kind == SELECTS) {
            static const uint8_t columns[] = {1};
            static const uint8_t column[] = {3, 'd', 'e', 'f', 0, 0, 0, 1, '1', 0, 0x0c, 63, 0,
                                             1, 0, 0, 0, 8, 0x81, 0, 0, 0, 0};
            static const uint8_t row[] = {1, '1'};
            put_packet(&b, seq++, columns, sizeof columns);
            put_packet(&b, seq++, column, sizeof column);
            put_eof(&b, seq++, s->server, false);
            put_packet(&b, seq++, row, sizeof row);
            put_eof(&b, seq++, s->server, more);
        } else {
            put_ok(&b, seq++, s->server, more);
        }
    }
    if (ran < cmd.count) {
        static const uint8_t err[] = {0xff, 0x7a, 0x04, '#', '7', '0', '1', '0', '0', 'x'};
        put_packet(&b, seq, err, sizeof err);
    }
    server_says(s, &b);
    qg_wire_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    script s = {.seed = data[0]};
    qg_wire_conn_init(&s.conn, QG_WIRE_MYSQL);
    login(&s, (data[1] & 0x7f) % CHARSETS, data[1] & 0x80);
    for (size_t i = 2; i < size; i++) {
        unsigned step = data[i] & 7, arg = data[i] >> 3;
        if (step == 7) {
            if (s.pending_count > 0) {
                unsigned count = s.pending[0].count;
                server_answer(&s, arg % 3 == 0 ? count : arg % (count + 1));
            }
            continue;
        }
        if (s.pending_count == PENDING_MAX)
            continue;
        ref_command cmd = {.count = 1};
        if (step < 4) {
            cmd.changes[0] = (ref_change){SETS_CHARSET, (step + arg) % CHARSETS};
        } else if (step == 4) {
            cmd.changes[0] = (ref_change){SETS_CHARSET, arg % CHARSETS};
            cmd.changes[1] = (ref_change){SETS_MODE, (arg >> 3) & 1};
            cmd.count = 2;
        } else if (step == 5) {
            cmd.changes[0] = (ref_change){SETS_MODE, arg & 1};
        } else {
            cmd.changes[0] = (ref_change){arg & 1 ? RESETS : SELECTS, 0};
        }
        client_command(&s, cmd);
    }
    while (s.pending_count > 0)
        server_answer(&s, s.pending[0].count);
    /* checked under the one state the server is in */
    client_command(&s, (ref_command){.changes = {{SELECTS, 0}}, .count = 1});
    qg_wire_conn_release(&s.conn);
    return 0;
}
