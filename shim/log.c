/* JSON-lines log.  Each line is built in a fixed stack buffer and leaves in
 * one write() (or one syslog datagram), so concurrent threads and processes
 * appending to the same file never interleave, and nothing is allocated. */
#include "log.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "hot.h"

#define SYSLOG_SOCKET_PATH "/dev/log"
/* Query bytes shown before the finding's offset, out of the 64 of an excerpt. */
#define EXCERPT_BYTES 64
#define EXCERPT_LEAD 16
/* Room kept after a full-query excerpt for the fields that follow it. */
#define AFTER_EXCERPT_RESERVE 768

/* --------------------------------------------------------------- escaping */

/* Escapes as many whole input bytes as fit in cap output bytes (no NUL);
 * *consumed tells how many input bytes made it. */
static size_t escape_into(char *out, size_t cap, const unsigned char *in, size_t len,
                          size_t *consumed)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0, i = 0;
    for (; i < len; i++) {
        unsigned char c = in[i];
        if (c == '"' || c == '\\') {
            if (cap - o < 2)
                break;
            out[o++] = '\\';
            out[o++] = (char)c;
        } else if (c >= 0x20 && c < 0x7f) {
            if (cap - o < 1)
                break;
            out[o++] = (char)c;
        } else {
            if (cap - o < 6)
                break;
            memcpy(out + o, "\\u00", 4); // NOLINT(bugprone-not-null-terminated-result): a part of out
            out[o + 4] = hex[c >> 4];
            out[o + 5] = hex[c & 15];
            o += 6;
        }
    }
    *consumed = i;
    return o;
}

size_t qg_json_escape(char *out, size_t cap, const unsigned char *in, size_t len)
{
    if (cap == 0)
        return 0;
    size_t consumed;
    size_t n = escape_into(out, cap - 1, in, len, &consumed);
    out[n] = '\0';
    return n;
}

/* ----------------------------------------------------------- line builder */

static const char truncated_tail[] = ",\"truncated\":true}\n";

/* A JSON object being built.  Each field is added whole or not at all (a
 * string value may be cut between escapes); room for the closing tail is
 * always kept, so the line stays valid JSON whatever gets cut. */
typedef struct line {
    char buf[QG_LOG_LINE_MAX];
    size_t len;
    size_t field_start;
    unsigned fields;
    bool field_failed;
    bool truncated;
} line;

static void line_init(line *l)
{
    l->buf[0] = '{';
    l->len = 1;
    l->fields = 0;
    l->field_failed = false;
    l->truncated = false;
}

static size_t line_room(const line *l)
{
    return sizeof l->buf - (sizeof truncated_tail - 1) - l->len;
}

static void put(line *l, const char *text, size_t n)
{
    if (l->field_failed)
        return;
    if (n > line_room(l)) {
        l->field_failed = true;
        return;
    }
    memcpy(l->buf + l->len, text, n);
    l->len += n;
}

static void put_str(line *l, const char *text)
{
    put(l, text, strlen(text));
}

static void field_begin(line *l, const char *key)
{
    l->field_start = l->len;
    l->field_failed = false;
    put_str(l, l->fields ? ",\"" : "\"");
    put_str(l, key);
    put_str(l, "\":");
}

static void field_end(line *l)
{
    if (l->field_failed) {
        l->len = l->field_start;
        l->truncated = true;
    } else {
        l->fields++;
    }
    l->field_failed = false;
}

/* A string field; keeps `reserve_after` bytes free for later fields. */
static void field_bytes(line *l, const char *key, const void *bytes, size_t n,
                        size_t reserve_after)
{
    field_begin(l, key);
    put_str(l, "\"");
    if (!l->field_failed) {
        size_t room = line_room(l);
        size_t avail = room > 1 + reserve_after ? room - 1 - reserve_after : 0;
        size_t consumed;
        l->len += escape_into(l->buf + l->len, avail, bytes, n, &consumed);
        if (consumed < n)
            l->truncated = true;
    }
    put_str(l, "\"");
    field_end(l);
}

