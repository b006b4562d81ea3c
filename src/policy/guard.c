/* The decision every front shares: check the query, apply mode and
 * allow-list, log the findings, and word the error a blocked caller gets. */
#include "guard.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "attach.h"
#include "counters.h"
#include "hot.h"
#include "log.h"
#include "settings.h"
#include "shape.h"
#include "shape_profile.h"

/* Calls in flight past this many are still counted but not recorded: the
 * library's inner calls for them are checked again (logged twice, never
 * skipped).  One byte a slot in each of the two flag words. */
#define CALLS_RECORDED 8

typedef struct call_in_flight {
    const void *conn;
    const char *sql; /* NULL: every query on conn is the library's own */
    size_t len;
    unsigned order;  /* when it entered: the innermost call is the latest */
} call_in_flight;

/* A slot's byte in calls_taken is set first and cleared last (claimed by an
 * enter); in qg_guard_calls_ready (guard.h) it is set once the slot is
 * filled in, and the slot is read only while it is. */
typedef qg_guard_call_flags call_flags;
_Static_assert(sizeof(call_flags) == CALLS_RECORDED, "one flag byte a slot");

/* initial-exec: the variables live in the static TLS block, so reading them
 * never calls __tls_get_addr (which may allocate) on the query path.  The
 * records are a set, not a stack: libmariadb's non-blocking calls run in a
 * coroutine of their own on the thread, and one may finish after a call
 * that started later. */
static __thread call_in_flight calls[CALLS_RECORDED] __attribute__((tls_model("initial-exec")));
static __thread call_flags calls_taken __attribute__((tls_model("initial-exec")));
__thread call_flags qg_guard_calls_ready __attribute__((tls_model("initial-exec")));
static __thread unsigned calls_entered __attribute__((tls_model("initial-exec")));
static __thread unsigned calls_unrecorded __attribute__((tls_model("initial-exec")));

/* The flags as one word, read by one load: a signal handler on this thread
 * runs between two instructions, never inside one. */
static inline uint64_t flags_now(const call_flags *f)
{
    return __atomic_load_n(&f->all, __ATOMIC_RELAXED);
}

/* The slot of the lowest flag set in `flags` (nonzero). */
static inline unsigned first_slot(uint64_t flags)
{
    return (unsigned)__builtin_ctzll(flags) / 8;
}

#define SLOT_BYTES 0x0101010101010101ULL

/* A signal handler on this thread may run between any two steps below and
 * enter and leave itself: it skips a slot once taken, and reads a slot only
 * once it is ready. */
QG_HOT bool qg_guard_inside_recorded(const void *conn, const char *sql, size_t len)
{
    for (uint64_t ready = flags_now(&qg_guard_calls_ready); ready; ready &= ready - 1) {
        const call_in_flight *c = &calls[first_slot(ready)];
        if (c->conn == conn && (!c->sql || (c->sql == sql && c->len == len)))
            return true;
    }
    return false;
}

QG_HOT bool qg_guard_enter(const void *conn, const char *sql, size_t len)
{
    if (qg_guard_inside_recorded(conn, sql, len))
        return false;
    uint64_t free_slots = ~flags_now(&calls_taken) & SLOT_BYTES;
    if (!free_slots) {
        calls_unrecorded++;
        return true;
    }
    unsigned i = first_slot(free_slots);
    call_in_flight *c = &calls[i];
    calls_taken.slot[i] = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    c->conn = conn;
    c->sql = sql;
    c->len = len;
    c->order = ++calls_entered;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    qg_guard_calls_ready.slot[i] = 1;
    return true;
}

static void release(unsigned i)
{
    qg_guard_calls_ready.slot[i] = 0;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    calls_taken.slot[i] = 0;
}

/* Calls past the records are the innermost: they entered while every slot
 * was taken. */
QG_HOT void qg_guard_leave(void)
{
    if (calls_unrecorded > 0) {
        calls_unrecorded--;
        return;
    }
    uint64_t ready = flags_now(&qg_guard_calls_ready);
    if (!ready)
        return;
    unsigned latest = first_slot(ready);
    for (ready &= ready - 1; ready; ready &= ready - 1) {
        unsigned i = first_slot(ready);
        if ((int)(calls[i].order - calls[latest].order) > 0)
            latest = i;
    }
    release(latest);
}

QG_HOT void qg_guard_leave_call(const void *conn, const char *sql, size_t len)
{
    for (uint64_t ready = flags_now(&qg_guard_calls_ready); ready; ready &= ready - 1) {
        unsigned i = first_slot(ready);
        const call_in_flight *c = &calls[i];
        if (c->conn == conn && c->sql == sql && c->len == len) {
            release(i);
            return;
        }
    }
    if (calls_unrecorded > 0)
        calls_unrecorded--;
}

