/* Findings and shim events as JSON lines: stderr, syslog or a file. */
#ifndef QG_LOG_H
#define QG_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "quoteguard.h"

typedef struct qg_log_finding {
    const char *api;          /* "PQexec", "mysql_real_query" … */
    qg_dialect dialect;
    const char *encoding;     /* canonical encoding name, or the unknown name */
    const void *conn;         /* connection handle, logged as an id */
    const char *action;       /* "blocked" or "logged" */
    qg_reason reason;         /* QG_REASON_NONE for a shim-level problem */
    const char *detail;       /* extra text (e.g. "unknown encoding"), or NULL */
    size_t offset;
    size_t span_start, span_end;
    const char *sql;          /* the query, for the excerpt */
    size_t sql_len;
    uint64_t fingerprint;
    const void *caller;       /* return address of the intercepted call */
} qg_log_finding;

/* One JSON line per finding; never more than 64 bytes of the query (unless
 * the operator asked for full queries), every non-printable byte escaped. */
void qg_log_write_finding(const qg_settings *s, const qg_log_finding *f);
/* The start-up line: pid, program, mode, libraries found. */
void qg_log_write_startup(const qg_settings *s, const char *libraries);
/* A shim event (bad config value, missing symbol, rewritten query at debug). */
void qg_log_write_event(const qg_settings *s, const char *level, const char *event,
                        const char *detail);

/* Escapes bytes for a JSON string: printable ASCII kept, '"' and '\\'
 * escaped, every other byte as \u00XX.  Writes at most cap-1 bytes plus NUL;
 * returns the bytes written. For tests. */
size_t qg_json_escape(char *out, size_t cap, const unsigned char *in, size_t len);

#endif
