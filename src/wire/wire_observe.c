/* The server-to-client half of the wire front (observed, never changed), and
 * the replacement messages a blocked query becomes (wire_stream.h). */
#include <stdio.h>
#include <string.h>

#include "mysql_state.h"
#include "replacement.h"
#include "wire_stream.h"

#define MY_PACKET_MAX 0xffffffu
#define MY_CLIENT_SESSION_TRACK (1u << 23)
/* The longest server message worth reading whole: ParameterStatus, OK. */
#define KEEP_MAX 4096

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

/* ---------------------------------------------------------------- MySQL */

typedef struct reader {
    const uint8_t *p, *end;
    bool ok;
} reader;

static uint64_t read_lenenc(reader *r)
{
    if (r->p >= r->end) {
        r->ok = false;
        return 0;
    }
    uint8_t first = *r->p++;
    size_t bytes = first < 0xfb ? 0 : first == 0xfc ? 2 : first == 0xfd ? 3 : first == 0xfe ? 8 : 9;
    if (bytes == 0)
        return first;
    if (bytes == 9 || (size_t)(r->end - r->p) < bytes) {
        r->ok = false;
        return 0;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; i++)
        v |= (uint64_t)r->p[i] << (8 * i);
    r->p += bytes;
    return v;
}

/* A length-encoded string: *s and *len, or false. */
static bool read_lenenc_str(reader *r, const uint8_t **s, size_t *len)
{
    uint64_t n = read_lenenc(r);
    if (!r->ok || n > (uint64_t)(r->end - r->p))
        return r->ok = false;
    *s = r->p;
    *len = (size_t)n;
    r->p += n;
    return true;
}

/* Session-state changes: character_set_client among the system variables. */
static void my_session_state(qg_wire_conn *c, reader *r)
{
    const uint8_t *block;
    size_t block_len;
    if (!read_lenenc_str(r, &block, &block_len))
        return;
    reader entries = {block, block + block_len, true};
    while (entries.ok && entries.p < entries.end) {
        uint8_t type = *entries.p++;
        const uint8_t *data;
        size_t data_len;
        if (!read_lenenc_str(&entries, &data, &data_len))
            return;
        if (type != QG_MY_SESSION_TRACK_SYSTEM_VARIABLES)
            continue;
        reader var = {data, data + data_len, true};
        const uint8_t *name, *value;
        size_t name_len, value_len;
        if (read_lenenc_str(&var, &name, &name_len) && read_lenenc_str(&var, &value, &value_len) &&
            qg_wire_cstr_is(name, name_len, "character_set_client"))
            set_encoding(&c->session, (const char *)value, value_len);
    }
}

/* An OK packet (first byte 0x00 or, ending a result set, 0xfe): its status
 * flags, and its session-state changes when the client asked for them. */
static void my_ok_packet(qg_wire_conn *c, const uint8_t *p, size_t n)
{
    reader r = {p + 1, p + n, true};
    read_lenenc(&r); /* affected rows */
    read_lenenc(&r); /* last insert id */
    if (!r.ok || r.end - r.p < 4)
        return;
    unsigned status = (unsigned)r.p[0] | (unsigned)r.p[1] << 8;
    r.p += 4; /* status, warnings */
    c->session.no_backslash_escapes = status & QG_MY_STATUS_NO_BACKSLASH_ESCAPES;
    if (!(c->my_client_caps & MY_CLIENT_SESSION_TRACK) || r.p >= r.end)
        return;
    const uint8_t *info;
    size_t info_len;
    if (read_lenenc_str(&r, &info, &info_len) && (status & QG_MY_STATUS_SESSION_STATE_CHANGED))
        my_session_state(c, &r);
}