static uint64_t fnv1a(uint64_t hash, const void *bytes, size_t len)
{
    const unsigned char *p = bytes;
    for (size_t i = 0; i < len; i++) {
        hash ^= p[i];
        hash *= 0x100000001b3ULL;
    }
    return hash;
}

unsigned long long qg_guard_fingerprint(qg_reason reason, const char *encoding,
                                        const char *sql, size_t len)
{
    static const unsigned char separator = 0;
    const char *name = qg_reason_name(reason);
    uint64_t hash = 0xcbf29ce484222325ULL;
    hash = fnv1a(hash, name, strlen(name));
    hash = fnv1a(hash, &separator, 1);
    hash = fnv1a(hash, encoding, strlen(encoding));
    hash = fnv1a(hash, &separator, 1);
    hash = fnv1a(hash, sql, len);
    return hash;
}

/* Why a reason blocks, in words an application developer can act on. */
static const char *explanation(qg_reason reason)
{
    switch (reason) {
    case QG_REASON_INVALID_SEQUENCE:
        return "bytes that are not a valid character in this encoding";
    case QG_REASON_STRUCTURE_MISMATCH:
        return "the server would read the quotes differently than the escaping assumed, "
               "typically a multibyte character that swallows a quote or backslash";
    case QG_REASON_UNTERMINATED:
        return "a string literal, quoted identifier or comment runs to the end of the query";
    case QG_REASON_NUL_BYTE:
        return "a NUL byte inside the query text";
    case QG_REASON_ILLFORMED_QUOTE:
        return "an ill-formed multibyte sequence right before a quote or backslash";
    case QG_REASON_ILLFORMED:
        return "an ill-formed multibyte sequence";
    case QG_REASON_NONE:
    case QG_REASON_COUNT:
        break;
    }
    return "the query could not be checked";
}

static const char *sqlstate_for(qg_reason reason)
{
    switch (reason) {
    case QG_REASON_INVALID_SEQUENCE:
    case QG_REASON_ILLFORMED_QUOTE:
    case QG_REASON_ILLFORMED:
        return "22021"; /* character_not_in_repertoire */
    default:
        return "42601"; /* syntax_error */
    }
}

static bool allow_listed(const qg_settings *s, uint64_t fingerprint)
{
    for (size_t i = 0; i < s->allow_count; i++)
        if (s->allow[i] == fingerprint)
            return true;
    return false;
}

static bool blocks_in(qg_mode mode)
{
    return mode == QG_MODE_ENFORCE || mode == QG_MODE_REWRITE;
}

static qg_log_finding log_entry(const qg_query *q, const char *encoding, uint64_t fingerprint)
{
    return (qg_log_finding){
        .api = q->api,
        .dialect = q->dialect,
        .encoding = encoding,
        .conn = q->conn,
        .sql = q->sql,
        .sql_len = q->len,
        .fingerprint = fingerprint,
        .caller = q->caller,
        .shape_known = -1,
    };
}

/* Every finding goes to the log and, when kept, to the counters. */
static void record(const qg_settings *s, const qg_log_finding *entry)
{
    qg_log_write_finding(s, entry);
    if (s->counters)
        qg_counters_finding(s, entry);
}

/* True when an `allow = shape:…` entry covers this shape sent from this
 * calling site. */
static bool shape_allowed(const qg_settings *s, const qg_query *q, uint64_t shape)
{
    char site[QG_SITE_MAX];
    site[0] = '\0';
    for (size_t i = 0; i < s->allow_shape_count; i++) {
        const qg_allow_shape *a = &s->allow_shapes[i];
        if (a->shape != shape)
            continue;
        if (a->site[0] == '\0')
            return true;
        if (site[0] == '\0')
            qg_log_format_caller(site, sizeof site, q->caller, s->program);
        if (strcmp(site, a->site) == 0)
            return true;
    }
    return false;
}

/* One fingerprint per reason (findings of a query share it), each hashed
 * at most once: the query may be long. */
typedef struct fingerprints {
    const char *encoding;
    const qg_query *q;
    uint64_t value[QG_REASON_COUNT];
    bool known[QG_REASON_COUNT];
} fingerprints;

static uint64_t fingerprint_of(fingerprints *fp, qg_reason reason)
{
    if (!fp->known[reason]) {
        fp->value[reason] = qg_guard_fingerprint(reason, fp->encoding, fp->q->sql, fp->q->len);
        fp->known[reason] = true;
    }
    return fp->value[reason];
}

