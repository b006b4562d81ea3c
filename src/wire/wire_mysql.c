/* The wire front's MySQL session (wire_mysql.h): capabilities, commands
 * written and their answers, and the states a query may meet. */
#include "wire_mysql.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quoteguard.h"
#include "wire_collations.h"

/* Commands followed at once; past this the answers cannot be matched. */
#define PENDING_MAX 65536u
/* Prepared statements (binary or by name) whose text changes the state. */
#define PREPARED_MAX 256u
#define NO_STMT_ID 0xffffffffu

static uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

/* ------------------------------------------------------------- reading */

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

/* The length of one value in the binary protocol, by its column type;
 * false for a type a client does not send as a parameter. */
static bool skip_binary_value(reader *r, uint8_t type)
{
    size_t fixed;
    switch (type) {
    case 1: /* TINY */
        fixed = 1;
        break;
    case 2:  /* SHORT */
    case 13: /* YEAR */
        fixed = 2;
        break;
    case 3: /* LONG */
    case 4: /* FLOAT */
    case 9: /* INT24 */
        fixed = 4;
        break;
    case 5: /* DOUBLE */
    case 8: /* LONGLONG */
        fixed = 8;
        break;
    case 7:  /* TIMESTAMP */
    case 10: /* DATE */
    case 11: /* TIME */
    case 12: /* DATETIME */
        if (r->p >= r->end)
            return r->ok = false;
        fixed = 1 + (size_t)*r->p;
        break;
    case 0:  /* DECIMAL */
    case 15: /* VARCHAR */
    case 16: /* BIT */
    case 245: /* JSON */
    case 246: /* NEWDECIMAL */
    case 247: /* ENUM */
    case 248: /* SET */
    case 249: /* TINY_BLOB */
    case 250: /* MEDIUM_BLOB */
    case 251: /* LONG_BLOB */
    case 252: /* BLOB */
    case 253: /* VAR_STRING */
    case 254: /* STRING */
    case 255: /* GEOMETRY */ {
        const uint8_t *s;
        size_t len;
        return read_lenenc_str(r, &s, &len);
    }
    default:
        return r->ok = false;
    }
    if ((size_t)(r->end - r->p) < fixed)
        return r->ok = false;
    r->p += fixed;
    return true;
}

/* An attribute's type and flag, then its name: returns the type. */
static uint8_t read_attribute_definition(reader *r)
{
    if (r->end - r->p < 2)
        return r->ok = false;
    uint8_t type = r->p[0];
    r->p += 2;
    const uint8_t *name;
    size_t name_len;
    read_lenenc_str(r, &name, &name_len);
    return type;
}

bool qg_wire_my_attributes_len(const uint8_t *p, size_t n, size_t *len)
{
    reader r = {p, p + n, true};
    uint64_t count = read_lenenc(&r);
    uint64_t sets = read_lenenc(&r);
    if (!r.ok || sets != 1 || count > n)
        return false;
    if (count > 0) {
        size_t bitmap_len = (size_t)(count + 7) / 8;
        /* the null bitmap, then new_params_bind_flag, which must be 1 */
        if ((size_t)(r.end - r.p) < bitmap_len + 1 || r.p[bitmap_len] != 1)
            return false;
        const uint8_t *nulls = r.p;
        r.p += bitmap_len + 1;
        reader definitions = r;
        for (uint64_t i = 0; i < count && r.ok; i++)
            read_attribute_definition(&r);
        /* r is at the values: each definition gives the next one's length */
        for (uint64_t i = 0; i < count && r.ok && definitions.ok; i++) {
            uint8_t type = read_attribute_definition(&definitions);
            if (!(nulls[i / 8] & (1u << (i % 8))))
                skip_binary_value(&r, type);
        }
    }
    if (!r.ok)
        return false;
    *len = (size_t)(r.p - p);
    return true;
}

uint64_t qg_wire_my_lenenc(const uint8_t **p, const uint8_t *end, bool *ok)
{
    reader r = {*p, end, true};
    uint64_t v = read_lenenc(&r);
    *p = r.p;
    *ok = *ok && r.ok;
    return v;
}

bool qg_wire_my_lenenc_str(const uint8_t **p, const uint8_t *end, const uint8_t **s, size_t *len)
{
    reader r = {*p, end, true};
    bool ok = read_lenenc_str(&r, s, len);
    *p = r.p;
    return ok;
}

/* ------------------------------------------------------------ handshake */

const char *qg_wire_mysql_charset_of_collation(unsigned id)
{
    return id < 256 ? qg_wire_collation_charsets[id] : NULL;
}

void qg_wire_my_release(qg_wire_my *m)
{
    for (size_t i = m->head; i < m->len; i++)
        free(m->pending[i].effect);
    free(m->pending);
    free(m->next_effect);
    free(m->stmts);
    free(m->named);
    memset(m, 0, sizeof *m);
}

