/* The server-to-client half of the wire front (observed, never changed), and
 * the replacement messages a blocked query becomes (wire_stream.h). */
#include <stdio.h>
#include <string.h>

#include "mysql_state.h"
#include "replacement.h"
#include "wire_stream.h"

#define MY_PACKET_MAX 0xffffffu
/* The longest server message worth reading whole: ParameterStatus, OK. */
#define KEEP_MAX QG_WIRE_KEEP_MAX

/* name[0, len) into out (cap bytes), cut to fit. */
static void copy_name(char *out, size_t cap, const char *name, size_t len)
{
    if (len >= cap)
        len = cap - 1;
    memcpy(out, name, len);
    out[len] = '\0';
}

static void set_encoding(qg_wire_session *s, const char *name, size_t len)
{
    copy_name(s->encoding, sizeof s->encoding, name, len);
    s->encoding_table = NULL;
}

/* ----------------------------------------------------------- PostgreSQL */


/* ParameterStatus: name \0 value \0. */
static void pg_parameter_status(qg_wire_conn *c, const uint8_t *p, size_t n)
{
    const uint8_t *nul = memchr(p, 0, n);
    if (!nul)
        return;
    size_t name_len = (size_t)(nul - p);
    const uint8_t *value = nul + 1;
    const uint8_t *end = memchr(value, 0, n - name_len - 1);
    if (!end)
        return;
    size_t value_len = (size_t)(end - value);
    if (qg_wire_cstr_is(p, name_len, "client_encoding")) {
        set_encoding(&c->session, (const char *)value, value_len);
        c->pg_reported = true;
    } else if (qg_wire_cstr_is(p, name_len, "server_encoding")) {
        copy_name(c->session.server_encoding, sizeof c->session.server_encoding,
                  (const char *)value, value_len);
    } else if (qg_wire_cstr_is(p, name_len, "standard_conforming_strings")) {
        c->session.std_strings = qg_wire_cstr_is(value, value_len, "on");
    }
}

/* Whole messages from a message boundary, read where they lie, up to a
 * ParameterStatus or a message cut short: of them only a ReadyForQuery
 * changes what the front keeps.  The bytes they take of p[0, n). */
size_t qg_wire_pg_whole_messages(qg_wire_conn *c, const uint8_t *p, size_t n)
{
    const uint8_t *at = p;
    /* the bytes left less four (below 0 past a message that leaves fewer
     * than four): a whole header is at hand while it is above 0 */
    ptrdiff_t room = (ptrdiff_t)n - 4;
    while (room > 0) {
        uint8_t type = at[0];
        uint32_t len = qg_wire_be32(at + 1);
        /* a length no message has (below 4: it wraps) is left to
         * start_message, as a cut one; one compare for both */
        if (type == 'S' || (uint64_t)len - 4 >= (size_t)room)
            break;
        if (type == 'Z')
            qg_wire_pg_ready(c);
        at += 1 + (size_t)len;
        room -= 1 + (ptrdiff_t)len;
    }
    return (size_t)(at - p);
}

/* ---------------------------------------------------------------- MySQL */

/* A whole packet (or its first KEEP_MAX bytes, n > 0) of the server after
 * the login: the answers move on. */
static inline void my_answer_packet(qg_wire_conn *c, const uint8_t *p, size_t n)
{
    qg_wire_my_packet(&c->my, &c->session, p, n, c->in_len);
    if (c->my.infile) { /* the client's next packets are the file */
        c->my.infile = false;
        c->out.infile = true;
    }
}

/* A whole packet (or its first KEEP_MAX bytes) of the server. */
static void my_packet(qg_wire_conn *c, const uint8_t *p, size_t n)
{
    if (n == 0)
        return;
    if (!c->my_command_phase) {
        /* the greeting is seq 0; an OK after it ends authentication */
        if (c->in_seq == 0 && !c->my.greeting_seen)
            qg_wire_my_greeting(&c->my, p, n);
        else if (p[0] == 0x00 && c->in_seq >= 2) {
            c->my_command_phase = true;
            qg_wire_my_login_ok(&c->my, &c->session, p, n);
            /* compression starts after the login OK, in both directions;
             * the client's stream must be at a packet's end to switch */
            if (c->zlib && !qg_wire_out_at_rest(c))
                qg_wire_set_passthrough(c, QG_WIRE_UNREAD_STREAM);
            else if (c->zlib)
                c->z_on = true;
        }
        return;
    }
    my_answer_packet(c, p, n);
}

