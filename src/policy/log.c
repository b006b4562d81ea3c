/* JSON-lines log.  Each line is built in a fixed stack buffer and leaves in
 * one write() (or one syslog datagram), so concurrent threads and processes
 * appending to the same file never interleave, and nothing is allocated. */
#include "log.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "hot.h"
#include "real.h"

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

static void common_head(line *l, const qg_settings *s)
{
    line_init(l);
    field_time(l);
    field_uint(l, "pid", (unsigned long long)getpid());
    field_string(l, "program", s->program);
}

/* An event line, not yet finished. */
static void line_event(line *l, const qg_settings *s, const char *level, const char *event,
                       const char *detail)
{
    common_head(l, s);
    field_string(l, "level", level);
    field_string(l, "event", event);
    if (detail)
        field_string(l, "detail", detail);
}

/* ------------------------------------------------------------------ sinks */

#define JOURNAL_SOCKET_PATH "/run/systemd/journal/socket"

/* A descriptor the log opened, remembered with its inode: a program that
 * closes every descriptor (typically after fork) may reuse the number. */
typedef struct owned_fd {
    int fd;
    dev_t dev;
    ino_t ino;
} owned_fd;

/* Where a line can go.  A target that fails loses the line (never blocks,
 * never raises a signal in the program); the first loss is reported once
 * through the other target, the total when it works again or at exit. */
typedef enum target { TARGET_STDERR, TARGET_SYSLOG, TARGET_FILE, TARGET_COUNT } target;

typedef struct health {
    unsigned long lost;  /* lines lost */
    unsigned long told;  /* of those, already reported */
    bool failing;        /* the last line was lost */
    char why[QG_PATH_MAX + 160];
} health;

static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static owned_fd log_file = {.fd = -1};
QG_FAR_BSS static char log_file_path[QG_PATH_MAX];
static owned_fd syslog_socket = {.fd = -1};
QG_FAR_BSS static char syslog_socket_path[QG_PATH_MAX];
static bool syslog_native; /* syslog_socket speaks journald's native protocol */
QG_FAR_BSS static health healths[TARGET_COUNT];
static const qg_settings *tally_settings; /* for the count at exit */
/* Set while this thread writes a line: a signal handler's line then is lost
 * (counted) rather than wait for the lock its own thread holds. */
static __thread bool emitting __attribute__((tls_model("initial-exec")));
/* Datagrams are built here, under sink_lock, to keep stacks small. */
QG_FAR_BSS static char datagram[2 * QG_LOG_LINE_MAX + 512];

/* A fork while another thread writes must not leave the child's lock held. */
static void lock_sinks(void)
{
    pthread_mutex_lock(&sink_lock);
}

static void unlock_sinks(void)
{
    pthread_mutex_unlock(&sink_lock);
}

/* The parent reports the losses it had before the fork; the child only its own. */
static void unlock_sinks_in_child(void)
{
    for (target t = 0; t < TARGET_COUNT; t++)
        healths[t].told = healths[t].lost;
    pthread_mutex_unlock(&sink_lock);
}

static void register_atfork(void)
{
    pthread_atfork(lock_sinks, unlock_sinks, unlock_sinks_in_child);
}

static bool same_file(const struct stat *st, dev_t dev, ino_t ino)
{
    return st->st_dev == dev && st->st_ino == ino;
}

static bool still_ours(const owned_fd *o)
{
    struct stat st;
    return o->fd >= 0 && fstat(o->fd, &st) == 0 && same_file(&st, o->dev, o->ino);
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
        qg_libc_close(o->fd);
    o->fd = -1;
}

/* ------------------------------------------------ what stderr may be */

/* Descriptor 2 as the program started with it.  A program that closed it
 * (daemons do) gets its next file or socket there, maybe its database
 * connection: the log writes to descriptor 2 only while it is still this. */
static struct {
    bool open;
    dev_t dev;
    ino_t ino;
} stderr_at_start;

/* Before the other constructors, which may log. */
__attribute__((constructor(101))) static void note_stderr_at_start(void)
{
    struct stat st;
    if (fstat(STDERR_FILENO, &st) == 0) {
        stderr_at_start.dev = st.st_dev;
        stderr_at_start.ino = st.st_ino;
        stderr_at_start.open = true;
    }
}