/* "5.5.5-10.11.19-MariaDB-…" or "8.0.36": 101119, 80036. */
static unsigned long version_number(const char *v)
{
    if (strncmp(v, "5.5.5-", 6) == 0)
        v += 6;
    unsigned long parts[3] = {0, 0, 0};
    for (int i = 0; i < 3; i++) {
        if (*v < '0' || *v > '9')
            return 0;
        while (*v >= '0' && *v <= '9' && parts[i] < 1000)
            parts[i] = parts[i] * 10 + (unsigned long)(*v++ - '0');
        if (i < 2 && *v++ != '.')
            return 0;
    }
    return parts[0] * 10000 + parts[1] * 100 + parts[2];
}

void qg_wire_my_greeting(qg_wire_my *m, const uint8_t *p, size_t n)
{
    const uint8_t *nul = n > 1 ? memchr(p + 1, 0, n - 1) : NULL;
    if (!nul || p[0] != 10)
        return;
    char version[64];
    size_t vlen = (size_t)(nul - (p + 1));
    if (vlen >= sizeof version)
        vlen = sizeof version - 1;
    memcpy(version, p + 1, vlen);
    version[vlen] = '\0';
    m->server.mariadb = strstr(version, "MariaDB") != NULL;
    m->server.version = version_number(version);
    size_t at = (size_t)(nul - p) + 1 + 4 + 8 + 1; /* thread id, scramble, filler */
    if (at + 2 > n)
        return;
    m->server_caps = le16(p + at);
    if (at + 2 + 1 + 2 + 2 <= n)
        m->server_caps |= (uint32_t)le16(p + at + 5) << 16;
    /* MariaDB: its extended capabilities in the last 4 of 10 reserved bytes */
    size_t ext = at + 2 + 1 + 2 + 2 + 1 + 6;
    if (!(m->server_caps & QG_MY_CLIENT_MYSQL) && ext + 4 <= n)
        m->server_ext_caps = qg_wire_le32(p + ext);
    m->greeting_seen = true;
}

void qg_wire_my_response(qg_wire_my *m, const uint8_t *p, size_t n, bool inside_tls)
{
    if (n < 9)
        return;
    uint32_t caps = qg_wire_le32(p);
    /* without a greeting seen (a connection followed from its middle), the
     * client's word is all there is */
    m->caps = m->greeting_seen ? caps & m->server_caps : caps;
    if (n >= 32 && !(m->server_caps & QG_MY_CLIENT_MYSQL))
        m->ext_caps = qg_wire_le32(p + 28) & m->server_ext_caps;
    const char *charset = qg_wire_mysql_charset_of_collation(p[8]);
    if (charset) {
        size_t len = strlen(charset);
        if (len >= sizeof m->login_charset)
            len = sizeof m->login_charset - 1;
        memcpy(m->login_charset, charset, len);
        m->login_charset[len] = '\0';
    } else {
        m->login_charset[0] = '\0';
    }
    /* the SSL request is followed by the whole response inside TLS */
    if (!(caps & QG_MY_CLIENT_SSL) || inside_tls)
        m->response_seen = true;
}

/* The status bits of an OK or EOF packet, kept until the answer ends: the
 * quoting bits are the server's word only where they are fresh (finish). */
static void take_status(qg_wire_my *m, unsigned status)
{
    m->answer_status = status;
    m->answer_status_seen = true;
}

/* The quoting flags the status bits say: NO_BACKSLASH_ESCAPES from every
 * server, ANSI_QUOTES from MariaDB (MySQL has no such bit). */
static unsigned status_flags(const qg_wire_my *m, unsigned status)
{
    return (status & QG_MY_STATUS_NO_BACKSLASH_ESCAPES ? QG_NO_BACKSLASH_ESCAPES : 0) |
           (m->server.mariadb && (status & QG_MY_STATUS_ANSI_QUOTES) ? QG_ANSI_QUOTES : 0);
}

static unsigned session_flags(const qg_wire_session *s)
{
    return s->my_state.flags;
}

void qg_wire_my_set_flags(qg_wire_session *s, unsigned flags)
{
    s->no_backslash_escapes = flags & QG_NO_BACKSLASH_ESCAPES;
    s->ansi_quotes = flags & QG_ANSI_QUOTES;
    s->my_state.flags = flags & (QG_NO_BACKSLASH_ESCAPES | QG_ANSI_QUOTES);
}

void qg_wire_my_set_charset(qg_wire_session *s, const char *name, size_t len)
{
    if (len >= sizeof s->encoding)
        len = sizeof s->encoding - 1;
    memcpy(s->encoding, name, len);
    s->encoding[len] = '\0';
    qg_my_state_set_charset(&s->my_state, name, len);
    s->encoding_table = NULL;
}

/* Session-state changes of an OK packet: character_set_client among the
 * system variables (the client asked for them), kept until the answer
 * ends.  `final`: the packet ends the answer. */
static void session_state(qg_wire_my *m, reader *r, bool final)
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
        if (!read_lenenc_str(&var, &name, &name_len) || !read_lenenc_str(&var, &value, &value_len))
            continue;
        bool list;
        qg_my_state st = {{0}, 0};
        if (qg_my_word_is((const char *)name, name_len, "character_set_client") &&
            qg_my_state_apply(&st, (const char *)name, name_len, (const char *)value, value_len,
                              &list)) {
            memcpy(m->report.charset, st.charset, sizeof m->report.charset);
            m->report.seen = true;
            m->report.final = final;
        }
    }
}