static void field_string(line *l, const char *key, const char *value)
{
    if (!value)
        value = "";
    field_bytes(l, key, value, strlen(value), 0);
}

/* A field whose value is already JSON (a number, an array). */
static void field_raw(line *l, const char *key, const char *json)
{
    field_begin(l, key);
    put_str(l, json);
    field_end(l);
}

static void field_uint(line *l, const char *key, unsigned long long value)
{
    char text[24];
    snprintf(text, sizeof text, "%llu", value);
    field_raw(l, key, text);
}

/* ISO-8601 UTC with milliseconds; the civil date is computed here (days to
 * year/month/day) so that no time-zone file is ever loaded. */
void qg_log_format_time(char *out, size_t cap)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t secs = ts.tv_sec;
    int64_t days = secs / 86400;
    int64_t in_day = secs % 86400;
    if (in_day < 0) {
        in_day += 86400;
        days--;
    }
    /* Shift the epoch to 0000-03-01 so that leap days end each 400-year era. */
    int64_t z = days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t day_of_era = z - era * 146097;
    int64_t year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
    int64_t day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    int64_t month_from_march = (5 * day_of_year + 2) / 153;
    int64_t day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    int64_t month = month_from_march < 10 ? month_from_march + 3 : month_from_march - 9;
    int64_t year = year_of_era + era * 400 + (month <= 2);

    snprintf(out, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", (int)year, (int)month, (int)day,
             (int)(in_day / 3600), (int)(in_day / 60 % 60), (int)(in_day % 60),
             (int)(ts.tv_nsec / 1000000));
}

static void field_time(line *l)
{
    char text[64];
    qg_log_format_time(text, sizeof text);
    field_string(l, "time", text);
}

static void line_finish(line *l)
{
    if (l->truncated) {
        memcpy(l->buf + l->len, truncated_tail, sizeof truncated_tail - 1);
        l->len += sizeof truncated_tail - 1;
    } else {
        memcpy(l->buf + l->len, "}\n", 2);
        l->len += 2;
    }
}

/* ------------------------------------------------------------------ sinks */

/* A descriptor the log opened, remembered with its inode: a program that
 * closes every descriptor (typically after fork) may reuse the number. */
typedef struct owned_fd {
    int fd;
    dev_t dev;
    ino_t ino;
} owned_fd;

static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static owned_fd log_file = {.fd = -1};
QG_FAR_BSS static char log_file_path[QG_PATH_MAX];
static owned_fd syslog_socket = {.fd = -1};
static bool log_open_failure_reported;

/* A fork while another thread writes must not leave the child's lock held. */
static void lock_sinks(void)
{
    pthread_mutex_lock(&sink_lock);
}

static void unlock_sinks(void)
{
    pthread_mutex_unlock(&sink_lock);
}

static void register_atfork(void)
{
    pthread_atfork(lock_sinks, unlock_sinks, unlock_sinks);
}

static bool still_ours(const owned_fd *o)
{
    struct stat st;
    return o->fd >= 0 && fstat(o->fd, &st) == 0 && st.st_dev == o->dev && st.st_ino == o->ino;
}

static void adopt(owned_fd *o, int fd)
{
    struct stat st;
    o->fd = fd;
    if (fstat(fd, &st) == 0) {
        o->dev = st.st_dev;
        o->ino = st.st_ino;
    }
}

/* Closes our descriptor, unless the program already closed it and the
 * number now belongs to something else. */
static void release(owned_fd *o)
{
    if (still_ours(o))
        close(o->fd);
    o->fd = -1;
}

static void write_all_once(int fd, const char *buf, size_t len)
{
    ssize_t n;
    do
        n = write(fd, buf, len);
    while (n < 0 && errno == EINTR);
}

/* The log file, (re)opened when the path changed, the file was rotated
 * away, or the descriptor is no longer ours. */
