/* The wire front's question about a MySQL connection's state, and the
 * reading of its answer (wire_probe.h). */
#include "wire_probe.h"

#include <string.h>

#include "ascii.h"
#include "mysql_statements.h"
#include "quoteguard.h"

static const char probe_sql[] = "VALUES (@@character_set_client, @@sql_mode)";

/* Whether sql[0, len) holds `word` (lower case), ASCII letters in any case. */
static bool mentions(const char *sql, size_t len, const char *word)
{
    size_t n = strlen(word);
    for (size_t i = 0; i + n <= len; i++)
        if (qg_ascii_lower((unsigned char)sql[i]) == (unsigned char)word[0] &&
            qg_ascii_ncasecmp(sql + i, word, n) == 0)
            return true;
    return false;
}

/* A statement of the text runs others (CALL, EXECUTE), which may read
 * ROW_COUNT(): lexed with the last state known, which only decides whether
 * the question is asked (the query is then checked under the server's). */
static bool runs_other(const qg_wire_conn *c, const char *sql, size_t len)
{
    qg_my_state st = c->session.my_state;
    for (size_t pos = 0; pos < len;) {
        qg_my_effect fx;
        size_t step = qg_my_read_statement_on(&st, &c->my.server, sql + pos, len - pos, &fx);
        if (fx.runs_other)
            return true;
        if (step == 0)
            break;
        pos += step;
    }
    return false;
}

bool qg_wire_probe_may(const qg_wire_conn *c, const qg_wire_msg *m)
{
    const qg_wire_my *my = &c->my;
    bool idle = m->at_start && my->head == my->len && my->answer == QG_MY_ANS_FIRST &&
                !my->infile && !c->out.infile && c->in.left == 0 && c->in_hdr_len == 0 &&
                !c->in_keep && c->owed.len == 0;
    return c->proto == QG_WIRE_MYSQL && !c->passthrough && c->my_command_phase &&
           !(my->caps & (QG_MY_CLIENT_COMPRESS | QG_MY_CLIENT_ZSTD_COMPRESSION)) && !my->lost &&
           (!my->known || !my->flags_known) && idle && my->server.mariadb &&
           my->server.version >= QG_MY_VALUES_MIN_VERSION && m->kind == QG_WIRE_MY_QUERY &&
           m->sql && !mentions(m->sql, m->len, "row_count") && !runs_other(c, m->sql, m->len);
}

bool qg_wire_probe_packet(qg_wire_buf *out)
{
    size_t len = 1 + sizeof probe_sql - 1;
    uint8_t header[5] = {(uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16), 0,
                         QG_MY_COM_QUERY};
    out->len = 0;
    return qg_wire_buf_append(out, header, sizeof header) &&
           qg_wire_buf_append(out, probe_sql, sizeof probe_sql - 1);
}

/* Walks the answer's packets in order. */
typedef struct walk {
    const uint8_t *p;
    size_t n, at;
    uint8_t seq;      /* the sequence id the next packet must have */
    const uint8_t *body;
    size_t len;
} walk;

typedef enum step { STEP_PACKET, STEP_NEED, STEP_BAD, STEP_ERROR } step;

/* The next packet; an error packet ends the answer (STEP_ERROR when
 * nothing follows it). */
static step next_packet(walk *w)
{
    if (w->n - w->at < 4)
        return STEP_NEED;
    uint32_t len = qg_wire_le24(w->p + w->at);
    if (w->p[w->at + 3] != w->seq || len == 0 || len >= QG_MY_PACKET_MAX)
        return STEP_BAD;
    if (w->n - w->at - 4 < len)
        return STEP_NEED;
    w->body = w->p + w->at + 4;
    w->len = len;
    w->at += 4 + (size_t)len;
    w->seq++;
    if (w->body[0] == 0xff)
        return w->at == w->n ? STEP_ERROR : STEP_BAD;
    return STEP_PACKET;
}