/* An OK packet (0x00, or 0xfe ending a result with CLIENT_DEPRECATE_EOF):
 * its status bits, and its session-state report when the client asked. */
static unsigned ok_packet(qg_wire_my *m, const uint8_t *p, size_t n)
{
    reader r = {p + 1, p + n, true};
    read_lenenc(&r); /* affected rows */
    read_lenenc(&r); /* last insert id */
    if (!r.ok || r.end - r.p < 4)
        return 0;
    unsigned status = le16(r.p);
    r.p += 4; /* status, warnings */
    take_status(m, status);
    if (!(m->caps & QG_MY_CLIENT_SESSION_TRACK) || r.p >= r.end)
        return status;
    const uint8_t *info;
    size_t info_len;
    if (read_lenenc_str(&r, &info, &info_len) && (status & QG_MY_STATUS_SESSION_STATE_CHANGED))
        session_state(m, &r, !(status & QG_MY_STATUS_MORE_RESULTS_EXIST));
    return status;
}

/* An EOF packet (0xfe, warnings, status) or, with CLIENT_DEPRECATE_EOF, the
 * OK packet in its place: the status. */
static unsigned eof_packet(qg_wire_my *m, const uint8_t *p, size_t n)
{
    if (m->caps & QG_MY_CLIENT_DEPRECATE_EOF)
        return ok_packet(m, p, n);
    if (n < 5)
        return 0;
    unsigned status = le16(p + 3);
    take_status(m, status);
    return status;
}

/* The answer read so far leaves nothing for the next one. */
static void answer_ended(qg_wire_my *m)
{
    m->answer = QG_MY_ANS_FIRST;
    m->answer_status_seen = false;
    m->report.seen = false;
}

void qg_wire_my_login_ok(qg_wire_my *m, qg_wire_session *s, const uint8_t *p, size_t n)
{
    qg_wire_my_set_charset(s, m->login_charset, strlen(m->login_charset));
    m->known = m->login_charset[0] != '\0';
    m->flags_known = true; /* the server's bits: ANSI_QUOTES only where reported */
    ok_packet(m, p, n);
    qg_wire_my_set_flags(s, m->answer_status_seen ? status_flags(m, m->answer_status) : 0);
    if (m->report.seen) {
        qg_wire_my_set_charset(s, m->report.charset, strlen(m->report.charset));
        m->known = true;
    }
    answer_ended(m);
}

/* ------------------------------------------------------------ prepared */

static qg_wire_my_stmt *find_stmt(qg_wire_my *m, uint32_t id)
{
    for (size_t i = 0; i < m->nstmts; i++)
        if (m->stmts[i].id == id)
            return &m->stmts[i];
    return NULL;
}

static void forget_stmt(qg_wire_my *m, uint32_t id)
{
    qg_wire_my_stmt *s = find_stmt(m, id);
    if (s)
        *s = m->stmts[--m->nstmts];
}

static void keep_stmt(qg_wire_my *m, uint32_t id, const qg_my_change *change)
{
    forget_stmt(m, id);
    if (m->nstmts >= PREPARED_MAX) {
        m->lost = true; /* cannot tell what its execution does */
        return;
    }
    qg_wire_my_stmt *grown = realloc(m->stmts, (m->nstmts + 1) * sizeof *grown);
    if (!grown) {
        m->lost = true;
        return;
    }
    m->stmts = grown;
    m->stmts[m->nstmts++] = (qg_wire_my_stmt){id, *change};
}

static qg_wire_my_named *find_named(qg_wire_my *m, const char *name, size_t len)
{
    for (size_t i = 0; i < m->nnamed; i++)
        if (qg_my_stmt_name_is(m->named[i].name, m->named[i].name_len, name, len))
            return &m->named[i];
    return NULL;
}

static void forget_named(qg_wire_my *m, const char *name, size_t len)
{
    qg_wire_my_named *s = find_named(m, name, len);
    if (s)
        *s = m->named[--m->nnamed];
}

static void keep_named(qg_wire_my *m, const char *name, size_t len, const qg_my_change *change)
{
    forget_named(m, name, len);
    if (m->nnamed >= PREPARED_MAX || len > sizeof m->named[0].name)
        return; /* not kept: executing it is for the server to say */
    qg_wire_my_named *grown = realloc(m->named, (m->nnamed + 1) * sizeof *grown);
    if (!grown)
        return;
    m->named = grown;
    qg_wire_my_named *s = &m->named[m->nnamed++];
    memcpy(s->name, name, len);
    s->name_len = len;
    s->change = *change;
}

static bool change_any(const qg_my_change *ch)
{
    return ch->charset_set || ch->flags_set || ch->charset_unknown || ch->flags_unknown;
}

/* ------------------------------------------------------------- effects */

static void add_change(qg_wire_my_effect *e, const qg_my_change *ch)
{
    if (!change_any(ch))
        return;
    if (e->count < QG_WIRE_MY_CHANGES) {
        e->changes[e->count++] = *ch;
        return;
    }
    qg_my_change *last = &e->changes[QG_WIRE_MY_CHANGES - 1];
    last->charset_unknown = last->flags_unknown = true;
}

