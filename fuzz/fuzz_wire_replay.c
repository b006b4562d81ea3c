/*
 * The wire front's MySQL session state against a reference that replays
 * the server's answers.  The input is a script: the client pipelines
 * SET NAMES, SET sql_mode and SELECT commands (each written in pieces of
 * the sizes the seed gives), and the server answers the oldest command
 * unanswered with an OK, a result set or an error, also read in pieces.
 * The reference knows the state the server is in and, for the commands
 * not yet answered, every state their successes and failures may leave.
 * Each query's check must see every one of those states (a state missed
 * is a query checked under a guess), and once every answer is read, the
 * one state the server is in (anything else blocks legitimate queries).
 * Input: a seed byte for the cut sizes, then one byte per step: low three
 * bits the step (0-4 SET NAMES, 5 SET sql_mode, 6 SELECT, 7 an answer),
 * the rest its argument.
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
enum { STATUS_AUTOCOMMIT = 0x0002, STATUS_NO_BACKSLASH_ESCAPES = 0x0200 };
#define PENDING_MAX 8

typedef struct ref_state {
    unsigned charset; /* index into charsets */
    bool nbe;         /* sql_mode has NO_BACKSLASH_ESCAPES */
} ref_state;

typedef struct ref_command {
    enum { SETS_CHARSET, SETS_MODE, SELECTS } kind;
    unsigned arg;
} ref_command;

typedef struct script {
    ref_state server;
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

static ref_state apply(ref_state st, const ref_command *cmd)
{
    if (cmd->kind == SETS_CHARSET)
        st.charset = cmd->arg;
    else if (cmd->kind == SETS_MODE)
        st.nbe = cmd->arg;
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

/* Every state the unanswered commands may leave (each succeeds or fails)
 * is among the front's. */
static void compare(const script *s, const qg_my_state *states, size_t count)
{
    for (unsigned outcome = 0; outcome < 1u << s->pending_count; outcome++) {
        ref_state st = s->server;
        for (size_t i = 0; i < s->pending_count; i++)
            if (outcome & (1u << i))
                st = apply(st, &s->pending[i]);
        FUZZ_CHECK(among(states, count, st),
                   "query %zu: the server may be in %s%s after %zu unanswered commands, "
                   "which the front does not check",
                   s->checks, charsets[st.charset], st.nbe ? " NO_BACKSLASH_ESCAPES" : "",
                   s->pending_count);
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
    FUZZ_CHECK(qg_wire_my_states(&c->my, &c->session, states, QG_WIRE_MY_STATES, &count),
               "query %zu: the front calls the state unknown, which the server's answers tell",
               s->checks);
    compare(s, states, count);
    qg_wire_my_query_effect(&c->my, &states[count - 1], m->sql, m->len);
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

static uint16_t status_of(ref_state st)
{
    return STATUS_AUTOCOMMIT | (st.nbe ? STATUS_NO_BACKSLASH_ESCAPES : 0);
}

static void put_eof(qg_wire_buf *b, uint8_t seq, ref_state st)
{
    uint16_t status = status_of(st);
    const uint8_t eof[5] = {0xfe, 0, 0, (uint8_t)status, (uint8_t)(status >> 8)};
    put_packet(b, seq, eof, sizeof eof);
}

static void login(script *s, unsigned charset)
{
    /* PROTOCOL_41, TRANSACTIONS, SECURE_CONNECTION, PLUGIN_AUTH */
    const uint32_t caps = 0x200 | 0x2000 | 0x8000 | 0x80000;
    qg_wire_buf b = {0};
    uint8_t greeting[40] = {10, '1', '0', '.', '1', '1', 0};
    greeting[20] = (uint8_t)caps;
    greeting[21] = (uint8_t)(caps >> 8);
    greeting[22] = 8;
    greeting[25] = (uint8_t)(caps >> 16);
    greeting[26] = (uint8_t)(caps >> 24);
    put_packet(&b, 0, greeting, sizeof greeting);
    server_says(s, &b);
    uint8_t response[40] = {0};
    memcpy(response, &caps, 4);
    response[8] = collations[charset];
    memcpy(response + 32, "root", 5);
    b.len = 0;
    put_packet(&b, 1, response, sizeof response);
    client_writes(s, &b);
    const uint8_t ok[7] = {0, 0, 0, (uint8_t)STATUS_AUTOCOMMIT, 0, 0, 0};
    b.len = 0;
    put_packet(&b, 2, ok, sizeof ok);
    server_says(s, &b);
    qg_wire_buf_free(&b);
    s->server = (ref_state){.charset = charset};
}

static void client_command(script *s, ref_command cmd)
{
    char text[64];
    if (cmd.kind == SETS_CHARSET)
        snprintf(text, sizeof text, "SET NAMES %s", charsets[cmd.arg]);
    else if (cmd.kind == SETS_MODE)
        snprintf(text, sizeof text, "SET sql_mode = '%s'", cmd.arg ? "NO_BACKSLASH_ESCAPES" : "");
    else
        snprintf(text, sizeof text, "SELECT 1");
    uint8_t payload[65] = {QG_MY_COM_QUERY};
    size_t len = strlen(text);
    memcpy(payload + 1, text, len);
    qg_wire_buf b = {0};
    put_packet(&b, 0, payload, len + 1);
    client_writes(s, &b); /* checked against the commands before it */
    qg_wire_buf_free(&b);
    s->pending[s->pending_count++] = cmd;
}

static void server_answer(script *s, bool success)
{
    ref_command cmd = s->pending[0];
    memmove(s->pending, s->pending + 1, --s->pending_count * sizeof *s->pending);
    qg_wire_buf b = {0};
    if (!success) {
        static const uint8_t err[] = {0xff, 0x7a, 0x04, '#', '7', '0', '1', '0', '0', 'x'};
        put_packet(&b, 1, err, sizeof err);
    } else {
        s->server = apply(s->server, &cmd);
        uint16_t status = status_of(s->server);
        if (cmd.kind == SELECTS) {
            static const uint8_t columns[] = {1};
            static const uint8_t column[] = {3, 'd', 'e', 'f', 0, 0, 0, 1, '1', 0, 0x0c, 63, 0,
                                             1, 0, 0, 0, 8, 0x81, 0, 0, 0, 0};
            static const uint8_t row[] = {1, '1'};
            put_packet(&b, 1, columns, sizeof columns);
            put_packet(&b, 2, column, sizeof column);
            put_eof(&b, 3, s->server);
            put_packet(&b, 4, row, sizeof row);
            put_eof(&b, 5, s->server);
        } else {
            const uint8_t ok[7] = {0, 0, 0, (uint8_t)status, (uint8_t)(status >> 8), 0, 0};
            put_packet(&b, 1, ok, sizeof ok);
        }
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
    login(&s, data[1] % CHARSETS);
    for (size_t i = 2; i < size; i++) {
        unsigned step = data[i] & 7, arg = data[i] >> 3;
        if (step == 7) {
            if (s.pending_count > 0)
                server_answer(&s, arg & 1);
        } else if (s.pending_count < PENDING_MAX) {
            ref_command cmd = step < 5    ? (ref_command){SETS_CHARSET, (step + arg) % CHARSETS}
                              : step == 5 ? (ref_command){SETS_MODE, arg & 1}
                                          : (ref_command){SELECTS, 0};
            client_command(&s, cmd);
        }
    }
    while (s.pending_count > 0)
        server_answer(&s, true);
    client_command(&s, (ref_command){SELECTS, 0}); /* checked under the one state */
    qg_wire_conn_release(&s.conn);
    return 0;
}