/* Without the encoding the query cannot be read as the server will. */
QG_COLD static bool unknown_encoding(const qg_settings *s, const qg_query *q, const char *name,
                                     qg_decision *out)
{
    uint64_t fingerprint = qg_guard_fingerprint(QG_REASON_NONE, name, q->sql, q->len);
    bool allowed = allow_listed(s, fingerprint);
    bool block = blocks_in(s->mode) && !allowed;
    qg_log_finding entry = log_entry(q, name, fingerprint);
    entry.action = allowed ? "allowed" : block ? "blocked" : "logged";
    entry.reason = QG_REASON_NONE;
    entry.detail = "unknown client encoding; the query was not checked";
    record(s, &entry);
    if (!block)
        return true;
    out->block = true;
    out->sqlstate = "22023"; /* invalid_parameter_value */
    snprintf(out->message, sizeof out->message,
             "quoteguard: blocked: unknown client encoding \"%.64s\"", name);
    return false;
}

/* The query's shape (shape.h), computed when first asked and kept in
 * *shape for the other askers: 0 until then (no shape is 0). */
static uint64_t shape_of(const qg_query *q, const qg_context *ctx, uint64_t *shape)
{
    if (*shape == 0)
        *shape = qg_shape_compute(ctx, q->sql, q->len, NULL, 0);
    return *shape;
}

/* Shapes: looks the query's shape up in the profile.  Learn mode records a
 * new shape of a query the checker found clean (a query with findings may be
 * an attack: its shape is not learned).  Enforce mode logs a new shape as an
 * unknown_shape finding; returns true when that finding blocks the query.
 * The normalized text is made only for a new shape, which the log line or
 * the profile takes. */
static bool shape_blocks(const qg_settings *s, const qg_query *q, const qg_context *ctx,
                         bool clean, uint64_t *shape)
{
    if (qg_shape_profile_contains(s, shape_of(q, ctx, shape)))
        return false;
    if (s->shapes == QG_SHAPES_LEARN && !clean)
        return false;
    char sample[QG_SHAPE_SAMPLE_MAX];
    qg_shape_compute(ctx, q->sql, q->len, sample, sizeof sample);
    if (s->shapes == QG_SHAPES_LEARN) {
        qg_shape_profile_learn(s, *shape, q->dialect, sample, q->caller);
        return false;
    }
    bool allowed = allow_listed(s, *shape) || shape_allowed(s, q, *shape);
    bool block = blocks_in(s->mode) && !allowed;
    char detail[QG_SHAPE_SAMPLE_MAX + 32];
    snprintf(detail, sizeof detail, "shape not in the profile: %s", sample);
    qg_log_finding entry = log_entry(q, qg_encoding_name(ctx->encoding), *shape);
    entry.action = allowed ? "allowed" : block ? "blocked" : "logged";
    entry.reason_name = "unknown_shape";
    entry.detail = detail;
    entry.shape = *shape;
    entry.shape_known = 0;
    record(s, &entry);
    return block;
}

QG_COLD static bool block_unknown_shape(uint64_t shape, qg_decision *out)
{
    out->block = true;
    out->sqlstate = "42601";
    snprintf(out->message, sizeof out->message,
             "quoteguard: blocked unknown_shape %016llx: the query's shape is not in this "
             "program's shapes profile",
             (unsigned long long)shape);
    return false;
}

/* A query with findings: logs each one and decides.  *shape: the query's
 * shape as shape_of keeps it; `shape_blocked`: that shape alone blocks the
 * query. */