static qg_wire_my_effect *effect_of(const qg_my_change *ch)
{
    qg_wire_my_effect *e = calloc(1, sizeof *e);
    if (e)
        add_change(e, ch);
    return e;
}

static const qg_my_change unknown_change = {.charset_unknown = true, .flags_unknown = true};
/* COM_CHANGE_USER and COM_RESET_CONNECTION start the session anew: its
 * status bits are set from the sql_mode it starts with */
static const qg_my_change reinit_change = {
    .charset_unknown = true, .flags_unknown = true, .flags_in_status = true};

void qg_wire_my_query_effect_read(qg_wire_my *m, qg_my_plan *plan, const qg_my_state *start)
{
    if (m->next_effect) {
        free(m->next_effect);
        m->next_effect = NULL;
    }
    if (start)
        qg_my_plan_read(plan, start, NULL);
    else
        start = &plan->start;
    if (plan->walked && plan->noted == 0 && !plan->more_noted && !plan->server_decides) {
        /* read already, and no statement of note: nothing to record */
        m->next_several = plan->statements > 1;
        m->next_mid_reports = m->next_several && !plan->runs_other &&
                              !qg_my_plan_names_system_variable(plan);
        return;
    }
    m->next_several = false;
    qg_wire_my_effect e = {0};
    qg_my_plan_walk w;
    qg_my_planned st;
    qg_my_plan_walk_init(&w, plan);
    if (plan->server_decides) { /* an executable comment: whether it runs is this server's */
        qg_my_plan_read(plan, start, &m->server);
        qg_my_plan_walk_init(&w, plan);
    }
    while (qg_my_plan_walk_next(&w, &st)) {
        const qg_my_effect *fx = &st.effect;
        qg_my_change ch = fx->change;
        if (fx->executes) {
            const qg_wire_my_named *named = find_named(m, fx->stmt_name, fx->stmt_name_len);
            ch = named ? named->change : unknown_change;
            if (ch.charset_set || ch.flags_set) { /* the rest is lexed with what it set */
                qg_my_state after = st.after;
                if (ch.charset_set)
                    qg_my_state_set_charset(&after, ch.charset, strlen(ch.charset));
                if (ch.flags_set)
                    after.flags = ch.flags;
                qg_my_plan_walk_set_state(&w, &after);
            }
        }
        if (fx->prepares || fx->deallocates) {
            /* forgotten now (an unknown name runs what only the server
             * knows); a PREPARE is kept once the server answers OK */
            forget_named(m, fx->stmt_name, fx->stmt_name_len);
            if (fx->prepares && fx->stmt_name_len <= sizeof e.name) {
                e.prepares = true;
                memcpy(e.name, fx->stmt_name, fx->stmt_name_len);
                e.name_len = fx->stmt_name_len;
                e.prepared = fx->prepared;
            }
        }
        add_change(&e, &ch);
    }
    unsigned statements = qg_my_plan_walk_statements(&w);
    if (e.prepares && statements > 1)
        e.prepares = false; /* which statements ran is the server's to say */
    m->next_several = statements > 1;
    m->next_mid_reports = statements > 1 && !qg_my_plan_walk_runs_other(&w) &&
                          !qg_my_plan_names_system_variable(plan);
    if (e.count == 0 && !e.prepares)
        return;
    m->next_effect = malloc(sizeof e);
    if (m->next_effect)
        *m->next_effect = e;
    else
        m->lost = true;
}

void qg_wire_my_unreadable(qg_wire_my *m)
{
    free(m->next_effect);
    m->next_effect = effect_of(&unknown_change);
    if (!m->next_effect)
        m->lost = true;
}

/* COM_CHANGE_USER: user, auth data, database, then the collation. */
static qg_wire_my_effect *change_user_effect(const qg_wire_my *m, const uint8_t *p, size_t n)
{
    const uint8_t *end = p + n;
    p++;
    const uint8_t *nul = memchr(p, 0, (size_t)(end - p));
    qg_my_change ch = unknown_change;
    if (!nul)
        return effect_of(&ch);
    p = nul + 1;
    if (m->caps & QG_MY_CLIENT_SECURE_CONNECTION) {
        if (p >= end || (size_t)(end - p) < 1u + *p)
            return effect_of(&ch);
        p += 1 + *p;
    } else if ((nul = memchr(p, 0, (size_t)(end - p))) != NULL) {
        p = nul + 1;
    } else {
        return effect_of(&ch);
    }
    nul = p < end ? memchr(p, 0, (size_t)(end - p)) : NULL;
    if (!nul || end - (nul + 1) < 2)
        return effect_of(&ch);
    ch = reinit_change;
    const char *charset = qg_wire_mysql_charset_of_collation(le16(nul + 1));
    if (charset && strlen(charset) < sizeof ch.charset) {
        ch.charset_unknown = false;
        ch.charset_set = true;
        snprintf(ch.charset, sizeof ch.charset, "%s", charset);
    }
    return effect_of(&ch);
}

size_t qg_wire_my_needs(uint8_t command, uint32_t len)
{
    if (command == QG_MY_COM_CHANGE_USER && len < 0xffffffu)
        return 4 + (size_t)len;
    if (command == QG_MY_COM_STMT_EXECUTE || command == QG_MY_COM_STMT_BULK_EXECUTE ||
        command == QG_MY_COM_STMT_CLOSE)
        return len < 5 ? 4 + (size_t)len : 9;
    return 5;
}