/* Sockets seen carrying database traffic, by inode; fronts note them. */
#define DB_SOCKETS_KEPT 64
typedef struct file_id {
    dev_t dev;
    ino_t ino;
} file_id;
static pthread_mutex_t db_sockets_lock = PTHREAD_MUTEX_INITIALIZER;
static file_id db_sockets[DB_SOCKETS_KEPT];
static unsigned db_sockets_seen; /* the table is a ring over the last ones */
unsigned long qg_noted_fds[QG_NOTED_FD_LIMIT / (8 * sizeof(unsigned long))];

void qg_log_note_new_db_socket(int fd)
{
    if (fd < 0)
        return;
    /* Once per descriptor number: the query path stays free of system
     * calls.  A number reused by a later connection is not noted again;
     * the check of descriptor 2 against the program's start covers it. */
    if (fd < QG_NOTED_FD_LIMIT) {
        unsigned long bit = 1UL << (fd % (8 * sizeof(unsigned long)));
        unsigned long *word = &qg_noted_fds[fd / (8 * sizeof(unsigned long))];
        if (__atomic_load_n(word, __ATOMIC_RELAXED) & bit)
            return;
        __atomic_fetch_or(word, bit, __ATOMIC_RELAXED);
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode))
        return;
    pthread_mutex_lock(&db_sockets_lock);
    bool known = false;
    unsigned kept = db_sockets_seen < DB_SOCKETS_KEPT ? db_sockets_seen : DB_SOCKETS_KEPT;
    for (unsigned i = 0; i < kept && !known; i++)
        known = same_file(&st, db_sockets[i].dev, db_sockets[i].ino);
    if (!known)
        db_sockets[db_sockets_seen++ % DB_SOCKETS_KEPT] = (file_id){st.st_dev, st.st_ino};
    pthread_mutex_unlock(&db_sockets_lock);
}

static bool is_db_socket(const struct stat *st)
{
    if (!S_ISSOCK(st->st_mode))
        return false;
    pthread_mutex_lock(&db_sockets_lock);
    bool found = false;
    unsigned kept = db_sockets_seen < DB_SOCKETS_KEPT ? db_sockets_seen : DB_SOCKETS_KEPT;
    for (unsigned i = 0; i < kept && !found; i++)
        found = same_file(st, db_sockets[i].dev, db_sockets[i].ino);
    pthread_mutex_unlock(&db_sockets_lock);
    return found;
}

/* True when descriptor 2 is still the program's standard error. */
static bool stderr_usable(char *why, size_t cap)
{
    struct stat st;
    if (!stderr_at_start.open) {
        snprintf(why, cap, "standard error was closed when the program started");
        return false;
    }
    if (fstat(STDERR_FILENO, &st) != 0) {
        snprintf(why, cap, "standard error is closed");
        return false;
    }
    if (!same_file(&st, stderr_at_start.dev, stderr_at_start.ino)) {
        snprintf(why, cap, "descriptor 2 is no longer the standard error the program started with");
        return false;
    }
    if (is_db_socket(&st)) {
        snprintf(why, cap, "descriptor 2 carries database traffic");
        return false;
    }
    return true;
}

/* ------------------------------------------------------------- writing */

/* SIGPIPE (a reader gone) and SIGXFSZ (ulimit -f) are blocked while the
 * log writes, and taken back when the write raised them: the program's own
 * handlers and default actions never see the log's failures. */
typedef struct quiet_signals {
    sigset_t old, pending_before;
} quiet_signals;

static void signals_hold(quiet_signals *q)
{
    sigset_t both;
    sigemptyset(&both);
    sigaddset(&both, SIGPIPE);
    sigaddset(&both, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &both, &q->old);
    sigpending(&q->pending_before);
}

static void signals_release(quiet_signals *q)
{
    static const int raised_by_writes[] = {SIGPIPE, SIGXFSZ};
    sigset_t now;
    sigpending(&now);
    for (size_t i = 0; i < sizeof raised_by_writes / sizeof raised_by_writes[0]; i++) {
        int sig = raised_by_writes[i];
        if (!sigismember(&now, sig) || sigismember(&q->pending_before, sig))
            continue;
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        const struct timespec no_wait = {0, 0};
        while (sigtimedwait(&one, NULL, &no_wait) < 0 && errno == EINTR)
            ;
    }
    pthread_sigmask(SIG_SETMASK, &q->old, NULL);
}