/* ------------------------------------------------------------- framing */

static size_t header_size(const qg_wire_conn *c)
{
    return c->proto == QG_WIRE_PG ? 5 : 4;
}

/* A whole header h[0, header_size): sets up the message or packet.  Inlined:
 * every packet of an answer runs it. */
__attribute__((always_inline)) static inline void start_message(qg_wire_conn *c, const uint8_t *h)
{
    uint64_t body;
    bool keep;
    if (c->proto == QG_WIRE_PG) {
        uint32_t len = qg_wire_be32(h + 1);
        c->in_type = h[0];
        body = len >= 4 ? len - 4 : 0;
        keep = c->in_type == 'S' && body <= KEEP_MAX;
    } else {
        uint32_t len = qg_wire_my_header_len(h);
        c->in_seq = h[3];
        c->in_len = len;
        body = len;
        /* every packet's head: where answers end is read from them (the
         * second and later packets of one past 16 MiB are its middle) */
        keep = !c->in.continues;
        c->in.continues = len == MY_PACKET_MAX;
    }
    c->in.left = body;
    c->in_keep = keep;
    c->in_body.len = 0;
}

/* The message read to its end: what it says, from its first bytes
 * body[0, n) (at most KEEP_MAX of them, when c->in_keep).  Inlined, as
 * start_message. */
__attribute__((always_inline)) static inline void end_message_of(qg_wire_conn *c,
                                                                 const uint8_t *body, size_t n)
{
    if (c->proto == QG_WIRE_PG && c->in_type == 'Z')
        qg_wire_pg_ready(c);
    if (c->in_keep && n > 0) {
        if (c->proto == QG_WIRE_PG)
            pg_parameter_status(c, body, n);
        else
            my_packet(c, body, n);
    }
    c->in_keep = false;
    c->in_body.len = 0;
}

static void end_message(qg_wire_conn *c)
{
    end_message_of(c, c->in_body.data, c->in_body.len);
}

size_t qg_wire_packets_read_from(qg_wire_conn *c, const uint8_t *p, size_t n, size_t i)
{
    bool framed = c->z_on;
    if (n > 0 && c->pg_tls_asked) {
        /* the one-byte answer to SSLRequest / GSSENCRequest; what follows
         * it is the TLS handshake, not the protocol */
        c->pg_tls_asked = false;
        if (p[0] == 'S')
            c->tls = true;
        else if (p[0] == 'G')
            qg_wire_set_passthrough(c, QG_WIRE_UNREAD_GSSAPI);
        if (c->tls)
            return n;
        i = 1;
    }
    size_t hs = header_size(c);
    while (i < n && !c->passthrough) {
        if (c->z_on != framed)
            return i; /* compressed frames from here on */
        if (c->proto == QG_WIRE_PG && c->in.left == 0 && !c->in_keep && c->in_hdr_len == 0) {
            size_t whole = qg_wire_pg_whole_messages(c, p + i, n - i);
            i += whole;
            if (whole > 0)
                continue;
        } else if (c->my_command_phase && c->in.left == 0 && !c->in_keep && c->in_hdr_len == 0 &&
                   !c->in.continues) {
            size_t whole = qg_wire_my_read_packets(c, p + i, n - i);
            i += whole;
            if (whole > 0)
                continue;
        }
        if (c->in.left == 0 && !c->in_keep) {
            /* a header: read in place where the call holds all of it */
            if (c->in_hdr_len == 0 && n - i >= hs) {
                start_message(c, p + i);
                i += hs;
            } else {
                while (c->in_hdr_len < hs && i < n)
                    c->in_hdr[c->in_hdr_len++] = p[i++];
                if (c->in_hdr_len < hs)
                    continue;
                c->in_hdr_len = 0;
                start_message(c, c->in_hdr);
            }
            if (c->in.left == 0) {
                end_message(c);
                continue;
            }
            if (c->in.left <= n - i) {
                /* the whole message is here: read in place, not copied */
                size_t body = (size_t)c->in.left;
                c->in.left = 0;
                end_message_of(c, p + i, body < KEEP_MAX ? body : KEEP_MAX);
                i += body;
                continue;
            }
        }
        size_t step = c->in.left < n - i ? (size_t)c->in.left : n - i;
        if (c->in_keep) {
            size_t room = KEEP_MAX > c->in_body.len ? KEEP_MAX - c->in_body.len : 0;
            if (!qg_wire_buf_append(&c->in_body, p + i, step < room ? step : room))
                c->in_keep = false;
        }
        c->in.left -= step;
        i += step;
        if (c->in.left == 0)
            end_message(c);
    }
    return n;
}