static bool push(qg_wire_my *m, const qg_wire_my_pending *e)
{
    if (m->head == m->len)
        m->head = m->len = 0;
    if (m->len - m->head >= PENDING_MAX)
        return false;
    if (m->head > 0 && m->len == m->cap) {
        memmove(m->pending, m->pending + m->head, (m->len - m->head) * sizeof *m->pending);
        m->len -= m->head;
        m->head = 0;
    }
    if (m->len == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 8;
        qg_wire_my_pending *grown = realloc(m->pending, cap * sizeof *grown);
        if (!grown)
            return false;
        m->pending = grown;
        m->cap = cap;
    }
    m->pending[m->len++] = *e;
    return true;
}

void qg_wire_my_record_command(qg_wire_my *m, uint64_t pos, const uint8_t *p, size_t n,
                               bool replaced)
{
    qg_wire_my_effect *effect = m->next_effect;
    bool several = m->next_several, mid_reports = m->next_mid_reports && !replaced;
    m->next_effect = NULL;
    m->next_several = m->next_mid_reports = false;
    if (pos < m->recorded_until || n < 5) {
        free(effect);
        return;
    }
    m->recorded_until = pos + 1;
    uint8_t command = p[4];
    if (replaced) {
        free(effect);
        effect = NULL;
    }
    switch (command) {
    case QG_MY_COM_QUIT:
    case QG_MY_COM_STMT_SEND_LONG_DATA:
        free(effect);
        return; /* no answer */
    case QG_MY_COM_STMT_CLOSE:
        if (n >= 9)
            forget_stmt(m, qg_wire_le32(p + 5));
        free(effect);
        return;
    case QG_MY_COM_STMT_EXECUTE:
    case QG_MY_COM_STMT_BULK_EXECUTE: {
        free(effect);
        effect = NULL;
        uint32_t id = n >= 9 ? qg_wire_le32(p + 5) : 0;
        const qg_wire_my_stmt *s = id == NO_STMT_ID ? NULL : find_stmt(m, id);
        if (n < 9)
            effect = effect_of(&unknown_change);
        else if (id == NO_STMT_ID && m->last_prepare_changes)
            effect = effect_of(&m->last_prepare);
        else if (s)
            effect = effect_of(&s->change);
        break;
    }
    case QG_MY_COM_STMT_PREPARE:
        m->last_prepare_changes = effect && effect->count > 0;
        if (m->last_prepare_changes)
            m->last_prepare = effect->count == 1 ? effect->changes[0] : unknown_change;
        break;
    case QG_MY_COM_CHANGE_USER:
        free(effect);
        effect = change_user_effect(m, p + 4, n - 4);
        break;
    case QG_MY_COM_RESET_CONNECTION: {
        free(effect);
        qg_my_change ch = reinit_change;
        if (m->login_charset[0]) {
            ch.charset_unknown = false;
            ch.charset_set = true;
            snprintf(ch.charset, sizeof ch.charset, "%s", m->login_charset);
        }
        effect = effect_of(&ch);
        break;
    }
    default:
        break;
    }
    qg_wire_my_pending e = {command, replaced, several, mid_reports && command == QG_MY_COM_QUERY,
                            effect};
    if (!push(m, &e)) {
        free(effect);
        m->lost = true;
    }
}

/* ---------------------------------------------------------- the answers */

/* The quoting flags a command leaves, from its changes in order (each
 * either a value read from its text or one only the server knows).  The
 * status bits are the server's word only where they are fresh: right after
 * a SET of the session's sql_mode (or a new session), or equal to the flags
 * before, whichever of the two ran.  A stored routine's own SET of sql_mode
 * sets the bits, and the server gives the caller's sql_mode back when the
 * routine returns but leaves the bits: after any other command they are
 * not read. */
static void settle_flags(qg_wire_my *m, qg_wire_session *s, const qg_wire_my_pending *e,
                         bool ok, unsigned status, bool status_seen)
{
    bool partial = !ok && (e->several || e->command == QG_MY_COM_CHANGE_USER);
    /* a single statement that failed set no sql_mode (what a procedure or a
     * compound statement set in it is given back as it ends) */
    if (!ok && !partial)
        return;
    bool touched = false, known = true, in_status = false;
    unsigned flags = session_flags(s);
    for (unsigned i = 0; i < e->effect->count; i++) {
        const qg_my_change *ch = &e->effect->changes[i];
        if (ch->flags_unknown || (partial && ch->flags_set)) {
            touched = true;
            known = false;
            in_status = ch->flags_unknown && ch->flags_in_status;
        } else if (ok && ch->flags_set) {
            touched = known = true;
            flags = ch->flags;
        }
    }
    if (!touched)
        return;
    if (known) {
        qg_wire_my_set_flags(s, flags);
        m->flags_known = true;
        return;
    }
    unsigned seen = status_flags(m, status);
    if (status_seen && in_status && !e->several) {
        qg_wire_my_set_flags(s, seen);
        /* MySQL has no ANSI_QUOTES bit: only a text can say it */
        m->flags_known = m->server.mariadb;
    } else if (!(status_seen && m->server.mariadb && m->flags_known &&
                 seen == session_flags(s))) {
        m->flags_known = false;
    }
}

