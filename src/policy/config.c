/* Settings: environment over config file over defaults (settings.c loads
 * them once for the process and logs the problems found here).
 *
 * The loader runs inside whatever process preloaded us, possibly on the first
 * query: it uses only static storage and plain system calls (no stdio, no
 * malloc), and never calls back into anything the shim interposes. */
#include "ascii.h"
#include "config.h"
#include "hot.h"
#include "real.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/stat.h>
#include <unistd.h>


#define DEFAULT_CONFIG_PATH "/etc/quoteguard.conf"
#define CONFIG_FILE_MAX (64 * 1024)

/* Where problems go: a count, the first one's text, and optionally a list
 * (the loader keeps several so that each is logged once). */
typedef struct problems {
    int count;
    char *errbuf;
    size_t errlen;
    char (*kept)[QG_PROBLEM_TEXT_MAX];
    size_t kept_cap;
} problems;

static void report(problems *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(problems *p, const char *fmt, ...)
{
    char text[QG_PROBLEM_TEXT_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized): va_start above
    va_end(ap);
    if (p->count == 0 && p->errbuf && p->errlen > 0)
        snprintf(p->errbuf, p->errlen, "%s", text);
    if (p->kept && (size_t)p->count < p->kept_cap)
        memcpy(p->kept[p->count], text, sizeof text);
    p->count++;
}

/* Names the place a value came from, for problem reports. */
typedef struct origin {
    const char *key;    /* as written: "QUOTEGUARD_MODE" or "mode" */
    const char *source; /* "environment", "/etc/quoteguard.conf line 3" */
} origin;

static void report_value(problems *p, const origin *o, const char *value, const char *why)
{
    /* mode = "audit" is read with its quotes: say so, it is the likely slip. */
    size_t n = strlen(value);
    bool quoted = n >= 2 && (value[0] == '"' || value[0] == '\'') && value[n - 1] == value[0];
    report(p, "%s=\"%.200s\" (%s): %s%s", o->key, value, o->source, why,
           quoted ? "; values are written without quotes" : "");
}

void qg_settings_defaults(qg_settings *s)
{
    memset(s, 0, sizeof *s);
    s->mode = QG_MODE_ENFORCE;
    s->log_sink = QG_LOG_DEFAULT;
    s->syslog_facility = LOG_AUTHPRIV;
    s->verbosity = QG_VERBOSITY_UNSET;
    s->log_full_query = false;
    s->mysql_illformed_quote = QG_ACTION_BLOCK;
    s->mysql_illformed = QG_ACTION_LOG;
    s->active = true;
    s->wire = true;
}

static const char *const mode_names[] = {
    [QG_MODE_OFF] = "off",
    [QG_MODE_AUDIT] = "audit",
    [QG_MODE_ENFORCE] = "enforce",
    [QG_MODE_REWRITE] = "rewrite",
};

bool qg_mode_parse(const char *text, qg_mode *mode)
{
    for (size_t i = 0; i < sizeof mode_names / sizeof mode_names[0]; i++) {
        if (qg_ascii_casecmp(text, mode_names[i]) == 0) {
            *mode = (qg_mode)i;
            return true;
        }
    }
    return false;
}

const char *qg_mode_name(qg_mode mode)
{
    if ((size_t)mode < sizeof mode_names / sizeof mode_names[0])
        return mode_names[mode];
    return "unknown";
}

static const char *const shapes_mode_names[] = {
    [QG_SHAPES_OFF] = "off",
    [QG_SHAPES_LEARN] = "learn",
    [QG_SHAPES_ENFORCE] = "enforce",
};

bool qg_shapes_mode_parse(const char *text, qg_shapes_mode *mode)
{
    for (size_t i = 0; i < sizeof shapes_mode_names / sizeof shapes_mode_names[0]; i++) {
        if (qg_ascii_casecmp(text, shapes_mode_names[i]) == 0) {
            *mode = (qg_shapes_mode)i;
            return true;
        }
    }
    return false;
}

const char *qg_shapes_mode_name(qg_shapes_mode mode)
{
    if ((size_t)mode < sizeof shapes_mode_names / sizeof shapes_mode_names[0])
        return shapes_mode_names[mode];
    return "unknown";
}

static const struct {
    const char *name;
    int facility;
} facilities[] = {
    {"auth", LOG_AUTH},     {"authpriv", LOG_AUTHPRIV}, {"cron", LOG_CRON},
    {"daemon", LOG_DAEMON}, {"ftp", LOG_FTP},           {"lpr", LOG_LPR},
    {"mail", LOG_MAIL},     {"news", LOG_NEWS},         {"syslog", LOG_SYSLOG},
    {"user", LOG_USER},     {"uucp", LOG_UUCP},         {"local0", LOG_LOCAL0},
    {"local1", LOG_LOCAL1}, {"local2", LOG_LOCAL2},     {"local3", LOG_LOCAL3},
    {"local4", LOG_LOCAL4}, {"local5", LOG_LOCAL5},     {"local6", LOG_LOCAL6},
    {"local7", LOG_LOCAL7},
};

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/* One item of a comma-separated list, white space trimmed. */
typedef struct item {
    const char *p;
    size_t len;
} item;

/* Advances *cursor past the next item; false at the end of the text. */
static bool next_item(const char **cursor, item *it)
{
    const char *c = *cursor;
    if (*c == '\0')
        return false;
    const char *end = strchr(c, ',');
    if (!end)
        end = c + strlen(c);
    *cursor = *end ? end + 1 : end;
    while (c < end && is_space(*c))
        c++;
    while (end > c && is_space(end[-1]))
        end--;
    it->p = c;
    it->len = (size_t)(end - c);
    return true;
}

static bool parse_fingerprint(const item *it, uint64_t *out)
{
    if (it->len != 16)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < 16; i++) {
        int d = qg_hex_digit(it->p[i]);
        if (d < 0)
            return false;
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return true;
}

/* "shape:HEX" or "shape:HEX@SITE": an allow entry by query shape. */
static bool parse_allow_shape(const item *it, qg_allow_shape *out)
{
    static const char prefix[] = "shape:";
    size_t plen = sizeof prefix - 1;
    if (it->len < plen + 16 || memcmp(it->p, prefix, plen) != 0)
        return false;
    item hex = {it->p + plen, 16};
    if (!parse_fingerprint(&hex, &out->shape))
        return false;
    size_t rest = it->len - plen - 16;
    const char *site = it->p + plen + 16;
    if (rest == 0) {
        out->site[0] = '\0';
        return true;
    }
    if (site[0] != '@' || rest < 2 || rest - 1 >= QG_SITE_MAX)
        return false;
    memcpy(out->site, site + 1, rest - 1);
    out->site[rest - 1] = '\0';
    return true;
}

/* Adds the fingerprints and shapes in `value` to s->allow, s->allow_shapes. */
static void apply_allow(qg_settings *s, const origin *o, const char *value, problems *p)
{
    const char *cursor = value;
    item it;
    while (next_item(&cursor, &it)) {
        if (it.len == 0)
            continue;
        int shown = (int)(it.len > 40 ? 40 : it.len);
        if (it.len > 6 && memcmp(it.p, "shape:", 6) == 0) {
            qg_allow_shape entry = {0}; /* the same bytes each time the text is read */
            if (!parse_allow_shape(&it, &entry)) {
                report(p, "%s=\"%.200s\" (%s): \"%.*s\" is not shape:FINGERPRINT or "
                          "shape:FINGERPRINT@SITE",
                       o->key, value, o->source, shown, it.p);
                continue;
            }
            if (s->allow_shape_count == QG_MAX_ALLOW_SHAPES) {
                report(p, "%s=\"%.200s\" (%s): more than %d allowed shapes", o->key, value,
                       o->source, QG_MAX_ALLOW_SHAPES);
                return;
            }
            s->allow_shapes[s->allow_shape_count++] = entry;
            continue;
        }
        uint64_t fp;
        if (!parse_fingerprint(&it, &fp)) {
            report(p, "%s=\"%.200s\" (%s): \"%.*s\" is not a fingerprint (16 hex digits) "
                      "or shape:FINGERPRINT[@SITE]",
                   o->key, value, o->source, shown, it.p);
            continue;
        }
        if (s->allow_count == QG_MAX_ALLOW) {
            report(p, "%s=\"%.200s\" (%s): more than %d allowed fingerprints", o->key,
                   value, o->source, QG_MAX_ALLOW);
            return;
        }
        s->allow[s->allow_count++] = fp;
    }
}

/* Replaces a program list with the basenames in `value`. */
static void apply_programs(char (*list)[QG_NAME_MAX], size_t *count, const origin *o,
                           const char *value, problems *p)
{
    *count = 0;
    const char *cursor = value;
    item it;
    while (next_item(&cursor, &it)) {
        if (it.len == 0)
            continue;
        if (memchr(it.p, '/', it.len)) {
            report_value(p, o, value, "program names are basenames, without '/'");
            continue;
        }
        if (it.len >= QG_NAME_MAX) {
            report_value(p, o, value, "program name too long");
            continue;
        }
        if (*count == QG_MAX_PROGRAMS) {
            report(p, "%s=\"%.200s\" (%s): more than %d programs", o->key, value, o->source,
                   QG_MAX_PROGRAMS);
            return;
        }
        memcpy(list[*count], it.p, it.len);
        list[*count][it.len] = '\0';
        (*count)++;
    }
}

static bool parse_action(const char *value, qg_action *action)
{
    if (qg_ascii_casecmp(value, "block") == 0)
        *action = QG_ACTION_BLOCK;
    else if (qg_ascii_casecmp(value, "log") == 0)
        *action = QG_ACTION_LOG;
    else if (qg_ascii_casecmp(value, "ignore") == 0)
        *action = QG_ACTION_IGNORE;
    else
        return false;
    return true;
}

static bool parse_bool(const char *value, bool *out)
{
    static const char *const yes[] = {"1", "true", "yes", "on"};
    static const char *const no[] = {"0", "false", "no", "off"};
    for (size_t i = 0; i < 4; i++) {
        if (qg_ascii_casecmp(value, yes[i]) == 0) {
            *out = true;
            return true;
        }
        if (qg_ascii_casecmp(value, no[i]) == 0) {
            *out = false;
            return true;
        }
    }
    return false;
}

/* The settings keys, by their config-file name (the environment name is
 * QUOTEGUARD_ + upper case). */
typedef enum key_id {
    KEY_MODE,
    KEY_LOG,
    KEY_VERBOSE,
    KEY_LOG_FULL_QUERY,
    KEY_SYSLOG_FACILITY,
    KEY_ALLOW,
    KEY_ONLY_PROGRAMS,
    KEY_SKIP_PROGRAMS,
    KEY_MYSQL_ILLFORMED_QUOTE,
    KEY_MYSQL_ILLFORMED,
    KEY_SHAPES,
    KEY_SHAPES_FILE,
    KEY_REWRITE,
    KEY_COUNTERS_DIR,
    KEY_WIRE,
    KEY_WIRE_UNGUARDED,
    KEY_COUNT
} key_id;

static const struct {
    const char *file_name;
    const char *env_name;
} keys[KEY_COUNT] = {
    [KEY_MODE] = {"mode", "QUOTEGUARD_MODE"},
    [KEY_LOG] = {"log", "QUOTEGUARD_LOG"},
    [KEY_VERBOSE] = {"verbose", "QUOTEGUARD_VERBOSE"},
    [KEY_LOG_FULL_QUERY] = {"log_full_query", "QUOTEGUARD_LOG_FULL_QUERY"},
    [KEY_SYSLOG_FACILITY] = {"syslog_facility", "QUOTEGUARD_SYSLOG_FACILITY"},
    [KEY_ALLOW] = {"allow", "QUOTEGUARD_ALLOW"},
    [KEY_ONLY_PROGRAMS] = {"only_programs", "QUOTEGUARD_ONLY_PROGRAMS"},
    [KEY_SKIP_PROGRAMS] = {"skip_programs", "QUOTEGUARD_SKIP_PROGRAMS"},
    [KEY_MYSQL_ILLFORMED_QUOTE] = {"mysql_illformed_quote", "QUOTEGUARD_MYSQL_ILLFORMED_QUOTE"},
    [KEY_MYSQL_ILLFORMED] = {"mysql_illformed", "QUOTEGUARD_MYSQL_ILLFORMED"},
    [KEY_SHAPES] = {"shapes", "QUOTEGUARD_SHAPES"},
    [KEY_SHAPES_FILE] = {"shapes_file", "QUOTEGUARD_SHAPES_FILE"},
    [KEY_REWRITE] = {"rewrite", "QUOTEGUARD_REWRITE"},
    [KEY_COUNTERS_DIR] = {"counters_dir", "QUOTEGUARD_COUNTERS_DIR"},
    [KEY_WIRE] = {"wire", "QUOTEGUARD_WIRE"},
    [KEY_WIRE_UNGUARDED] = {"wire_unguarded", "QUOTEGUARD_WIRE_UNGUARDED"},
};

const char *qg_settings_key(size_t index)
{
    return index < KEY_COUNT ? keys[index].file_name : NULL;
}

/* Applies one value; a bad value leaves the setting as it was (except mode,
 * which becomes enforce) and is reported. */
static void apply_key(qg_settings *s, key_id key, const origin *o, const char *value,
                      bool list_appends, problems *p)
{
    switch (key) {
    case KEY_MODE:
        if (!qg_mode_parse(value, &s->mode)) {
            s->mode = QG_MODE_ENFORCE;
            report_value(p, o, value, "unknown mode; expected enforce, audit, rewrite or off");
        }
        break;
    case KEY_LOG: {
        /* syslog and journal may name their socket: "syslog:/path". */
        const char *colon = value[0] == '/' ? NULL : strchr(value, ':');
        size_t word = colon ? (size_t)(colon - value) : strlen(value);
        const char *path = colon ? colon + 1 : value;
        qg_log_sink sink = QG_LOG_FILE;
        if (word == 6 && qg_ascii_ncasecmp(value, "stderr", 6) == 0 && !colon)
            sink = QG_LOG_STDERR;
        else if (word == 6 && qg_ascii_ncasecmp(value, "syslog", 6) == 0)
            sink = QG_LOG_SYSLOG;
        else if (word == 7 && qg_ascii_ncasecmp(value, "journal", 7) == 0)
            sink = QG_LOG_JOURNAL;
        if (sink != QG_LOG_FILE && !colon) {
            s->log_sink = sink;
            s->log_path[0] = '\0';
        } else if (path[0] != '/' || (colon && sink == QG_LOG_FILE)) {
            /* The log opens lazily, maybe after the program changed directory. */
            report_value(p, o, value, "expected stderr, syslog, journal, syslog:SOCKET, "
                                      "journal:SOCKET or an absolute file path");
        } else if (strlen(path) >= QG_PATH_MAX) {
            report_value(p, o, value, "log path too long");
        } else {
            s->log_sink = sink;
            memcpy(s->log_path, path, strlen(path) + 1); /* length checked above */
        }
        break;
    }
    case KEY_VERBOSE:
        if (value[0] >= '0' && value[0] <= '2' && value[1] == '\0')
            s->verbosity = value[0] - '0';
        else
            report_value(p, o, value, "expected 0, 1 or 2");
        break;
    case KEY_LOG_FULL_QUERY:
        if (!parse_bool(value, &s->log_full_query))
            report_value(p, o, value, "expected 0 or 1");
        break;
    case KEY_SYSLOG_FACILITY: {
        size_t i = 0;
        while (i < sizeof facilities / sizeof facilities[0] &&
               qg_ascii_casecmp(value, facilities[i].name) != 0)
            i++;
        if (i < sizeof facilities / sizeof facilities[0])
            s->syslog_facility = facilities[i].facility;
        else
            report_value(p, o, value, "unknown syslog facility; expected authpriv, auth, user, "
                                      "daemon, local0 … local7 or another syslog(3) facility");
        break;
    }
    case KEY_ALLOW:
        if (!list_appends) {
            s->allow_count = 0;
            s->allow_shape_count = 0;
        }
        apply_allow(s, o, value, p);
        break;
    case KEY_ONLY_PROGRAMS:
        apply_programs(s->only_programs, &s->only_count, o, value, p);
        break;
    case KEY_SKIP_PROGRAMS:
        apply_programs(s->skip_programs, &s->skip_count, o, value, p);
        break;
    case KEY_MYSQL_ILLFORMED_QUOTE:
        if (!parse_action(value, &s->mysql_illformed_quote))
            report_value(p, o, value, "expected block, log or ignore");
        break;
    case KEY_MYSQL_ILLFORMED:
        if (!parse_action(value, &s->mysql_illformed))
            report_value(p, o, value, "expected block, log or ignore");
        break;
    case KEY_SHAPES:
        if (!qg_shapes_mode_parse(value, &s->shapes))
            report_value(p, o, value, "expected learn, enforce or off");
        break;
    case KEY_SHAPES_FILE:
        if (value[0] != '/')
            report_value(p, o, value, "expected an absolute file path");
        else if (strlen(value) >= QG_PATH_MAX)
            report_value(p, o, value, "shapes file path too long");
        else
            memcpy(s->shapes_file, value, strlen(value) + 1);
        break;
    case KEY_COUNTERS_DIR:
        if (value[0] != '/')
            report_value(p, o, value, "expected an absolute directory path");
        else if (strlen(value) >= QG_PATH_MAX)
            report_value(p, o, value, "counters directory path too long");
        else {
            memcpy(s->counters_dir, value, strlen(value) + 1);
            s->counters = true;
        }
        break;
    case KEY_REWRITE:
        if (qg_ascii_casecmp(value, "all") == 0)
            s->rewrite_all = true;
        else if (qg_ascii_casecmp(value, "needed") == 0)
            s->rewrite_all = false;
        else
            report_value(p, o, value, "expected needed or all");
        break;
    case KEY_WIRE:
        if (qg_ascii_casecmp(value, "on") == 0)
            s->wire = true;
        else if (qg_ascii_casecmp(value, "off") == 0)
            s->wire = false;
        else
            report_value(p, o, value, "expected on or off");
        break;
    case KEY_WIRE_UNGUARDED:
        if (qg_ascii_casecmp(value, "refuse") == 0)
            s->wire_unguarded_pass = false;
        else if (qg_ascii_casecmp(value, "pass") == 0)
            s->wire_unguarded_pass = true;
        else
            report_value(p, o, value, "expected refuse or pass");
        break;
    case KEY_COUNT:
        break;
    }
}

/* Settings that only make sense together, once every source is applied. */
static void check_combinations(qg_settings *s, problems *p)
{
    if (s->shapes != QG_SHAPES_OFF && s->shapes_file[0] == '\0') {
        report(p, "shapes=%s needs shapes_file (QUOTEGUARD_SHAPES_FILE); shapes stay off",
               qg_shapes_mode_name(s->shapes));
        s->shapes = QG_SHAPES_OFF;
    }
}

/* Parses config-file text; `source_name` names the file in reports. */
static void parse_text(qg_settings *s, const char *text, size_t len, const char *source_name,
                       problems *p)
{
    size_t line_no = 0;
    size_t pos = 0;
    while (pos < len) {
        line_no++;
        const char *line = text + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t line_len = nl ? (size_t)(nl - line) : len - pos;
        pos += line_len + (nl ? 1 : 0);

        char source[QG_PATH_MAX + 32];
        snprintf(source, sizeof source, "%s line %zu", source_name, line_no);

        /* Comments: '#' at the start or after white space. */
        size_t end = 0;
        while (end < line_len && !(line[end] == '#' && (end == 0 || is_space(line[end - 1]))))
            end++;
        size_t start = 0;
        while (start < end && is_space(line[start]))
            start++;
        while (end > start && is_space(line[end - 1]))
            end--;
        if (start == end)
            continue;
        if (memchr(line + start, '\0', end - start)) {
            report(p, "%s: NUL byte in the line", source);
            continue;
        }

        const char *eq = memchr(line + start, '=', end - start);
        if (!eq) {
            report(p, "%s: \"%.*s\" is not a `key = value` line", source,
                   (int)(end - start > 200 ? 200 : end - start), line + start);
            continue;
        }
        size_t key_end = (size_t)(eq - line);
        while (key_end > start && is_space(line[key_end - 1]))
            key_end--;
        size_t value_start = (size_t)(eq - line) + 1;
        while (value_start < end && is_space(line[value_start]))
            value_start++;

        char key[64];
        size_t key_len = key_end - start;
        if (key_len >= sizeof key)
            key_len = sizeof key - 1;
        memcpy(key, line + start, key_len);
        key[key_len] = '\0';
        char value[QG_PATH_MAX + 1];
        size_t value_len = end - value_start;
        if (value_len >= sizeof value) {
            report(p, "%s=… (%s): value longer than %d bytes", key, source, QG_PATH_MAX);
            continue;
        }
        memcpy(value, line + value_start, value_len);
        value[value_len] = '\0';

        key_id id = 0;
        while (id < KEY_COUNT && qg_ascii_casecmp(key, keys[id].file_name) != 0)
            id++;
        origin o = {key, source};
        if (id == KEY_COUNT) {
            report_value(p, &o, value, "unknown key");
            continue;
        }
        apply_key(s, id, &o, value, true, p);
    }
}

int qg_settings_parse_file_text(qg_settings *s, const char *text, size_t len, char *errbuf,
                                size_t errlen)
{
    problems p = {.errbuf = errbuf, .errlen = errlen};
    parse_text(s, text, len, "config file", &p);
    if (p.count)
        s->mode = QG_MODE_ENFORCE;
    return p.count;
}

static void apply_env(qg_settings *s, problems *p)
{
    for (key_id id = 0; id < KEY_COUNT; id++) {
        const char *value = secure_getenv(keys[id].env_name);
        if (!value || !*value)
            continue;
        origin o = {keys[id].env_name, "environment"};
        apply_key(s, id, &o, value, false, p);
    }
}

int qg_settings_apply_env(qg_settings *s, char *errbuf, size_t errlen)
{
    problems p = {.errbuf = errbuf, .errlen = errlen};
    apply_env(s, &p);
    if (p.count)
        s->mode = QG_MODE_ENFORCE;
    return p.count;
}

void qg_settings_set_program(qg_settings *s, const char *program)
{
    snprintf(s->program, sizeof s->program, "%s", program);
    bool listed = s->only_count == 0;
    for (size_t i = 0; i < s->only_count; i++)
        if (strcmp(s->only_programs[i], s->program) == 0)
            listed = true;
    for (size_t i = 0; i < s->skip_count; i++)
        if (strcmp(s->skip_programs[i], s->program) == 0)
            listed = false;
    s->active = listed;
}

/* ------------------------------------------------------------------ loader */

QG_FAR_BSS static char file_text[CONFIG_FILE_MAX];

/* Reads the config file into file_text and parses it; a file that should be
 * read but cannot be is reported.  A missing default file is not a problem.
 * strerrordesc_np: untranslated, so no message catalog gets loaded. */
static void read_config_file(qg_settings *s, const char *path, bool explicit, problems *p)
{
    /* O_NONBLOCK: a FIFO or a terminal must not hold the program before
     * main; only a regular file (or a device such as /dev/null) is read. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        int err = errno;
        if (!explicit && err == ENOENT)
            return;
        report(p, "config file %s (%s): cannot be opened: %s", path,
               explicit ? "named by QUOTEGUARD_CONFIG" : "default", strerrordesc_np(err));
        return;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode))) {
        report(p, "config file %s: not a regular file; not read", path);
        qg_libc_close(fd);
        return;
    }
    size_t len = 0;
    for (;;) {
        ssize_t n = qg_libc_read(fd, file_text + len, sizeof file_text - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            report(p, "config file %s: cannot be read: %s", path, strerrordesc_np(errno));
            qg_libc_close(fd);
            return;
        }
        if (n == 0)
            break;
        len += (size_t)n;
        if (len == sizeof file_text) {
            report(p, "config file %s: larger than %d bytes; not read", path, CONFIG_FILE_MAX);
            qg_libc_close(fd);
            return;
        }
    }
    qg_libc_close(fd);
    snprintf(s->config_path, sizeof s->config_path, "%s", path);
    parse_text(s, file_text, len, path, p);
}

/* Defaults, file, environment: the sources in their order of precedence. */
static void collect(qg_settings *s, problems *p)
{
    qg_settings_defaults(s);
    const char *explicit_path = secure_getenv("QUOTEGUARD_CONFIG");
    if (explicit_path && *explicit_path)
        read_config_file(s, explicit_path, true, p);
    else
        read_config_file(s, DEFAULT_CONFIG_PATH, false, p);
    apply_env(s, p);
    check_combinations(s, p);
    if (p->count)
        s->mode = QG_MODE_ENFORCE; /* never fail open on a configuration mistake */
}

int qg_settings_load_all(qg_settings *s, char (*kept)[QG_PROBLEM_TEXT_MAX], size_t kept_cap)
{
    problems p = {.kept = kept, .kept_cap = kept_cap};
    collect(s, &p);
    return p.count;
}
