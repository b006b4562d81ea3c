/* The wire front's MySQL session (src/wire/wire_mysql.c): what the two sides
 * agreed, the commands written whose answers are not read yet, and the
 * states a query written now may meet.
 *
 * The state is the server's word where it gives one — the handshake's
 * collation and the login OK's quoting status bits, a session-tracking
 * report when the client asked for one, the status bits after a SET of
 * sql_mode — and otherwise what an answered statement plainly sets (SET
 * NAMES x, SET character_set_client / sql_mode to a literal, the same
 * through EXECUTE IMMEDIATE, SET STATEMENT … FOR, a prepared statement, a
 * COM_CHANGE_USER's collation, COM_RESET_CONNECTION's return to the
 * connection's).  A CALL leaves the state as it was: the server gives a
 * procedure's caller its character set and sql_mode back when it returns
 * (but not the status bits, nor a report of the return, so neither is
 * taken from inside a procedure's answer).  A statement whose effect only
 * the server knows makes the state unknown until one of those says it
 * again.  A query written before the answers to earlier commands came is
 * checked under every state they may leave. */
#ifndef QG_WIRE_MYSQL_H
#define QG_WIRE_MYSQL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mysql_plan.h"
#include "mysql_statements.h"
#include "wire_session.h"

/* A MySQL packet's length (3 bytes, little-endian). */
static inline uint32_t qg_wire_le24(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
}

/* Four bytes as the CPU lays them out: one load, which each protocol's
 * reader puts in its byte order. */
static inline uint32_t qg_wire_load32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* A MySQL 4-byte integer (little-endian). */
static inline uint32_t qg_wire_le32(const uint8_t *p)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return __builtin_bswap32(qg_wire_load32(p));
#else
    return qg_wire_load32(p);
#endif
}

/* qg_wire_le24 of a header whose 4 bytes are all at hand: one load. */
static inline uint32_t qg_wire_my_header_len(const uint8_t *p)
{
    return qg_wire_le32(p) & 0xffffffu;
}

/* At most this many changes are kept for one command; more make its
 * effect unknown. */
#define QG_WIRE_MY_CHANGES 4
/* At most this many states are checked for one query; more are unknown. */
#define QG_WIRE_MY_STATES 16

/* What one command may do to the state once the server ran it: the
 * changes of its statements in order (after an error, any first few of
 * them may have run). */
/* The MySQL capability flags the wire front reads (handshake). */
enum {
    QG_MY_CLIENT_MYSQL = 1u,
    QG_MY_CLIENT_COMPRESS = 0x20u,
    QG_MY_CLIENT_PROTOCOL_41 = 0x200u,
    QG_MY_CLIENT_SSL = 0x800u,
    QG_MY_CLIENT_SECURE_CONNECTION = 0x8000u,
    QG_MY_CLIENT_SESSION_TRACK = 1u << 23,
    QG_MY_CLIENT_DEPRECATE_EOF = 1u << 24,
    QG_MY_CLIENT_ZSTD_COMPRESSION = 1u << 26, /* MySQL 8 */
    QG_MY_CLIENT_QUERY_ATTRIBUTES = 1u << 27,
    QG_MARIADB_CLIENT_CACHE_METADATA = 1u << 4, /* of MariaDB's extended flags */
};

/* The MySQL commands (a command packet's first byte) the wire front reads. */
enum {
    QG_MY_COM_QUIT = 0x01,
    QG_MY_COM_QUERY = 0x03,
    QG_MY_COM_FIELD_LIST = 0x04,
    QG_MY_COM_STATISTICS = 0x09,
    QG_MY_COM_CHANGE_USER = 0x11,
    QG_MY_COM_STMT_PREPARE = 0x16,
    QG_MY_COM_STMT_EXECUTE = 0x17,
    QG_MY_COM_STMT_SEND_LONG_DATA = 0x18,
    QG_MY_COM_STMT_CLOSE = 0x19,
    QG_MY_COM_RESET_CONNECTION = 0x1f,
    QG_MY_COM_STMT_BULK_EXECUTE = 0xfa,
};