/* What the first pending command e did, its answer read to its end (`ok`:
 * not an error): `reported`, the answer's report of character_set_client
 * gives the value from then on; status, status_seen: the answer's last
 * status bits. */
static void take_on(qg_wire_my *m, qg_wire_session *s, qg_wire_my_pending e, bool ok,
                    bool reported, unsigned status, bool status_seen)
{
    const qg_wire_my_effect *fx = e.effect;
    if (e.replaced || e.command == QG_MY_COM_STMT_PREPARE) {
        free(e.effect);
        return;
    }
    if (fx && ok && fx->prepares)
        keep_named(m, fx->name, fx->name_len, &fx->prepared);
    /* An error: nothing of a single statement ran (but a procedure or a
     * compound statement may have run part of itself); any first few of
     * several may have. */
    bool partial = !ok && (e.several || e.command == QG_MY_COM_CHANGE_USER);
    for (unsigned i = 0; fx && i < fx->count; i++) {
        const qg_my_change *ch = &fx->changes[i];
        if (ch->charset_unknown || (partial && ch->charset_set))
            m->known = false;
        else if (ok && ch->charset_set) {
            qg_wire_my_set_charset(s, ch->charset, strlen(ch->charset));
            m->known = true;
            if (e.command == QG_MY_COM_CHANGE_USER)
                memcpy(m->login_charset, ch->charset, sizeof m->login_charset);
        }
    }
    if (fx)
        settle_flags(m, s, &e, ok, status, status_seen);
    /* A report gives character_set_client as it was when the packet was
     * sent: at the answer's end, the value from then on.  One before the end
     * may come from inside a procedure, whose return the server does not
     * report, or be followed by a SET @@name it does not report. */
    if (reported) {
        qg_wire_my_set_charset(s, m->report.charset, strlen(m->report.charset));
        m->known = true;
        if (e.command == QG_MY_COM_CHANGE_USER)
            memcpy(m->login_charset, m->report.charset, sizeof m->login_charset);
    }
    free(e.effect);
}

/* The first pending command's answer is read to its end: what it did,
 * where it did anything (inlined into the walk of the answers). */
static inline void finish(qg_wire_my *m, qg_wire_session *s, bool ok)
{
    const qg_wire_my_pending *e = &m->pending[m->head];
    /* the report's charset stays in m->report until another is read */
    bool reported = m->report.seen && (m->report.final || e->mid_reports);
    if (e->effect || reported)
        take_on(m, s, *e, ok, reported, m->answer_status, m->answer_status_seen);
    if (++m->head == m->len)
        m->head = m->len = 0;
    answer_ended(m);
}

/* COM_STMT_PREPARE answered OK: statement id, columns, parameters; their
 * definitions follow. */
static void prepare_ok(qg_wire_my *m, qg_wire_session *s, const uint8_t *p, size_t n)
{
    if (n < 9) {
        finish(m, s, true);
        return;
    }
    qg_wire_my_pending *e = &m->pending[m->head];
    if (e->effect && e->effect->count > 0 && !e->replaced)
        keep_stmt(m, qg_wire_le32(p + 1),
                  e->effect->count == 1 ? &e->effect->changes[0] : &unknown_change);
    bool eof = !(m->caps & QG_MY_CLIENT_DEPRECATE_EOF);
    uint64_t columns = le16(p + 5), params = le16(p + 7);
    m->skip = params + (params && eof) + columns + (columns && eof);
    m->rows_after_skip = false;
    if (m->skip == 0)
        finish(m, s, true);
    else
        m->answer = QG_MY_ANS_SKIP;
}

/* A result set's column count, `columns`, followed by rest[0, n) of its
 * packet (MariaDB's flag for metadata sent). */
static inline void result_columns(qg_wire_my *m, uint64_t columns, const uint8_t *rest, size_t n)
{
    bool metadata = !(m->ext_caps & QG_MARIADB_CLIENT_CACHE_METADATA) || n == 0 || *rest != 0;
    m->skip = metadata ? columns + !(m->caps & QG_MY_CLIENT_DEPRECATE_EOF) : 0;
    m->rows_after_skip = true;
    m->answer = m->skip ? QG_MY_ANS_SKIP : QG_MY_ANS_ROWS;
}

/* A result set's column count packet. */
static inline void result_head(qg_wire_my *m, const uint8_t *p, size_t n)
{
    reader r = {p, p + n, true};
    uint64_t columns = read_lenenc(&r);
    result_columns(m, columns, r.p, r.ok ? (size_t)(r.end - r.p) : 0);
}

/* A result's end (OK or EOF): another result may follow. */
static void result_end(qg_wire_my *m, qg_wire_session *s, unsigned status)
{
    if (status & QG_MY_STATUS_MORE_RESULTS_EXIST)
        m->answer = QG_MY_ANS_FIRST;
    else
        finish(m, s, true);
}

