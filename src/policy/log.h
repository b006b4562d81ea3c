/* Findings and shim events as JSON lines: stderr, syslog or a file.
 *
 * Finding line: {"time":"2026-12-03T07:06:39.123Z","pid":N,"program":"…",
 *   "mode":"enforce","action":"blocked","api":"PQexec","dialect":"postgres",
 *   "encoding":"SJIS","conn":"0x…","reason":"structure_mismatch","offset":N,
 *   "span":[start,end],"excerpt":"…","fingerprint":"16 hex digits",
 *   "caller":"object!symbol+0xoff" | "object+0xoff","shape":"16 hex digits",
 *   "shape_known":true|false,"detail":"…"}
 *   The excerpt is query bytes [max(0, offset-16), +64); "caller", "shape"
 *   and "detail" appear only when known, "shape_known" only with a shapes
 *   profile.
 * Event line:   {"time":…,"pid":N,"program":…,"level":"error","event":"…","detail":"…"}
 * Startup line: {"time":…,"event":"attached","pid":N,"program":…,"mode":…,"libraries":"…"}
 * A line never exceeds QG_LOG_LINE_MAX bytes; a line that would is cut at a
 * field boundary (a string value is cut between escapes) and ends with
 * "truncated":true, still valid JSON.  Each line is one write() (file, stderr)
 * or one datagram (syslog), so lines of concurrent writers never interleave.
 *
 * Destinations (settings log): a file, stderr, syslog or journal.  Without
 * one chosen, the log is quiet: a blocked query and an error go to stderr,
 * other findings and warnings to syslog, and the startup line and "info"
 * events nowhere (unless verbose is set: then everything to stderr).
 * Syslog: one datagram, ident "quoteguard", the configured facility, to the
 * socket named by syslog:PATH, else journald's native socket when it exists
 * (the line is MESSAGE=, and each field also QUOTEGUARD_<KEY>=), else
 * /dev/log; the shim does not call openlog(), which would change the host
 * program's own ident and facility.
 * Findings are written unless the mode is off; the startup line and "info"
 * events at verbosity >= 1 (the default with a destination chosen); "debug"
 * events at verbosity 2; other levels always.
 *
 * Faults never reach the program: a file is opened without blocking and only
 * when it is a regular file or a character device; stderr is written only
 * while descriptor 2 is the one the program started with and not a socket
 * that carried database traffic; SIGPIPE and SIGXFSZ raised by a write are
 * taken back; a regular file is not written past the file-size limit; a
 * syslog socket that would block drops the line.  A line that cannot be
 * written is lost and counted: the first loss is reported once through the
 * other destination (stderr, or syslog for stderr) as a "log_lines_lost"
 * event, and the total when the destination works again or at exit. */
#ifndef QG_LOG_H
#define QG_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "quoteguard.h"

#define QG_LOG_LINE_MAX 4096

typedef struct qg_log_finding {
    const char *api;          /* "PQexec", "mysql_real_query" … */
    qg_dialect dialect;
    const char *encoding;     /* canonical encoding name, or the unknown name */
    const void *conn;         /* connection handle, logged as an id */
    const char *action;       /* "blocked", "logged" or "allowed" */
    qg_reason reason;         /* QG_REASON_NONE for a shim-level problem */
    const char *reason_name;  /* logged instead of qg_reason_name(reason) when not
                                 NULL: findings outside the checker ("unknown_shape") */
    const char *detail;       /* extra text (e.g. "unknown encoding"), or NULL */
    size_t offset;
    size_t span_start, span_end;
    const char *sql;          /* the query, for the excerpt */
    size_t sql_len;
    uint64_t fingerprint;
    const void *caller;       /* return address of the intercepted call */
    uint64_t shape;           /* the query's shape (shape.h), 0: not logged */
    int shape_known;          /* 1/0: the shape is/is not in the shapes
                                 profile; -1: no profile in use */
} qg_log_finding;

/* One JSON line per finding; never more than 64 bytes of the query (unless
 * the operator asked for full queries), every non-printable byte escaped. */
void qg_log_write_finding(const qg_settings *s, const qg_log_finding *f);
/* The start-up line: pid, program, mode, libraries found. */
void qg_log_write_startup(const qg_settings *s, const char *libraries);
/* A shim event (bad config value, missing symbol, rewritten query at debug). */
void qg_log_write_event(const qg_settings *s, const char *level, const char *event,
                        const char *detail);

/* Notes that fd carries database traffic (fronts: PQsocket, mysql_get_socket,
 * the wire front's sockets): the log never writes into that socket, even
 * when it becomes descriptor 2.  Cheap enough for every query: a system
 * call only the first time a descriptor number is seen. */
#define QG_NOTED_FD_LIMIT 1024
extern unsigned long qg_noted_fds[QG_NOTED_FD_LIMIT / (8 * sizeof(unsigned long))];
void qg_log_note_new_db_socket(int fd);
static inline void qg_log_note_db_socket(int fd)
{
    if (fd >= 0 && fd < QG_NOTED_FD_LIMIT &&
        (__atomic_load_n(&qg_noted_fds[fd / (8 * sizeof(unsigned long))], __ATOMIC_RELAXED) &
         1UL << (fd % (8 * sizeof(unsigned long)))))
        return; /* noted before: the check stays in line */
    qg_log_note_new_db_socket(fd);
}

/* Opens path (flags | O_CLOEXEC | O_NOCTTY | O_NONBLOCK) only when it is a
 * regular file or a character device: a FIFO, a socket or a terminal never
 * holds or changes the program.  -1 with errno and *why ("PATH: reason"). */
int qg_log_open_file(const char *path, int flags, mode_t mode, char *why, size_t cap);
/* One write() of the whole buffer: never past the file-size limit of a
 * regular file (no half line, no SIGXFSZ), and a SIGPIPE or SIGXFSZ it
 * raises is taken back.  False with *why on any failure or short write. */
bool qg_log_write_whole(int fd, const void *buf, size_t len, char *why, size_t cap);

/* "2026-12-03T07:06:39.123Z": now, UTC, as the log lines have it.  No
 * time-zone file is read. */
void qg_log_format_time(char *out, size_t cap);
/* A return address as "object!symbol+0xoff", "object+0xoff" or "0x…";
 * an object without a name is called `program`. */
void qg_log_format_caller(char *out, size_t cap, const void *caller, const char *program);

/* Escapes bytes for a JSON string: printable ASCII kept, '"' and '\\'
 * escaped, every other byte as \u00XX.  Writes at most cap-1 bytes plus NUL;
 * returns the bytes written. For tests. */
size_t qg_json_escape(char *out, size_t cap, const unsigned char *in, size_t len);

#endif
