/* Settings of the shim: environment over config file over defaults. */
#ifndef QG_CONFIG_H
#define QG_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quoteguard.h"

typedef enum qg_mode {
    QG_MODE_OFF = 0,
    QG_MODE_AUDIT,   /* log findings, send the query unchanged */
    QG_MODE_ENFORCE, /* blocking findings stop the query */
    QG_MODE_REWRITE  /* enforce, and send simple PG queries with literals as parameters */
} qg_mode;

/* Where log lines go (log.h tells which line goes where by default). */
typedef enum qg_log_sink {
    QG_LOG_DEFAULT = 0, /* nothing chosen: quiet (log.h) */
    QG_LOG_STDERR,
    QG_LOG_SYSLOG,      /* /dev/log, or log_path when set */
    QG_LOG_JOURNAL,     /* journald's native socket, or log_path when set */
    QG_LOG_FILE
} qg_log_sink;

/* verbosity before any setting: 1 when a log destination is chosen, else 0. */
#define QG_VERBOSITY_UNSET (-1)

/* Query shapes (src/core/shape.h): off, record new ones, or treat unknown ones
 * as findings. */
typedef enum qg_shapes_mode {
    QG_SHAPES_OFF = 0,
    QG_SHAPES_LEARN,  /* append each new shape to the profile */
    QG_SHAPES_ENFORCE /* a shape not in the profile is an unknown_shape finding */
} qg_shapes_mode;

#define QG_MAX_ALLOW 64
#define QG_MAX_ALLOW_SHAPES 32
#define QG_MAX_PROGRAMS 16
#define QG_PATH_MAX 4096
#define QG_NAME_MAX 256
#define QG_SITE_MAX 256
#define QG_PROBLEM_TEXT_MAX 512

/* An allow entry by shape: findings of a query of this shape (shape.h, the
 * server's reading with literals folded) sent from this calling site (as the
 * log's "caller" names it; "" for any site) do not block. */
typedef struct qg_allow_shape {
    uint64_t shape;
    char site[QG_SITE_MAX];
} qg_allow_shape;

/* The small fields first: those every query reads (mode, active, shapes,
 * the MySQL policy) share one cache line; the lists and paths after them
 * fill pages that a query never touches (docs/PERFORMANCE.md, "Choices in
 * the code"). */
typedef struct qg_settings {
    qg_mode mode;
    /* Resolved at load time from the program lists and the program name. */
    bool active;
    qg_shapes_mode shapes; /* query shapes */
    size_t allow_count;
    /* MySQL ill-formed byte policy (QG_REASON_ILLFORMED_QUOTE / _ILLFORMED). */
    qg_action mysql_illformed_quote;
    qg_action mysql_illformed;
    int verbosity;       /* 0 quiet (findings only), 1 normal, 2 debug, or UNSET */
    bool log_full_query; /* operator asked for whole literals in the log */
    /* Rewrite mode: every literal it can replace, not only those that are
     * not plain text (QG_REWRITE_PLAIN_AS_IS). */
    bool rewrite_all;
    bool counters;       /* counters_dir is set: count queries (counters.h) */
    /* Set by the process's load (settings.c): checks, active, no shapes and
     * no counters, so a clean query passes with nothing to record
     * (qg_guard_query_in_line). */
    bool clean_in_line;
    /* The wire front (src/front/front_wire.c): drivers that speak the protocol
     * themselves; QUOTEGUARD_WIRE=off turns it off. */
    bool wire;
    /* wire_unguarded = pass: a wire connection the shim can no longer read
     * (TLS by another stack, GSSAPI encryption, MySQL compression, a stream
     * it cannot frame) passes unread in enforce, logged once; by default
     * (refuse) its bytes are refused. */
    bool wire_unguarded_pass;
    qg_log_sink log_sink;
    int syslog_facility; /* LOG_AUTHPRIV unless configured */
    char log_path[QG_PATH_MAX]; /* the file; for syslog/journal the socket, "" standard */
    /* Finding fingerprints the operator allowed (known false positives). */
    uint64_t allow[QG_MAX_ALLOW];
    /* Shapes and sites the operator allowed (`allow = shape:HEX@SITE`). */
    qg_allow_shape allow_shapes[QG_MAX_ALLOW_SHAPES];
    size_t allow_shape_count;
    /* Per-program scoping: basenames; empty lists mean "every program". */
    char only_programs[QG_MAX_PROGRAMS][QG_NAME_MAX];
    size_t only_count;
    char skip_programs[QG_MAX_PROGRAMS][QG_NAME_MAX];
    size_t skip_count;
    /* shapes_file may hold %p (the program name) and %% ('%'). */
    char shapes_file[QG_PATH_MAX];
    /* Where each process keeps its counters file, "" for none. */
    char counters_dir[QG_PATH_MAX];
    char program[QG_NAME_MAX];
    char config_path[QG_PATH_MAX]; /* the file read, "" when none */
} qg_settings;

/* Loads settings as the shim does — defaults, the config file, the
 * environment, as qg_settings_get() (settings.h) — but not the program name, into *s.
 * Every problem's text, up to kept_cap of them, goes to kept (for
 * `quoteguard check --config`).  Returns the number of problems; with any,
 * s->mode is enforce. */
int qg_settings_load_all(qg_settings *s, char (*kept)[QG_PROBLEM_TEXT_MAX], size_t kept_cap);

/* The config-file name of the index-th key ("mode", "log" …), NULL past the
 * last one; the environment name is QUOTEGUARD_ and its upper case. */
const char *qg_settings_key(size_t index);

/* Pure parser, for tests and fuzzing: applies the config-file text to *s.
 * Lines are `key = value`; `#` starts a comment at the start of a line or
 * after white space; `allow` may repeat (the lists add up), any other key
 * set twice keeps the last value.
 * Returns the number of problems found; the first one is described in errbuf
 * when errbuf is not NULL.  Any problem sets s->mode to enforce. */
int qg_settings_parse_file_text(qg_settings *s, const char *text, size_t len,
                                char *errbuf, size_t errlen);
/* Applies the QUOTEGUARD_* environment variables to *s; same return. */
int qg_settings_apply_env(qg_settings *s, char *errbuf, size_t errlen);
/* Defaults: enforce, stderr, normal verbosity, MySQL: block before quote, log others. */
void qg_settings_defaults(qg_settings *s);

/* Sets s->program and resolves s->active from the program lists. */
void qg_settings_set_program(qg_settings *s, const char *program);

/* "off" / "learn" / "enforce" (any case); false when unknown. */
bool qg_shapes_mode_parse(const char *text, qg_shapes_mode *mode);
const char *qg_shapes_mode_name(qg_shapes_mode mode);

/* Parses "enforce" / "audit" / "rewrite" / "off"; false when unknown. */
bool qg_mode_parse(const char *text, qg_mode *mode);
const char *qg_mode_name(qg_mode mode);

#endif