/* A server packet (its first n > 0 bytes of len) in answer to the first
 * pending command, other than a column definition before the last and a
 * row (qg_wire_my_packet_passed).  Inlined into the walk of the answers. */
__attribute__((always_inline)) static inline void answer_packet(qg_wire_my *m, qg_wire_session *s,
                                                                const uint8_t *p, size_t n,
                                                                uint64_t len)
{
    uint8_t first = p[0];
    const qg_wire_my_pending *e = &m->pending[m->head];
    bool deprecate_eof = m->caps & QG_MY_CLIENT_DEPRECATE_EOF;
    bool ends = first == 0xfe && len < (deprecate_eof ? 0xffffffu : 9u);
    switch (m->answer) {
    case QG_MY_ANS_FIRST:
        if (first != 0 && first < 0xfb && e->command == QG_MY_COM_QUERY) {
            /* the most common first packet: a column count, as the end
             * of the chain below reads it */
            result_head(m, p, n);
            return;
        }
        if (first == 0xff)
            finish(m, s, false);
        else if (e->command == QG_MY_COM_CHANGE_USER) {
            if (first == 0x00) { /* else an authentication exchange goes on */
                ok_packet(m, p, n);
                finish(m, s, true);
            }
        } else if (e->command == QG_MY_COM_STATISTICS)
            finish(m, s, true);
        else if (e->command == QG_MY_COM_STMT_PREPARE && first == 0x00)
            prepare_ok(m, s, p, n);
        else if (first == 0x00)
            result_end(m, s, ok_packet(m, p, n));
        else if (first == 0xfe)
            result_end(m, s, eof_packet(m, p, n));
        else if (first == 0xfb && e->command == QG_MY_COM_QUERY)
            m->infile = true; /* LOAD DATA LOCAL: the file's packets, then OK / ERR */
        else if (e->command == QG_MY_COM_FIELD_LIST)
            m->answer = QG_MY_ANS_UNTIL_EOF;
        else
            result_head(m, p, n);
        return;
    case QG_MY_ANS_SKIP:
        if (first == 0xff) {
            finish(m, s, false);
            return;
        }
        if (--m->skip > 0)
            return;
        if (!m->rows_after_skip) {
            finish(m, s, true);
            return;
        }
        /* a cursor was opened: the rows come by COM_STMT_FETCH */
        if (!deprecate_eof && ends && (eof_packet(m, p, n) & QG_MY_STATUS_CURSOR_EXISTS)) {
            finish(m, s, true);
            return;
        }
        m->answer = QG_MY_ANS_ROWS;
        return;
    case QG_MY_ANS_ROWS:
    case QG_MY_ANS_UNTIL_EOF:
        if (first == 0xff)
            finish(m, s, false);
        else if (ends)
            result_end(m, s, eof_packet(m, p, n));
        return;
    }
}

void qg_wire_my_packet(qg_wire_my *m, qg_wire_session *s, const uint8_t *p, size_t n, uint64_t len)
{
    if (m->head >= m->len || n == 0)
        return; /* nothing asked: not an answer to follow */
    if (!qg_wire_my_packet_passed(m, p[0]))
        answer_packet(m, s, p, n, len);
}

/* The most bytes a walk of whole packets reads from where it starts: a
 * packet of 16 MiB or more (length 0xffffff, continuation packets follow)
 * never fits in them, so that the one test of a packet's length against
 * the bytes left stops before it too. */
#define WALK_MAX (4 + (size_t)0xfffffe)

/* The packet whose header is at q (before end) is whole: *len, its
 * payload's length. */
static inline bool packet_whole(const uint8_t *q, const uint8_t *end, uint32_t *len)
{
    uintptr_t at = (uintptr_t)q + 4, stop = (uintptr_t)end;
    if (at > stop)
        return false;
    *len = qg_wire_my_header_len(q);
    return at + *len <= stop;
}

/* From q, a packet boundary before end (at most WALK_MAX bytes after the
 * walk's start), the whole packets of the first pending command's answer
 * that this walk takes as answer_packet would, without going back to the
 * general walk between them (docs/PERFORMANCE.md, "Choices in the code"):
 * a COM_QUERY's column count, definitions, the EOF after a result's
 * definitions, rows, the EOF that ends a result, empty packets.  It stops
 * before a packet cut short and one answer_packet reads (an error, an OK
 * in place of an EOF, the EOF of a cursor, the last definition of a
 * prepared statement's, any other first packet), and after a result's
 * end.  Returns where it stopped; *last: the header of the last packet
 * taken. */