bool qg_log_write_whole(int fd, const void *buf, size_t len, char *why, size_t cap)
{
    struct stat st;
    struct rlimit limit;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && getrlimit(RLIMIT_FSIZE, &limit) == 0 &&
        limit.rlim_cur != RLIM_INFINITY && (rlim_t)st.st_size + len > limit.rlim_cur) {
        snprintf(why, cap, "the file size limit (ulimit -f, %llu bytes) is reached",
                 (unsigned long long)limit.rlim_cur);
        return false;
    }
    quiet_signals q;
    signals_hold(&q);
    ssize_t n;
    do
        n = qg_libc_write(fd, buf, len);
    while (n < 0 && errno == EINTR);
    int err = errno;
    signals_release(&q);
    if (n == (ssize_t)len)
        return true;
    if (n < 0)
        snprintf(why, cap, "write failed: %s", strerrordesc_np(err));
    else
        snprintf(why, cap, "short write (%zd of %zu bytes)", n, len);
    return false;
}

int qg_log_open_file(const char *path, int flags, mode_t mode, char *why, size_t cap)
{
    static const char not_file[] = "not a regular file or character device";
    struct stat st;
    /* A FIFO is never opened at all: opening it may wake a writer. */
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode)) {
        snprintf(why, cap, "%s: %s", path, not_file);
        errno = EINVAL;
        return -1;
    }
    int fd = open(path, flags | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, mode);
    if (fd < 0) {
        int err = errno;
        snprintf(why, cap, "%s: %s", path, strerrordesc_np(err));
        errno = err;
        return -1;
    }
    if (fstat(fd, &st) != 0 || (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode))) {
        qg_libc_close(fd);
        snprintf(why, cap, "%s: %s", path, not_file);
        errno = EINVAL;
        return -1;
    }
    return fd;
}

/* The log file, (re)opened when the path changed, the file was rotated
 * away, or the descriptor is no longer ours. */
static int log_file_fd(const char *path, char *why, size_t cap)
{
    struct stat on_disk;
    if (log_file.fd >= 0) {
        if (strcmp(path, log_file_path) == 0 && still_ours(&log_file) &&
            stat(path, &on_disk) == 0 && same_file(&on_disk, log_file.dev, log_file.ino))
            return log_file.fd;
        release(&log_file);
    }
    char reason[QG_PATH_MAX + 64];
    int fd = qg_log_open_file(path, O_WRONLY | O_APPEND | O_CREAT, 0640, reason, sizeof reason);
    if (fd < 0) {
        snprintf(why, cap, "cannot open log file %s", reason);
        return -1;
    }
    adopt(&log_file, fd);
    snprintf(log_file_path, sizeof log_file_path, "%s", path);
    return fd;
}

/* ------------------------------------------------------ syslog, journal */

static int datagram_connect(const char *path)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof addr.sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = qg_libc_socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    memcpy(addr.sun_path, path, strlen(path) + 1);
    if (connect(fd, (const struct sockaddr *)&addr, sizeof addr) < 0) {
        int err = errno;
        qg_libc_close(fd);
        errno = err;
        return -1;
    }
    return fd;
}

/* The socket for syslog lines: the one configured, else journald's native
 * socket where journald runs (its lines then carry fields), else /dev/log. */
static bool syslog_open(const qg_settings *s, char *why, size_t cap)
{
    const char *path = SYSLOG_SOCKET_PATH;
    bool native = false;
    bool chosen = (s->log_sink == QG_LOG_SYSLOG || s->log_sink == QG_LOG_JOURNAL) && s->log_path[0];
    if (chosen) {
        path = s->log_path;
        native = s->log_sink == QG_LOG_JOURNAL;
    } else if (s->log_sink == QG_LOG_JOURNAL || access(JOURNAL_SOCKET_PATH, F_OK) == 0) {
        path = JOURNAL_SOCKET_PATH;
        native = true;
    }
    if (syslog_socket.fd >= 0 && strcmp(path, syslog_socket_path) == 0 && still_ours(&syslog_socket))
        return true;
    release(&syslog_socket);
    int fd = datagram_connect(path);
    if (fd < 0) {
        snprintf(why, cap, "cannot send to %s socket %s: %s", native ? "journal" : "syslog", path,
                 strerrordesc_np(errno));
        return false;
    }
    adopt(&syslog_socket, fd);
    snprintf(syslog_socket_path, sizeof syslog_socket_path, "%s", path);
    syslog_native = native;
    return true;
}

/* Appends text to the datagram being built; false when it does not fit. */
static bool append(size_t *len, const char *text, size_t n)
{
    if (n > sizeof datagram - *len)
        return false;
    memcpy(datagram + *len, text, n);
    *len += n;
    return true;
}