static int log_file_fd(const char *path)
{
    if (log_file.fd >= 0) {
        struct stat on_disk;
        bool same_path = strcmp(path, log_file_path) == 0;
        if (same_path && still_ours(&log_file) && stat(path, &on_disk) == 0 &&
            on_disk.st_dev == log_file.dev && on_disk.st_ino == log_file.ino)
            return log_file.fd;
        release(&log_file);
    }
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0640);
    if (fd < 0)
        return -1;
    adopt(&log_file, fd);
    snprintf(log_file_path, sizeof log_file_path, "%s", path);
    return fd;
}

static void write_to_file(const char *path, const line *l)
{
    int fd = log_file_fd(path);
    if (fd >= 0) {
        write_all_once(fd, l->buf, l->len);
        return;
    }
    if (!log_open_failure_reported) {
        log_open_failure_reported = true;
        int err = errno;
        char detail[QG_PATH_MAX + 128];
        snprintf(detail, sizeof detail, "cannot open log file %s: %s; logging to stderr", path,
                 strerrordesc_np(err));
        line notice;
        line_init(&notice);
        field_time(&notice);
        field_uint(&notice, "pid", (unsigned long long)getpid());
        field_string(&notice, "level", "error");
        field_string(&notice, "event", "log_open_failed");
        field_string(&notice, "detail", detail);
        line_finish(&notice);
        write_all_once(STDERR_FILENO, notice.buf, notice.len);
    }
    write_all_once(STDERR_FILENO, l->buf, l->len);
}