typedef struct qg_wire_my_effect {
    unsigned count;
    qg_my_change changes[QG_WIRE_MY_CHANGES];
    /* SQL PREPARE name FROM text: registered when the server answers OK */
    bool prepares;
    char name[66];
    size_t name_len;
    qg_my_change prepared;
} qg_wire_my_effect;

/* A command written whose answer is not read to its end yet. */
typedef struct qg_wire_my_pending {
    uint8_t command;
    bool replaced; /* a blocked query's replacement: answered with an error */
    bool several;  /* a text of several statements */
    /* a session-state report before the answer's end gives the value from
     * then on: a text of several statements that runs no other statement
     * and sets no variable the server may not report (SET @@name) */
    bool mid_reports;
    qg_wire_my_effect *effect; /* NULL: changes nothing */
} qg_wire_my_pending;

/* The last report of character_set_client in the answer being read. */
typedef struct qg_wire_my_report {
    bool seen;
    bool final; /* in the answer's last packet */
    char charset[QG_MY_CHARSET_MAX];
} qg_wire_my_report;

/* A prepared statement (binary protocol) whose text changes the state. */
typedef struct qg_wire_my_stmt {
    uint32_t id;
    qg_my_change change;
} qg_wire_my_stmt;

/* A statement prepared by name (SQL PREPARE). */
typedef struct qg_wire_my_named {
    char name[66];
    size_t name_len;
    qg_my_change change;
} qg_wire_my_named;

/* Where the answer to the first pending command stands. */
typedef enum qg_wire_my_answer {
    QG_MY_ANS_FIRST = 0, /* its first packet (or the next result's) is next */
    QG_MY_ANS_SKIP,      /* `skip` packets of definitions, then done or rows */
    QG_MY_ANS_ROWS,      /* rows until the terminating EOF / OK */
    QG_MY_ANS_UNTIL_EOF, /* COM_FIELD_LIST: definitions until EOF */
} qg_wire_my_answer;

typedef struct qg_wire_my {
    uint32_t server_caps, server_ext_caps; /* the greeting's */
    uint32_t caps, ext_caps;               /* client ∩ server */
    qg_my_server_kind server;
    bool greeting_seen;
    bool response_seen; /* the handshake response is written: seq-0 packets are commands */
    char login_charset[QG_MY_CHARSET_MAX]; /* what COM_RESET_CONNECTION returns to */
    /* The current state (c->session) is known: the login OK came and no
     * answered statement left it for the server alone to know since. */
    bool known;
    bool flags_known; /* the quoting modes too (MySQL reports no ANSI_QUOTES bit) */
    /* the answer being read: its last status bits, its last report */
    unsigned answer_status;
    bool answer_status_seen;
    qg_wire_my_report report;
    /* commands written, answers not read: pending[head, len) */
    qg_wire_my_pending *pending;
    size_t head, len, cap;
    bool lost; /* more commands than can be followed: the state stays unknown */
    bool told_unknown; /* audit: a text checked with the state unknown was logged */
    uint64_t recorded_until; /* client stream position after the last command recorded */
    /* the effect of the query being checked, from the front's check */
    qg_wire_my_effect *next_effect;
    bool next_several, next_mid_reports;
    /* the answer being read */
    qg_wire_my_answer answer;
    uint64_t skip;
    bool rows_after_skip;
    bool infile; /* LOAD DATA LOCAL asked for the client's file: its packets come next */
    /* prepared statements whose text changes the state */
    qg_wire_my_stmt *stmts;
    size_t nstmts;
    bool last_prepare_changes; /* for COM_STMT_EXECUTE of id 0xffffffff */
    qg_my_change last_prepare;
    qg_wire_my_named *named;
    size_t nnamed;
    /* the first eight bytes of the last text read to start with a short
     * word that changes nothing (qg_wire_my_single_effect); 0: none yet */
    uint64_t inert_head;
} qg_wire_my;

void qg_wire_my_release(qg_wire_my *m);

/* A length-encoded integer at *p (before end), *p moved past it; *ok is
 * cleared when it does not fit. */