size_t qg_wire_packets_read(qg_wire_conn *c, const uint8_t *p, size_t n)
{
    size_t i = qg_wire_whole_read(c, p, n);
    return i == n ? n : qg_wire_packets_read_from(c, p, n, i);
}

/* The greeting (the stream's first packet): header (4), protocol (1), the
 * version up to its NUL, then after the NUL thread id (4), scramble (8),
 * filler (1), the capabilities' low half (2), charset (1), status (2) and
 * their high half (2). */
#define GREETING_VERSION_AT 5
#define GREETING_CAPS_LOW_AFTER_NUL 14
#define GREETING_CAPS_HIGH_AFTER_NUL 19

/* Clears `mask`'s bits of the byte at stream offset `at` if it is in p
 * (which begins at stream offset `start`). */
static void clear_at(uint8_t *p, uint64_t start, size_t n, uint64_t at, uint8_t mask)
{
    if (at >= start && at - start < n)
        p[at - start] &= (uint8_t)~mask;
}

void qg_wire_my_hide_compression(qg_wire_conn *c, uint8_t *p, size_t n)
{
    uint64_t start = c->in_pos - n;
    uint64_t last_at = c->my_version_end + GREETING_CAPS_HIGH_AFTER_NUL + 1;
    if (!c->hide_compression)
        return;
    if (c->proto != QG_WIRE_MYSQL || (c->my_version_end && start > last_at)) {
        c->hide_compression = false; /* nothing (more) to hide */
        return;
    }
    for (uint64_t at = start > GREETING_VERSION_AT ? start : GREETING_VERSION_AT;
         !c->my_version_end && at < start + n; at++)
        if (p[at - start] == 0)
            c->my_version_end = at;
    if (!c->my_version_end)
        return;
    if (!c->load_zlib || !c->load_zlib()) /* zlib compression is followed where zlib loads */
        clear_at(p, start, n, c->my_version_end + GREETING_CAPS_LOW_AFTER_NUL,
                 QG_MY_CLIENT_COMPRESS);
    clear_at(p, start, n, c->my_version_end + GREETING_CAPS_HIGH_AFTER_NUL + 1,
             (uint8_t)(QG_MY_CLIENT_ZSTD_COMPRESSION >> 24));
}

/* ---------------------------------------------------------- replacement */

/* The handshake response's fixed part: capabilities (4), max packet (4),
 * collation (1), filler (23); the user name follows, NUL-terminated. */
#define LOGIN_FIXED 32