QG_COLD static bool judge_findings(const qg_settings *s, const qg_query *q, qg_context *ctx,
                                   qg_result *result, uint64_t *shape, bool shape_blocked,
                                   qg_decision *out)
{
    const qg_encoding *enc = ctx->encoding;
    /* Allowed reasons stop blocking; checking again with them downgraded
     * gives the exact verdict: it covers findings past the first
     * QG_MAX_FINDINGS, and checks the checker skipped once it had a
     * blocking finding. */
    fingerprints fp = {.encoding = qg_encoding_name(enc), .q = q};
    /* The shape as the server reads the query: logged, so that `quoteguard
     * report` can tell structures the program sends anyway from new ones,
     * and matched against the allow entries by shape. */
    uint64_t query_shape = shape_of(q, ctx, shape);
    bool whole_query_allowed = shape_allowed(s, q, query_shape);
    if (s->allow_count > 0 || whole_query_allowed) {
        bool downgraded = false;
        for (int reason = QG_REASON_NONE + 1; reason < QG_REASON_COUNT; reason++) {
            if (ctx->action[reason] == QG_ACTION_BLOCK &&
                (whole_query_allowed || allow_listed(s, fingerprint_of(&fp, (qg_reason)reason)))) {
                ctx->action[reason] = QG_ACTION_LOG;
                downgraded = true;
            }
        }
        if (downgraded)
            qg_check(ctx, q->sql, q->len, result);
    }
    bool block = blocks_in(s->mode) && result->verdict == QG_VERDICT_BLOCK;

    unsigned shown = result->count < QG_MAX_FINDINGS ? result->count : QG_MAX_FINDINGS;
    const qg_finding *blocker = NULL;
    for (unsigned i = 0; i < shown; i++) {
        const qg_finding *f = &result->findings[i];
        uint64_t fingerprint = fingerprint_of(&fp, f->reason);
        qg_log_finding entry = log_entry(q, fp.encoding, fingerprint);
        entry.reason = f->reason;
        entry.offset = f->offset;
        entry.span_start = f->span_start;
        entry.span_end = f->span_end;
        entry.shape = query_shape;
        if (s->shapes != QG_SHAPES_OFF)
            entry.shape_known = qg_shape_profile_contains(s, query_shape);
        if (whole_query_allowed || allow_listed(s, fingerprint)) {
            entry.action = "allowed";
        } else if (block && f->action == QG_ACTION_BLOCK) {
            entry.action = "blocked";
            if (!blocker)
                blocker = f;
        } else {
            entry.action = "logged";
        }
        record(s, &entry);
    }
    if (result->count > shown) {
        char detail[160];
        snprintf(detail, sizeof detail, "%s: %u more findings in one query were not logged",
                 q->api ? q->api : "query", result->count - shown);
        qg_log_write_event(s, "warning", "findings_not_logged", detail);
    }
    if (!block)
        return shape_blocked ? block_unknown_shape(query_shape, out) : true;

    out->block = true;
    if (blocker) {
        out->sqlstate = sqlstate_for(blocker->reason);
        snprintf(out->message, sizeof out->message, "quoteguard: blocked %s at byte %zu (%s): %s",
                 qg_reason_name(blocker->reason), blocker->offset, fp.encoding,
                 explanation(blocker->reason));
    } else {
        out->sqlstate = "42601";
        snprintf(out->message, sizeof out->message,
                 "quoteguard: blocked: a blocking finding past the first %d of %u in one query "
                 "(%s)",
                 QG_MAX_FINDINGS, result->count, fp.encoding);
    }
    return false;
}

/* In line: a clean query's whole path in the guard is one call. */
QG_HOT static inline __attribute__((always_inline)) bool decide(const qg_settings *s,
                                                                const qg_query *q,
                                                                qg_decision *out)
{
    const qg_encoding *enc = q->encoding;
    if (!enc) {
        const char *requested = q->encoding_name ? q->encoding_name : "";
        enc = qg_encoding_find(q->dialect, requested);
        if (!enc)
            return unknown_encoding(s, q, requested, out);
    }

    qg_context ctx;
    qg_guard_context(s, q->dialect, enc, q->flags, q->view, &ctx);
    qg_result result;
    bool clean = qg_check(&ctx, q->sql, q->len, &result) == QG_VERDICT_CLEAN;
    uint64_t shape = 0;
    bool shape_blocked = s->shapes != QG_SHAPES_OFF && shape_blocks(s, q, &ctx, clean, &shape);
    if (clean)
        return shape_blocked ? block_unknown_shape(shape, out) : true;
    return judge_findings(s, q, &ctx, &result, &shape, shape_blocked, out);
}

/* qg_guard_query_with, in line in both entries. */
QG_HOT static inline __attribute__((always_inline)) bool
query_with(const qg_settings *s, const qg_query *q, qg_decision *out)
{
    out->block = false;
    out->sqlstate = NULL;
    out->message[0] = '\0';
    if (s->mode == QG_MODE_OFF || !s->active)
        return true;
    bool pass = decide(s, q, out);
    if (s->counters)
        qg_counters_query(s, !pass);
    return pass;
}

bool qg_guard_query_with(const qg_settings *s, const qg_query *q, qg_decision *out)
{
    return query_with(s, q, out);
}

bool qg_guard_announce_tried;

QG_HOT bool qg_guard_query(const qg_query *q, qg_decision *out)
{
    /* A front is called, so its library is mapped: announce now if the
     * start-up probe found none (an interpreter dlopen()ed it later). */
    if (!__atomic_load_n(&qg_guard_announce_tried, __ATOMIC_RELAXED) &&
        !__atomic_exchange_n(&qg_guard_announce_tried, true, __ATOMIC_ACQ_REL))
        qg_attach_announce(); /* a plain load first: no shared write per query */
    return query_with(qg_settings_get(), q, out);
}

QG_COLD void qg_guard_report_missing(const char *name)
{
    qg_log_write_event(qg_settings_get(), "error", "missing_symbol", name);
}