uint64_t qg_wire_my_lenenc(const uint8_t **p, const uint8_t *end, bool *ok);
/* A length-encoded string at *p: s[0, len), *p moved past it; false when it
 * does not fit (a NULL, 0xfb, is not a string). */
bool qg_wire_my_lenenc_str(const uint8_t **p, const uint8_t *end, const uint8_t **s, size_t *len);

/* The greeting (protocol 10): the server's capabilities and version. */
void qg_wire_my_greeting(qg_wire_my *m, const uint8_t *p, size_t n);
/* The handshake response's first bytes (or the SSL request's, not
 * `inside_tls`): the agreed capabilities and the collation. */
void qg_wire_my_response(qg_wire_my *m, const uint8_t *p, size_t n, bool inside_tls);
/* The login OK: the session begins in the handshake's character set. */
void qg_wire_my_login_ok(qg_wire_my *m, qg_wire_session *s, const uint8_t *p, size_t n);

/* MySQL collation id (handshake, COM_CHANGE_USER) → character set name, or NULL. */
const char *qg_wire_mysql_charset_of_collation(unsigned id);

/* A command the client writes at stream position pos (p[0, n) holds at
 * least qg_wire_my_needs bytes of its first packet, header included),
 * recorded once (a position already recorded is not).  `replaced`: a blocked query's replacement went in its
 * place.  Takes m->next_effect for a query that passed. */
void qg_wire_my_record_command(qg_wire_my *m, uint64_t pos, const uint8_t *p, size_t n,
                               bool replaced);

/* qg_wire_my_record_command, with the most common command in line: a
 * COM_QUERY that passed, recorded with no answer pending, where the list of
 * pending commands has room (docs/PERFORMANCE.md, "Choices in the code"). */
static inline void qg_wire_my_record(qg_wire_my *m, uint64_t pos, const uint8_t *p, size_t n,
                                     bool replaced)
{
    if (__builtin_expect(n < 5 || p[4] != QG_MY_COM_QUERY || replaced || m->head != m->len ||
                             m->cap == 0 || pos < m->recorded_until,
                         0)) {
        qg_wire_my_record_command(m, pos, p, n, replaced);
        return;
    }
    m->recorded_until = pos + 1;
    m->pending[0] = (qg_wire_my_pending){.command = QG_MY_COM_QUERY,
                                         .several = m->next_several,
                                         .mid_reports = m->next_mid_reports,
                                         .effect = m->next_effect};
    m->head = 0;
    m->len = 1;
    m->next_effect = NULL;
    m->next_several = m->next_mid_reports = false;
}

/* With CLIENT_QUERY_ATTRIBUTES agreed, the bytes of a COM_QUERY payload
 * (after its command byte) that carry the attributes before the text;
 * false when they cannot be read to their end. */
bool qg_wire_my_attributes_len(const uint8_t *p, size_t n, size_t *len);

/* How many bytes of a command's first packet (payload `len` bytes, the
 * first of them `command`) are read before it is recorded: its statement
 * id, or a COM_CHANGE_USER whole. */
size_t qg_wire_my_needs(uint8_t command, uint32_t len);

/* The longest server packet read whole (an OK, a greeting): of a longer
 * one the first QG_WIRE_KEEP_MAX bytes. */
#define QG_WIRE_KEEP_MAX 4096

/* A whole server packet in the command phase (or its first `n` bytes of
 * `len`): moves the answers on, and the session with them. */
void qg_wire_my_packet(qg_wire_my *m, qg_wire_session *s, const uint8_t *p, size_t n,
                       uint64_t len);

/* What qg_wire_my_whole_packets took: `taken` bytes, the last packet's
 * header at `last` (NULL where none was taken).  Returned in registers. */
typedef struct qg_wire_my_walked {
    size_t taken;
    const uint8_t *last;
} qg_wire_my_walked;

/* Whole server packets in the command phase from a packet boundary of
 * p[0, n), each read where it lies (its first QG_WIRE_KEEP_MAX bytes) as
 * qg_wire_my_packet reads it.  Stops before a packet cut short and before
 * one of 16 MiB or more (its continuation packets), after one that asks
 * for the client's file (m->infile), and past the first 16 MiB. */