bool qg_wire_login_refusal(const uint8_t *p, size_t n, qg_wire_buf *out)
{
    out->len = 0;
    if (n < 4 + LOGIN_FIXED)
        return false;
    const uint8_t *payload = p + 4, *end = p + n;
    const uint8_t *user_end = memchr(payload + LOGIN_FIXED, 0, (size_t)(end - payload - LOGIN_FIXED));
    if (!user_end)
        return false;
    static const char user[] = QG_WIRE_REFUSED_LOGIN_USER;
    size_t rest = (size_t)(end - user_end); /* the user's NUL and what follows */
    size_t len = LOGIN_FIXED + sizeof user - 1 + rest;
    uint8_t fixed[LOGIN_FIXED];
    memcpy(fixed, payload, LOGIN_FIXED);
    fixed[0] &= (uint8_t)~QG_MY_CLIENT_COMPRESS;
    fixed[3] &= (uint8_t)~(QG_MY_CLIENT_ZSTD_COMPRESSION >> 24);
    uint8_t header[4] = {(uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16), p[3]};
    return len < MY_PACKET_MAX && qg_wire_buf_append(out, header, 4) &&
           qg_wire_buf_append(out, fixed, LOGIN_FIXED) &&
           qg_wire_buf_append(out, user, sizeof user - 1) &&
           qg_wire_buf_append(out, user_end, rest);
}

static bool put_be32(qg_wire_buf *b, uint32_t v)
{
    uint8_t bytes[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    return qg_wire_buf_append(b, bytes, 4);
}

bool qg_wire_replacement(const qg_wire_conn *c, const qg_wire_msg *m, const char *message,
                         const char *sqlstate, qg_wire_buf *out)
{
    char safe[QG_REPLACEMENT_MESSAGE_MAX + 1], text[QG_REPLACEMENT_PG_RAISE_MAX];
    out->len = 0;
    if (c->proto == QG_WIRE_PG) {
        /* Query: a statement that raises at once (and so aborts an open
         * transaction).  Parse: one that fails already in parse analysis, so
         * the statement is never created and the Bind after it is skipped. */
        if (m->kind == QG_WIRE_PG_QUERY) {
            qg_replacement_pg_raise(text, sizeof text, message, sqlstate);
        } else {
            qg_replacement_message(safe, sizeof safe, message, sizeof safe - 1);
            snprintf(text, sizeof text, "SELECT CAST('%s' AS integer)", safe);
        }
        size_t text_len = strlen(text);
        size_t name_len = m->kind == QG_WIRE_PG_PARSE ? m->name_len : 0;
        size_t body = 4 + (m->kind == QG_WIRE_PG_PARSE ? name_len + 1 : 0) + text_len + 1 +
                      (m->kind == QG_WIRE_PG_PARSE ? 2 : 0);
        uint8_t type = m->kind == QG_WIRE_PG_PARSE ? 'P' : 'Q';
        static const uint8_t zero[2] = {0, 0};
        bool ok = qg_wire_buf_append(out, &type, 1) && put_be32(out, (uint32_t)body);
        if (ok && m->kind == QG_WIRE_PG_PARSE)
            ok = qg_wire_buf_append(out, m->name ? m->name : "", name_len) &&
                 qg_wire_buf_append(out, zero, 1);
        ok = ok && qg_wire_buf_append(out, text, text_len + 1);
        if (ok && m->kind == QG_WIRE_PG_PARSE)
            ok = qg_wire_buf_append(out, zero, 2); /* no parameter types */
        return ok;
    }
    uint8_t command;
    if (m->kind == QG_WIRE_MY_QUERY) {
        qg_replacement_mysql_signal(text, sizeof text, message);
        command = QG_MY_COM_QUERY;
    } else {
        /* an unknown column fails the prepare itself; names hold 64 characters */
        qg_replacement_message(safe, sizeof safe, message, 64);
        snprintf(text, sizeof text, "SELECT `%s`", safe);
        command = QG_MY_COM_STMT_PREPARE;
    }
    /* with query attributes agreed, a COM_QUERY says it carries none */
    static const uint8_t no_attributes[2] = {0, 1};
    size_t prefix = command == QG_MY_COM_QUERY && (c->my.caps & QG_MY_CLIENT_QUERY_ATTRIBUTES) ? 2 : 0;
    size_t len = 1 + prefix + strlen(text);
    uint8_t header[5] = {(uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16), 0, command};
    return qg_wire_buf_append(out, header, 5) && qg_wire_buf_append(out, no_attributes, prefix) &&
           qg_wire_buf_append(out, text, len - 1 - prefix);
}