static int syslog_connect(void)
{
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    memcpy(addr.sun_path, SYSLOG_SOCKET_PATH, sizeof SYSLOG_SOCKET_PATH);
    if (connect(fd, (const struct sockaddr *)&addr, sizeof addr) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void write_to_syslog(int facility, int severity, const line *l)
{
    /* "<PRI>quoteguard[pid]: " then the JSON without its newline.  No
     * timestamp: syslog daemons stamp on receipt, and the JSON has "time". */
    char datagram[QG_LOG_LINE_MAX + 64];
    int head = snprintf(datagram, sizeof datagram, "<%d>quoteguard[%d]: ", facility | severity,
                        (int)getpid());
    size_t body = l->len - 1;
    memcpy(datagram + head, l->buf, body);
    size_t len = (size_t)head + body;

    for (int attempt = 0; attempt < 2; attempt++) {
        if (!still_ours(&syslog_socket)) {
            syslog_socket.fd = -1;
            int fd = syslog_connect();
            if (fd < 0)
                break;
            adopt(&syslog_socket, fd);
        }
        ssize_t n;
        do
            n = send(syslog_socket.fd, datagram, len, MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        if (n >= 0)
            return;
        /* The daemon restarted: connect again once. */
        release(&syslog_socket);
    }
    write_all_once(STDERR_FILENO, l->buf, l->len);
}

static void emit(const qg_settings *s, int severity, line *l)
{
    line_finish(l);
    pthread_once(&atfork_once, register_atfork);
    pthread_mutex_lock(&sink_lock);
    switch (s->log_sink) {
    case QG_LOG_FILE:
        write_to_file(s->log_path, l);
        break;
    case QG_LOG_SYSLOG:
        write_to_syslog(s->syslog_facility, severity, l);
        break;
    case QG_LOG_STDERR:
        write_all_once(STDERR_FILENO, l->buf, l->len);
        break;
    }
    pthread_mutex_unlock(&sink_lock);
}

/* ------------------------------------------------------------------ lines */

static void common_head(line *l, const qg_settings *s)
{
    line_init(l);
    field_time(l);
    field_uint(l, "pid", (unsigned long long)getpid());
    field_string(l, "program", s->program);
}

void qg_log_format_caller(char *out, size_t cap, const void *caller, const char *program)
{
    Dl_info info;
    if (dladdr(caller, &info) && info.dli_fname) {
        const char *object = strrchr(info.dli_fname, '/');
        object = object ? object + 1 : info.dli_fname;
        if (!*object)
            object = program;
        if (info.dli_sname && info.dli_saddr)
            snprintf(out, cap, "%s!%s+0x%" PRIxPTR, object, info.dli_sname,
                     (uintptr_t)caller - (uintptr_t)info.dli_saddr);
        else
            snprintf(out, cap, "%s+0x%" PRIxPTR, object,
                     (uintptr_t)caller - (uintptr_t)info.dli_fbase);
        return;
    }
    snprintf(out, cap, "0x%" PRIxPTR, (uintptr_t)caller);
}

void qg_log_write_finding(const qg_settings *s, const qg_log_finding *f)
{
    if (s->mode == QG_MODE_OFF)
        return;
    line l;
    char text[512];
    common_head(&l, s);
    field_string(&l, "mode", qg_mode_name(s->mode));
    field_string(&l, "action", f->action);
    field_string(&l, "api", f->api);
    field_string(&l, "dialect", f->dialect == QG_DIALECT_MYSQL ? "mysql" : "postgres");
    field_string(&l, "encoding", f->encoding);
    snprintf(text, sizeof text, "0x%" PRIxPTR, (uintptr_t)f->conn);
    field_string(&l, "conn", text);
    field_string(&l, "reason", f->reason_name ? f->reason_name : qg_reason_name(f->reason));
    field_uint(&l, "offset", f->offset);
    snprintf(text, sizeof text, "[%zu,%zu]", f->span_start, f->span_end);
    field_raw(&l, "span", text);

    const unsigned char *sql = (const unsigned char *)f->sql;
    size_t sql_len = sql ? f->sql_len : 0;
    size_t from = 0, to = sql_len;
    if (!s->log_full_query) {
        size_t at = f->offset < sql_len ? f->offset : sql_len;
        from = at > EXCERPT_LEAD ? at - EXCERPT_LEAD : 0;
        to = sql_len - from > EXCERPT_BYTES ? from + EXCERPT_BYTES : sql_len;
    }
    field_bytes(&l, "excerpt", sql ? sql + from : sql, to - from, AFTER_EXCERPT_RESERVE);

    snprintf(text, sizeof text, "%016" PRIx64, f->fingerprint);
    field_string(&l, "fingerprint", text);
    if (f->caller) {
        qg_log_format_caller(text, sizeof text, f->caller, s->program);
        field_string(&l, "caller", text);
    }
    if (f->shape) {
        snprintf(text, sizeof text, "%016" PRIx64, f->shape);
        field_string(&l, "shape", text);
    }
    if (f->shape_known >= 0 && f->shape)
        field_raw(&l, "shape_known", f->shape_known ? "true" : "false");
    if (f->detail)
        field_string(&l, "detail", f->detail);
    emit(s, LOG_WARNING, &l);
}

void qg_log_write_startup(const qg_settings *s, const char *libraries)
{
    if (s->verbosity < 1)
        return;
    line l;
    line_init(&l);
    field_time(&l);
    field_string(&l, "event", "attached");
    field_uint(&l, "pid", (unsigned long long)getpid());
    field_string(&l, "program", s->program);
    field_string(&l, "mode", qg_mode_name(s->mode));
    if (s->mode == QG_MODE_REWRITE)
        field_string(&l, "rewrite", s->rewrite_all ? "all" : "needed");
    field_string(&l, "libraries", libraries);
    emit(s, LOG_INFO, &l);
}

void qg_log_write_event(const qg_settings *s, const char *level, const char *event,
                        const char *detail)
{
    int severity = LOG_WARNING;
    if (strcmp(level, "debug") == 0) {
        if (s->verbosity < 2)
            return;
        severity = LOG_DEBUG;
    } else if (strcmp(level, "info") == 0) {
        if (s->verbosity < 1)
            return;
        severity = LOG_INFO;
    } else if (strcmp(level, "error") == 0) {
        severity = LOG_ERR;
    }
    line l;
    common_head(&l, s);
    field_string(&l, "level", level);
    field_string(&l, "event", event);
    if (detail)
        field_string(&l, "detail", detail);
    emit(s, severity, &l);
}