qg_wire_my_walked qg_wire_my_whole_packets(qg_wire_my *m, qg_wire_session *s, const uint8_t *p,
                                           size_t n);

/* The most packets of an answer, told by their first byte and moved over
 * in one step: a column definition before the last, a row.  False for
 * any other packet, which goes to qg_wire_my_packet. */
static inline bool qg_wire_my_packet_passed(qg_wire_my *m, uint8_t first)
{
    if (m->head >= m->len || first == 0xff)
        return false;
    if (m->answer == QG_MY_ANS_SKIP && m->skip > 1) {
        m->skip--;
        return true;
    }
    return m->answer == QG_MY_ANS_ROWS && first != 0xfe;
}

/* Sets the session's character_set_client (name[0, len), cut to fit) /
 * its quoting flags (QG_NO_BACKSLASH_ESCAPES, QG_ANSI_QUOTES), and the
 * state the checker reads them as with them. */
void qg_wire_my_set_charset(qg_wire_session *s, const char *name, size_t len);
void qg_wire_my_set_flags(qg_wire_session *s, unsigned flags);

/* The states a query written now may meet: true with states[0, *count),
 * false when one of them is for the server alone to know. */
bool qg_wire_my_states(const qg_wire_my *m, const qg_wire_session *s, qg_my_state *states,
                       size_t cap, size_t *count);

/* No command's answer is pending and the state is known: a query written
 * now meets the session's state alone (the one qg_wire_my_states gives). */
static inline bool qg_wire_my_state_alone(const qg_wire_my *m)
{
    return m->head == m->len && m->known && m->flags_known && !m->lost;
}

/* What a query's text (passed, about to be sent) does once run, read with
 * state *start from its plan (read here unless the check read it so; start
 * NULL: the check read it, from the state the text meets last): fills
 * m->next_effect (NULL when nothing). */
void qg_wire_my_query_effect_read(qg_wire_my *m, qg_my_plan *plan, const qg_my_state *start);

/* qg_wire_my_query_effect_read, with the most common text in line: one
 * the check read already, with no statement of note and no effect left
 * from before (docs/PERFORMANCE.md, "Choices in the code"). */
static inline void qg_wire_my_query_effect(qg_wire_my *m, qg_my_plan *plan,
                                           const qg_my_state *start)
{
    if (start || m->next_effect || !plan->walked || plan->noted != 0 || plan->more_noted ||
        plan->server_decides) {
        qg_wire_my_query_effect_read(m, plan, start);
        return;
    }
    m->next_several = plan->statements > 1;
    m->next_mid_reports =
        m->next_several && !plan->runs_other && !qg_my_plan_names_system_variable(plan);
}

/* qg_wire_my_query_effect_read of a text sql[0, len) of one statement (no
 * ';') that meets state *start: one whose first word changes nothing does
 * nothing a plan would record, and is not planned.  A short word read from
 * the first eight bytes alone (qg_my_short_word) is kept by those bytes
 * (m->inert_head): a text that starts with the same eight starts with the
 * same word. */
static inline void qg_wire_my_single_effect(qg_wire_my *m, const char *sql, size_t len,
                                            const qg_my_state *start)
{
    if (!m->next_effect) {
        uint64_t head = 0;
        size_t n;
        qg_my_word_kind kind;
        bool inert;
        if (len > 8)
            memcpy(&head, sql, 8);
        if (head != 0 && head == m->inert_head)
            inert = true;
        else if (qg_my_short_word(sql, len, &n, &kind)) {
            inert = kind == QG_MY_WORD_INERT;
            if (inert)
                m->inert_head = head;
        } else
            inert = qg_my_single_inert(sql, len);
        if (inert) {
            m->next_several = m->next_mid_reports = false;
            return;
        }
    }
    qg_my_plan plan;
    qg_my_plan_init_single(&plan, sql, len);
    qg_wire_my_query_effect_read(m, &plan, start);
}

/* A query sent without being read (too large, audit): its effect is the
 * server's to say. */
void qg_wire_my_unreadable(qg_wire_my *m);

#endif