/* A whole packet (or its first KEEP_MAX bytes) of the server. */
static void my_packet(qg_wire_conn *c, const uint8_t *p, size_t n)
{
    if (n == 0)
        return;
    if (!c->my_command_phase) {
        /* the greeting is seq 0; an OK after it ends authentication */
        if (p[0] == 0x00 && c->in_seq >= 2) {
            c->my_command_phase = true;
            my_ok_packet(c, p, n);
        }
        return;
    }
    if (!c->my_awaiting_reply || c->in_seq != 1)
        return;
    c->my_awaiting_reply = false;
    bool ok = p[0] == 0x00;
    if (ok)
        my_ok_packet(c, p, n);
    if (ok && c->effect_pending) {
        bool nbe = c->session.no_backslash_escapes;
        c->session = c->effect;
        c->session.no_backslash_escapes = nbe; /* the server's word wins */
    }
    c->effect_pending = false;
}

/* ------------------------------------------------------------- framing */

static size_t header_size(const qg_wire_conn *c)
{
    return c->proto == QG_WIRE_PG ? 5 : 4;
}

/* A header is complete in c->in_hdr: sets up the message or packet. */
static void start_message(qg_wire_conn *c)
{
    uint64_t body;
    bool keep;
    if (c->proto == QG_WIRE_PG) {
        uint32_t len = (uint32_t)c->in_hdr[1] << 24 | (uint32_t)c->in_hdr[2] << 16 |
                       (uint32_t)c->in_hdr[3] << 8 | c->in_hdr[4];
        c->in_type = c->in_hdr[0];
        body = len >= 4 ? len - 4 : 0;
        keep = c->in_type == 'S' && body <= KEEP_MAX;
    } else {
        uint32_t len = (uint32_t)c->in_hdr[0] | (uint32_t)c->in_hdr[1] << 8 |
                       (uint32_t)c->in_hdr[2] << 16;
        c->in_seq = c->in_hdr[3];
        body = len;
        keep = !c->in.continues &&
               (!c->my_command_phase || (c->my_awaiting_reply && c->in_seq == 1));
        c->in.continues = len == MY_PACKET_MAX;
    }
    c->in.left = body;
    c->in_keep = keep;
    c->in_body.len = 0;
}

static void end_message(qg_wire_conn *c)
{
    if (c->proto == QG_WIRE_PG && c->in_type == 'Z')
        qg_wire_pg_ready(c);
    if (c->in_keep && c->in_body.len > 0) {
        if (c->proto == QG_WIRE_PG)
            pg_parameter_status(c, c->in_body.data, c->in_body.len);
        else
            my_packet(c, c->in_body.data, c->in_body.len);
    } else if (c->proto == QG_WIRE_MYSQL && c->my_command_phase && c->my_awaiting_reply &&
               c->in_seq == 1) {
        c->my_awaiting_reply = false; /* a long first answer: a result set */
        c->effect_pending = false;
    }
    c->in_keep = false;
    c->in_body.len = 0;
}

void qg_wire_read(qg_wire_conn *c, const uint8_t *p, size_t n)
{
    size_t i = 0;
    if (n > 0 && c->pg_tls_asked) {
        /* the one-byte answer to SSLRequest / GSSENCRequest; what follows
         * it is the TLS handshake, not the protocol */
        c->pg_tls_asked = false;
        if (p[0] == 'S')
            c->tls = true;
        else if (p[0] == 'G')
            c->passthrough = true;
        if (c->tls)
            return;
        i = 1;
    }
    while (i < n && !c->passthrough) {
        if (c->in_hdr_len < header_size(c) && c->in.left == 0 && !c->in_keep) {
            c->in_hdr[c->in_hdr_len++] = p[i++];
            if (c->in_hdr_len < header_size(c))
                continue;
            c->in_hdr_len = 0;
            start_message(c);
            if (c->in.left > 0)
                continue;
            end_message(c);
            continue;
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
}

/* ---------------------------------------------------------- replacement */

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
        command = 0x03;
    } else {
        /* an unknown column fails the prepare itself; names hold 64 characters */
        qg_replacement_message(safe, sizeof safe, message, 64);
        snprintf(text, sizeof text, "SELECT `%s`", safe);
        command = 0x16;
    }
    size_t len = 1 + strlen(text);
    uint8_t header[5] = {(uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16), 0, command};
    return qg_wire_buf_append(out, header, 5) && qg_wire_buf_append(out, text, len - 1);
}