/* journald's native protocol: one KEY=value line per field.  MESSAGE is the
 * JSON line; each of its fields is also QUOTEGUARD_<KEY>, its value as the
 * JSON has it without the quotes (JSON escapes hold no newline). */
static size_t journal_datagram(int facility, int severity, const line *l)
{
    size_t len = 0;
    int head = snprintf(datagram, sizeof datagram,
                        "PRIORITY=%d\nSYSLOG_FACILITY=%d\nSYSLOG_IDENTIFIER=quoteguard\n"
                        "SYSLOG_PID=%d\nMESSAGE=",
                        severity, facility >> 3, (int)getpid());
    len = (size_t)head;
    if (!append(&len, l->buf, l->len))
        return 0;
    /* l->buf is {"key":value,...}\n as built above: keys are plain, string
     * values have every '"' and '\\' escaped. */
    size_t i = 1, end = l->len - 2; /* inside the braces */
    while (i < end && l->buf[i] == '"') {
        size_t key = i + 1, key_end = key;
        while (key_end < end && l->buf[key_end] != '"')
            key_end++;
        size_t value = key_end + 2, value_end = value;
        bool quoted = value < end && l->buf[value] == '"';
        if (quoted) {
            value_end = ++value;
            while (value_end < end && l->buf[value_end] != '"')
                value_end += l->buf[value_end] == '\\' ? 2 : 1;
        } else if (value < end && l->buf[value] == '[') {
            const char *close = memchr(l->buf + value, ']', end - value);
            value_end = close ? (size_t)(close - l->buf) + 1 : end;
        } else {
            while (value_end < end && l->buf[value_end] != ',')
                value_end++;
        }
        char name[64] = "QUOTEGUARD_";
        size_t name_len = strlen(name);
        for (size_t k = key; k < key_end && name_len < sizeof name - 1; k++) {
            unsigned char c = (unsigned char)l->buf[k];
            name[name_len++] = (char)(c >= 'a' && c <= 'z' ? c - ('a' - 'A') : c);
        }
        name[name_len++] = '=';
        if (!append(&len, name, name_len) || !append(&len, l->buf + value, value_end - value) ||
            !append(&len, "\n", 1))
            return 0;
        i = value_end + (quoted ? 1 : 0);
        if (i < end && l->buf[i] == ',')
            i++;
    }
    return len;
}

static size_t syslog_datagram(int facility, int severity, const line *l)
{
    /* "<PRI>quoteguard[pid]: " then the JSON without its newline.  No
     * timestamp: syslog daemons stamp on receipt, and the JSON has "time". */
    int head = snprintf(datagram, sizeof datagram, "<%d>quoteguard[%d]: ", facility | severity,
                        (int)getpid());
    size_t len = (size_t)head;
    return append(&len, l->buf, l->len - 1) ? len : 0;
}

static bool send_to_syslog(const qg_settings *s, int severity, const line *l, char *why,
                           size_t cap)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!syslog_open(s, why, cap))
            return false;
        size_t len = syslog_native ? journal_datagram(s->syslog_facility, severity, l)
                                   : syslog_datagram(s->syslog_facility, severity, l);
        ssize_t n;
        do /* MSG_DONTWAIT: a stalled syslog daemon never holds the program */
            n = qg_libc_send(syslog_socket.fd, datagram, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        while (n < 0 && errno == EINTR);
        if (n >= 0)
            return true;
        snprintf(why, cap, "cannot send to %s: %s", syslog_socket_path, strerrordesc_np(errno));
        if (errno == EAGAIN)
            return false;
        /* The daemon restarted: connect again once. */
        release(&syslog_socket);
    }
    return false;
}

/* ------------------------------------------------------------ routing */

static bool deliver(const qg_settings *s, target t, int severity, const line *l, char *why,
                    size_t cap)
{
    switch (t) {
    case TARGET_FILE: {
        int fd = log_file_fd(s->log_path, why, cap);
        return fd >= 0 && qg_log_write_whole(fd, l->buf, l->len, why, cap);
    }
    case TARGET_SYSLOG:
        return send_to_syslog(s, severity, l, why, cap);
    case TARGET_STDERR:
    case TARGET_COUNT:
        break;
    }
    return stderr_usable(why, cap) && qg_log_write_whole(STDERR_FILENO, l->buf, l->len, why, cap);
}