static qg_wire_probe_status stopped(step s)
{
    return s == STEP_NEED ? QG_PROBE_NEED : s == STEP_ERROR ? QG_PROBE_ERROR : QG_PROBE_FAILED;
}

/* The packet that ends a result: EOF, or with CLIENT_DEPRECATE_EOF an OK
 * that begins with 0xfe. */
static bool result_end(const walk *w, bool deprecate_eof)
{
    return w->body[0] == 0xfe && w->len < (deprecate_eof ? QG_MY_PACKET_MAX : 9u);
}

/* The end packet's status bits. */
static bool end_status(const walk *w, bool deprecate_eof, unsigned *status)
{
    const uint8_t *p = w->body + 1, *end = w->body + w->len;
    if (deprecate_eof) {
        bool ok = true;
        qg_wire_my_lenenc(&p, end, &ok); /* affected rows */
        qg_wire_my_lenenc(&p, end, &ok); /* last insert id */
        if (!ok)
            return false;
    } else {
        p += 2; /* warnings */
    }
    if (end - p < 2)
        return false;
    *status = (unsigned)(p[0] | p[1] << 8);
    return true;
}

qg_wire_probe_status qg_wire_probe_answer(const qg_wire_conn *c, const uint8_t *p, size_t n,
                                          qg_my_state *st)
{
    bool deprecate_eof = c->my.caps & QG_MY_CLIENT_DEPRECATE_EOF;
    walk w = {.p = p, .n = n, .seq = 1};
    /* the column count, then (with MariaDB's metadata cache) whether the
     * definitions follow */
    step s = next_packet(&w);
    if (s != STEP_PACKET)
        return stopped(s);
    if (w.body[0] != 2)
        return QG_PROBE_FAILED; /* an OK, not two columns */
    if ((c->my.ext_caps & QG_MARIADB_CLIENT_CACHE_METADATA) && (w.len != 2 || w.body[1] != 1))
        return QG_PROBE_FAILED;
    if (!(c->my.ext_caps & QG_MARIADB_CLIENT_CACHE_METADATA) && w.len != 1)
        return QG_PROBE_FAILED;
    unsigned definitions = 2 + !deprecate_eof;
    for (unsigned i = 0; i < definitions; i++) {
        if ((s = next_packet(&w)) != STEP_PACKET)
            return stopped(s);
        bool eof = result_end(&w, false);
        if (eof != (i == 2))
            return QG_PROBE_FAILED;
    }
    /* the one row: two strings (NULL, 0xfb, is not one) */
    if ((s = next_packet(&w)) != STEP_PACKET)
        return stopped(s);
    const uint8_t *at = w.body, *end = w.body + w.len, *charset, *mode;
    size_t charset_len, mode_len;
    if (result_end(&w, deprecate_eof) ||
        !qg_wire_my_lenenc_str(&at, end, &charset, &charset_len) ||
        !qg_wire_my_lenenc_str(&at, end, &mode, &mode_len) || at != end)
        return QG_PROBE_FAILED;
    if ((s = next_packet(&w)) != STEP_PACKET)
        return stopped(s);
    unsigned status;
    if (!result_end(&w, deprecate_eof) || !end_status(&w, deprecate_eof, &status) ||
        (status & QG_MY_STATUS_MORE_RESULTS_EXIST) || w.at != n)
        return QG_PROBE_FAILED;
    bool list;
    qg_my_state got = {{0}, 0};
    if (!qg_my_state_apply(&got, "character_set_client", 20, (const char *)charset, charset_len,
                           &list) ||
        !qg_my_state_apply(&got, "sql_mode", 8, (const char *)mode, mode_len, &list))
        return QG_PROBE_FAILED;
    *st = got;
    return QG_PROBE_DONE;
}

void qg_wire_probe_taken(qg_wire_conn *c, const qg_my_state *st)
{
    qg_wire_my_set_charset(&c->session, st->charset, strlen(st->charset));
    qg_wire_my_set_flags(&c->session, st->flags);
    c->my.known = c->my.flags_known = true;
}