static inline const uint8_t *result_walk(qg_wire_my *m, qg_wire_session *s, const uint8_t *q,
                                         const uint8_t *end, const uint8_t **last)
{
    bool eof = !(m->caps & QG_MY_CLIENT_DEPRECATE_EOF);
    uint32_t len;
    if (m->answer == QG_MY_ANS_FIRST) {
        /* the most common first packet, as answer_packet tests it first */
        if (!packet_whole(q, end, &len) || len == 0 || q[4] == 0 || q[4] >= 0xfb ||
            m->pending[m->head].command != QG_MY_COM_QUERY)
            return q;
        result_columns(m, q[4], q + 5, len - 1); /* a count below 0xfb is its byte */
        *last = q;
        q += 4 + (size_t)len;
    }
    if (m->answer == QG_MY_ANS_SKIP) {
        uint64_t skip = m->skip;
        while (packet_whole(q, end, &len)) {
            if (len > 0) {
                uint8_t first = q[4];
                if (first == 0xff || skip == 0)
                    break;
                if (skip == 1) {
                    /* the last definition, or the EOF after them: then rows */
                    if (!m->rows_after_skip)
                        break;
                    if (eof && first == 0xfe && len < 9 && len >= 5) {
                        unsigned status = le16(q + 7);
                        if (status & QG_MY_STATUS_CURSOR_EXISTS)
                            break; /* the rows come by COM_STMT_FETCH */
                        take_status(m, status);
                    }
                    skip = 0;
                    m->answer = QG_MY_ANS_ROWS;
                    *last = q;
                    q += 4 + (size_t)len;
                    break;
                }
                skip--; /* a definition before the last */
            }
            *last = q;
            q += 4 + (size_t)len;
        }
        m->skip = skip;
    }
    if (m->answer != QG_MY_ANS_ROWS)
        return q;
    while (packet_whole(q, end, &len)) {
        const uint8_t *h = q;
        q += 4 + (size_t)len;
        /* a row: not an error, not the EOF (or OK) that ends the result */
        if (len == 0 || h[4] < 0xfe || (h[4] == 0xfe && eof && len >= 9)) {
            *last = h;
            continue;
        }
        if (h[4] == 0xff || !eof)
            return h;
        /* the EOF that ends the result */
        unsigned status = 0;
        if (len >= 5) {
            status = le16(h + 7);
            take_status(m, status);
        }
        *last = h;
        result_end(m, s, status);
        return q;
    }
    return q;
}

qg_wire_my_walked qg_wire_my_whole_packets(qg_wire_my *m, qg_wire_session *s, const uint8_t *p,
                                           size_t n)
{
    const uint8_t *q = p, *end = p + (n < WALK_MAX ? n : WALK_MAX), *last = NULL;
    uint32_t len;
    for (;;) {
        if (m->head < m->len && m->answer != QG_MY_ANS_UNTIL_EOF)
            q = result_walk(m, s, q, end, &last);
        if (!packet_whole(q, end, &len))
            break;
        const uint8_t *body = q + 4;
        last = q;
        q = body + len;
        if (len == 0 || m->head >= m->len)
            continue;
        answer_packet(m, s, body, len < QG_WIRE_KEEP_MAX ? len : QG_WIRE_KEEP_MAX, len);
        if (m->infile)
            break; /* the client's file comes next */
    }
    return (qg_wire_my_walked){(size_t)(q - p), last};
}

/* ----------------------------------------------------------- the states */

static bool same_state(const qg_my_state *a, const qg_my_state *b)
{
    return a->flags == b->flags && strcmp(a->charset, b->charset) == 0;
}

static bool add_state(qg_my_state *states, size_t cap, size_t *count, const qg_my_state *st)
{
    for (size_t i = 0; i < *count; i++)
        if (same_state(&states[i], st))
            return true;
    if (*count >= cap)
        return false;
    states[(*count)++] = *st;
    return true;
}

bool qg_wire_my_states(const qg_wire_my *m, const qg_wire_session *s, qg_my_state *states,
                       size_t cap, size_t *count)
{
    *count = 0;
    if (!m->known || !m->flags_known || m->lost || cap == 0)
        return false;
    states[(*count)++] = s->my_state;
    for (size_t i = m->head; i < m->len; i++) {
        const qg_wire_my_pending *e = &m->pending[i];
        if (e->replaced || !e->effect || e->command == QG_MY_COM_STMT_PREPARE)
            continue;
        /* each state so far, with any first few of the command's changes */
        size_t before = *count;
        for (size_t k = 0; k < before; k++) {
            qg_my_state run[4] = {states[k]};
            size_t nrun = 1;
            for (unsigned j = 0; j < e->effect->count; j++) {
                const qg_my_change *ch = &e->effect->changes[j];
                if (ch->charset_unknown)
                    return false;
                qg_my_state next[4] = {{{0}, 0}};
                size_t nnext = 0;
                for (size_t r = 0; r < nrun; r++) {
                    qg_my_state st = run[r];
                    if (ch->charset_set)
                        qg_my_state_set_charset(&st, ch->charset, strlen(ch->charset));
                    if (ch->flags_set)
                        st.flags = ch->flags;
                    if (ch->flags_unknown) {
                        /* every quoting mode: all four go on */
                        for (unsigned f = 0; f < 4; f++) {
                            st.flags = (f & 1 ? QG_NO_BACKSLASH_ESCAPES : 0) |
                                       (f & 2 ? QG_ANSI_QUOTES : 0);
                            if (!add_state(next, 4, &nnext, &st))
                                return false;
                        }
                    } else if (!add_state(next, 4, &nnext, &st)) {
                        return false;
                    }
                }
                memcpy(run, next, nnext * sizeof *next);
                nrun = nnext;
                for (size_t r = 0; r < nrun; r++)
                    if (!add_state(states, cap, count, &run[r]))
                        return false;
            }
        }
    }
    return true;
}