/* Where a target's failures are reported. */
static target other_target(target t)
{
    return t == TARGET_STDERR ? TARGET_SYSLOG : TARGET_STDERR;
}

/* One line through the other target about what target t lost. */
static void report_losses(const qg_settings *s, target t, const char *what)
{
    health *h = &healths[t];
    char detail[sizeof h->why + 160];
    snprintf(detail, sizeof detail, "%s; %lu log line%s lost %s", h->why, h->lost,
             h->lost == 1 ? "" : "s", what);
    h->told = h->lost;
    line l;
    line_event(&l, s, "error", "log_lines_lost", detail);
    line_finish(&l);
    char ignored[sizeof h->why];
    target other = other_target(t);
    if (!deliver(s, other, LOG_ERR, &l, ignored, sizeof ignored))
        healths[other].lost++;
}

static void emit_locked(const qg_settings *s, target t, int severity, const line *l)
{
    health *h = &healths[t];
    char why[sizeof h->why];
    if (deliver(s, t, severity, l, why, sizeof why)) {
        if (h->failing && h->lost > h->told)
            report_losses(s, t, "in all before it worked again");
        h->failing = false;
        return;
    }
    h->lost++;
    tally_settings = s;
    if (!h->failing) {
        h->failing = true;
        memcpy(h->why, why, sizeof why);
        report_losses(s, t, "so far; the total is reported when it works again or at exit");
    }
}

/* The explicit verbosity, else 1 with a chosen destination and 0 without. */
static int verbosity_of(const qg_settings *s)
{
    if (s->verbosity != QG_VERBOSITY_UNSET)
        return s->verbosity;
    return s->log_sink == QG_LOG_DEFAULT ? 0 : 1;
}

/* loud: a blocked query or an error; without a chosen destination those
 * go to stderr and the rest to syslog, unless the operator asked for
 * verbosity (then all of it to stderr). */
static target target_for(const qg_settings *s, bool loud)
{
    switch (s->log_sink) {
    case QG_LOG_FILE:
        return TARGET_FILE;
    case QG_LOG_SYSLOG:
    case QG_LOG_JOURNAL:
        return TARGET_SYSLOG;
    case QG_LOG_STDERR:
        return TARGET_STDERR;
    case QG_LOG_DEFAULT:
        break;
    }
    return loud || s->verbosity >= 1 ? TARGET_STDERR : TARGET_SYSLOG;
}

static void emit(const qg_settings *s, int severity, bool loud, line *l)
{
    line_finish(l);
    target t = target_for(s, loud);
    if (emitting) {
        __atomic_add_fetch(&healths[t].lost, 1, __ATOMIC_RELAXED);
        return;
    }
    emitting = true;
    pthread_once(&atfork_once, register_atfork);
    pthread_mutex_lock(&sink_lock);
    emit_locked(s, t, severity, l);
    pthread_mutex_unlock(&sink_lock);
    emitting = false;
}

/* Lines lost and not yet reported: told at exit. */
__attribute__((destructor)) static void report_losses_at_exit(void)
{
    const qg_settings *s = __atomic_load_n(&tally_settings, __ATOMIC_ACQUIRE);
    if (!s || emitting)
        return;
    pthread_mutex_lock(&sink_lock);
    for (target t = 0; t < TARGET_COUNT; t++)
        if (healths[t].lost > healths[t].told)
            report_losses(s, t, "in all");
    pthread_mutex_unlock(&sink_lock);
}

/* ------------------------------------------------------------------ lines */

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
    emit(s, LOG_WARNING, f->action && strcmp(f->action, "blocked") == 0, &l);
}

void qg_log_write_startup(const qg_settings *s, const char *libraries)
{
    if (verbosity_of(s) < 1)
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
    emit(s, LOG_INFO, false, &l);
}

void qg_log_write_event(const qg_settings *s, const char *level, const char *event,
                        const char *detail)
{
    int severity = LOG_WARNING;
    if (strcmp(level, "debug") == 0) {
        if (verbosity_of(s) < 2)
            return;
        severity = LOG_DEBUG;
    } else if (strcmp(level, "info") == 0) {
        if (verbosity_of(s) < 1)
            return;
        severity = LOG_INFO;
    } else if (strcmp(level, "error") == 0) {
        severity = LOG_ERR;
    }
    line l;
    line_event(&l, s, level, event, detail);
    emit(s, severity, severity == LOG_ERR, &l);
}
