/* Settings: defaults, config-file parser, environment, precedence, loader. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "config.h"
#include "settings.h"
#include "tap.h"
#include "test_files.h"

static const char *const env_keys[] = {
    "QUOTEGUARD_MODE",          "QUOTEGUARD_LOG",
    "QUOTEGUARD_CONFIG",        "QUOTEGUARD_VERBOSE",
    "QUOTEGUARD_LOG_FULL_QUERY", "QUOTEGUARD_SYSLOG_FACILITY",
    "QUOTEGUARD_ALLOW",         "QUOTEGUARD_ONLY_PROGRAMS",
    "QUOTEGUARD_SKIP_PROGRAMS", "QUOTEGUARD_MYSQL_ILLFORMED_QUOTE",
    "QUOTEGUARD_MYSQL_ILLFORMED", "QUOTEGUARD_REWRITE",
    "QUOTEGUARD_WIRE_UNGUARDED",
};

static void clear_env(void)
{
    for (size_t i = 0; i < sizeof env_keys / sizeof env_keys[0]; i++)
        unsetenv(env_keys[i]);
}

static int parse(qg_settings *s, const char *text, char *err, size_t errlen)
{
    return qg_settings_parse_file_text(s, text, strlen(text), err, errlen);
}

static char tmpdir[] = "/tmp/qg-test-config-XXXXXX";

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

/* The text on one line, for a TAP description. */
static const char *one_line(const char *text)
{
    static char buf[1024];
    size_t i = 0;
    for (; text[i] && i < sizeof buf - 1; i++)
        buf[i] = text[i] == '\n' ? ' ' : text[i];
    buf[i] = '\0';
    return buf;
}

static int count_lines(const char *text)
{
    int n = 0;
    for (; *text; text++)
        n += *text == '\n';
    return n;
}

static void test_defaults(void)
{
    qg_settings s;
    qg_settings_defaults(&s);
    tap_ok(s.mode == QG_MODE_ENFORCE, "default mode is enforce");
    tap_ok(s.log_sink == QG_LOG_DEFAULT && s.log_path[0] == '\0',
           "default log: none chosen (quiet)");
    tap_ok(s.syslog_facility == LOG_AUTHPRIV, "default facility is authpriv");
    tap_ok(s.verbosity == QG_VERBOSITY_UNSET, "default verbosity: unset");
    tap_ok(!s.log_full_query, "full queries are not logged by default");
    tap_ok(!s.rewrite_all, "rewrite mode replaces only the literals that need it by default");
    tap_ok(s.mysql_illformed_quote == QG_ACTION_BLOCK && s.mysql_illformed == QG_ACTION_LOG,
           "MySQL: ill-formed before a quote blocks, other ill-formed logs");
    tap_ok(s.allow_count == 0 && s.only_count == 0 && s.skip_count == 0, "empty lists");
    tap_ok(s.active, "active by default");
    tap_ok(!s.wire_unguarded_pass, "a wire connection that cannot be read is refused by default");
}

static void test_mode_names(void)
{
    static const struct {
        const char *text;
        qg_mode mode;
    } modes[] = {{"enforce", QG_MODE_ENFORCE}, {"audit", QG_MODE_AUDIT},
                 {"rewrite", QG_MODE_REWRITE}, {"off", QG_MODE_OFF}, {"AUDIT", QG_MODE_AUDIT}};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        qg_mode m = (qg_mode)-1;
        tap_ok(qg_mode_parse(modes[i].text, &m) && m == modes[i].mode, "mode \"%s\" parses",
               modes[i].text);
    }
    qg_mode m = QG_MODE_AUDIT;
    tap_ok(!qg_mode_parse("enforcing", &m) && m == QG_MODE_AUDIT, "unknown mode rejected");
    tap_ok(!qg_mode_parse("", &m), "empty mode rejected");
    tap_ok(strcmp(qg_mode_name(QG_MODE_REWRITE), "rewrite") == 0 &&
               strcmp(qg_mode_name(QG_MODE_OFF), "off") == 0,
           "mode names");
}

static void test_file_full(void)
{
    qg_settings s;
    qg_settings_defaults(&s);
    char err[512] = "";
    int problems = parse(&s,
                         "# quoteguard settings\n"
                         "\n"
                         "mode = audit\n"
                         "  log=/var/log/quoteguard.log   # trailing comment\n"
                         "verbose = 2\r\n"
                         "log_full_query = yes\n"
                         "syslog_facility = local3\n"
                         "allow = 0123456789abcdef\n"
                         "allow = FEDCBA9876543210, 00000000000000ff\n"
                         "only_programs = php-fpm, psql\n"
                         "skip_programs = pg_dump\n"
                         "mysql_illformed_quote = log\n"
                         "mysql_illformed = ignore\n"
                         "rewrite = ALL\n"
                         "\t# indented comment\n"
                         "MODE = rewrite",
                         err, sizeof err);
    tap_ok(problems == 0, "valid file: no problems (%s)", err);
    tap_ok(s.mode == QG_MODE_REWRITE, "last mode wins, key case-insensitive, no final newline");
    tap_ok(s.log_sink == QG_LOG_FILE && strcmp(s.log_path, "/var/log/quoteguard.log") == 0,
           "log file path, comment after white space dropped");
    tap_ok(s.verbosity == 2, "verbose with CRLF line end");
    tap_ok(s.log_full_query, "log_full_query yes");
    tap_ok(s.syslog_facility == LOG_LOCAL3, "facility local3");
    tap_ok(s.allow_count == 3 && s.allow[0] == 0x0123456789abcdefULL &&
               s.allow[1] == 0xfedcba9876543210ULL && s.allow[2] == 0xff,
           "allow lines add up, upper-case hex accepted");
    tap_ok(s.only_count == 2 && strcmp(s.only_programs[0], "php-fpm") == 0 &&
               strcmp(s.only_programs[1], "psql") == 0,
           "only_programs list trimmed");
    tap_ok(s.skip_count == 1 && strcmp(s.skip_programs[0], "pg_dump") == 0, "skip_programs");
    tap_ok(s.mysql_illformed_quote == QG_ACTION_LOG && s.mysql_illformed == QG_ACTION_IGNORE,
           "MySQL ill-formed actions");
    tap_ok(s.rewrite_all, "rewrite all, any case");

    qg_settings_defaults(&s);
    tap_ok(parse(&s, "rewrite = all\nrewrite = needed\n", err, sizeof err) == 0 && !s.rewrite_all,
           "rewrite = needed");
    tap_ok(parse(&s, "wire_unguarded = PASS\n", err, sizeof err) == 0 && s.wire_unguarded_pass,
           "wire_unguarded = pass, any case");
    tap_ok(parse(&s, "wire_unguarded = refuse\n", err, sizeof err) == 0 && !s.wire_unguarded_pass,
           "wire_unguarded = refuse");
    qg_settings_defaults(&s);
    tap_ok(parse(&s, "log = syslog\n", err, sizeof err) == 0 && s.log_sink == QG_LOG_SYSLOG,
           "log = syslog");
    tap_ok(parse(&s, "log = syslog:/run/test/log.sock\n", err, sizeof err) == 0 &&
               s.log_sink == QG_LOG_SYSLOG && strcmp(s.log_path, "/run/test/log.sock") == 0,
           "log = syslog:SOCKET names the socket");
    tap_ok(parse(&s, "log = Journal\n", err, sizeof err) == 0 && s.log_sink == QG_LOG_JOURNAL &&
               s.log_path[0] == '\0',
           "log = journal, any case, forgets an earlier socket");
    tap_ok(parse(&s, "log = journal:/j.sock\n", err, sizeof err) == 0 &&
               s.log_sink == QG_LOG_JOURNAL && strcmp(s.log_path, "/j.sock") == 0,
           "log = journal:SOCKET");
    tap_ok(parse(&s, "log = syslog:rel.sock\n", err, sizeof err) == 1 &&
               s.log_sink == QG_LOG_JOURNAL && strstr(err, "absolute"),
           "log = syslog:relative is a problem and changes nothing: %s", err);
    tap_ok(parse(&s, "log = stderr:/x\n", err, sizeof err) == 1, "stderr takes no path");
    tap_ok(parse(&s, "log = stderr\nlog_full_query = 0\n", err, sizeof err) == 0 &&
               s.log_sink == QG_LOG_STDERR && !s.log_full_query,
           "log = stderr, log_full_query 0");
    tap_ok(parse(&s, "log = /var/log/a#b.log\n", err, sizeof err) == 0 &&
               strcmp(s.log_path, "/var/log/a#b.log") == 0,
           "'#' inside a value is not a comment");
}

/* One bad line: exactly one problem, reported with key, value and source,
 * and the mode is enforce even though the file asked for off. */
static void expect_problem(const char *text, const char *needle1, const char *needle2,
                           const char *what)
{
    qg_settings s;
    qg_settings_defaults(&s);
    s.mode = QG_MODE_OFF;
    char err[512] = "";
    int problems = parse(&s, text, err, sizeof err);
    tap_ok(problems == 1 && s.mode == QG_MODE_ENFORCE && strstr(err, needle1) &&
               strstr(err, needle2),
           "%s: one problem, mode enforce, message names it (%s)", what, err);
}

static void test_file_problems(void)
{
    expect_problem("mode = off\nmode = enforcing\n", "mode=\"enforcing\"", "config file line 2",
                   "unknown mode");
    expect_problem("mode = off\nbogus = 1\n", "bogus=\"1\"", "unknown key", "unknown key");
    expect_problem("mode = off\nallow = 0123456789abcde\n", "0123456789abcde", "fingerprint",
                   "fingerprint of 15 digits");
    expect_problem("mode = off\nallow = 0123456789abcdeg\n", "0123456789abcdeg", "fingerprint",
                   "fingerprint with a non-hex digit");
    expect_problem("mode = off\njust words\n", "just words", "key = value", "line without =");
    expect_problem("mode = off\nlog = quoteguard.log\n", "quoteguard.log", "absolute",
                   "relative log path");
    expect_problem("mode = off\nverbose = 3\n", "verbose=\"3\"", "0, 1 or 2", "verbose 3");
    expect_problem("mode = off\nsyslog_facility = kernel\n", "kernel", "facility",
                   "unknown facility");
    expect_problem("mode = off\nmysql_illformed = drop\n", "drop", "block, log or ignore",
                   "unknown MySQL action");
    expect_problem("mode = off\nrewrite = some\n", "rewrite=\"some\"", "needed or all",
                   "unknown rewrite choice");
    expect_problem("mode = off\nwire_unguarded = allow\n", "wire_unguarded=\"allow\"",
                   "refuse or pass", "unknown wire_unguarded choice");
    expect_problem("mode = off\nlog_full_query = maybe\n", "maybe", "log_full_query",
                   "bad boolean");
    expect_problem("mode = off\nonly_programs = /usr/bin/psql\n", "/usr/bin/psql", "basename",
                   "program with a path");

    qg_settings s;
    qg_settings_defaults(&s);
    char err[512] = "";
    tap_ok(parse(&s, "allow = 0123456789abcdef, nothex, fedcba9876543210\n", err, sizeof err) ==
                   1 &&
               s.allow_count == 2,
           "a bad fingerprint does not drop the good ones beside it");

    char text[64 * 32 + 64] = "";
    for (int i = 0; i <= QG_MAX_ALLOW; i++) {
        char entry[32];
        snprintf(entry, sizeof entry, "allow = %016x\n", i);
        strcat(text, entry);
    }
    qg_settings_defaults(&s);
    tap_ok(parse(&s, text, err, sizeof err) == 1 && s.allow_count == QG_MAX_ALLOW,
           "more than %d fingerprints is a problem, the first ones kept", QG_MAX_ALLOW);

    qg_settings_defaults(&s);
    s.mode = QG_MODE_AUDIT;
    tap_ok(parse(&s, "bogus = 1\nmode = off\nalso_bogus = 2\n", NULL, 0) == 2 &&
               s.mode == QG_MODE_ENFORCE,
           "problems are counted without an errbuf; a later mode = off does not win");
}

static void test_env(void)
{
    clear_env();
    qg_settings s;
    qg_settings_defaults(&s);
    char err[512] = "";
    tap_ok(qg_settings_apply_env(&s, err, sizeof err) == 0 && s.mode == QG_MODE_ENFORCE,
           "no variables: nothing changes");

    setenv("QUOTEGUARD_MODE", "audit", 1);
    setenv("QUOTEGUARD_LOG", "syslog", 1);
    setenv("QUOTEGUARD_VERBOSE", "0", 1);
    setenv("QUOTEGUARD_LOG_FULL_QUERY", "1", 1);
    setenv("QUOTEGUARD_SYSLOG_FACILITY", "user", 1);
    setenv("QUOTEGUARD_ALLOW", "00000000000000aa,00000000000000bb", 1);
    setenv("QUOTEGUARD_ONLY_PROGRAMS", "psql", 1);
    setenv("QUOTEGUARD_SKIP_PROGRAMS", "", 1);
    setenv("QUOTEGUARD_MYSQL_ILLFORMED_QUOTE", "ignore", 1);
    setenv("QUOTEGUARD_MYSQL_ILLFORMED", "block", 1);
    setenv("QUOTEGUARD_REWRITE", "all", 1);
    qg_settings_defaults(&s);
    /* The file's list of fingerprints is replaced by the environment's. */
    parse(&s, "allow = 0123456789abcdef\nskip_programs = pg_dump\nmode = off\n", err, sizeof err);
    int problems = qg_settings_apply_env(&s, err, sizeof err);
    tap_ok(problems == 0, "environment applied without problems (%s)", err);
    tap_ok(s.mode == QG_MODE_AUDIT, "env mode beats file mode");
    tap_ok(s.log_sink == QG_LOG_SYSLOG && s.verbosity == 0 && s.log_full_query &&
               s.syslog_facility == LOG_USER,
           "log, verbosity, full query, facility from env");
    tap_ok(s.allow_count == 2 && s.allow[0] == 0xaa && s.allow[1] == 0xbb,
           "env allow list replaces the file's");
    tap_ok(s.only_count == 1 && strcmp(s.only_programs[0], "psql") == 0, "env only_programs");
    tap_ok(s.skip_count == 1, "an empty variable counts as unset");
    tap_ok(s.mysql_illformed_quote == QG_ACTION_IGNORE && s.mysql_illformed == QG_ACTION_BLOCK,
           "env MySQL actions");
    tap_ok(s.rewrite_all, "env rewrite");

    clear_env();
    setenv("QUOTEGUARD_MODE", "disabled", 1);
    qg_settings_defaults(&s);
    s.mode = QG_MODE_OFF;
    problems = qg_settings_apply_env(&s, err, sizeof err);
    tap_ok(problems == 1 && s.mode == QG_MODE_ENFORCE && strstr(err, "QUOTEGUARD_MODE") &&
               strstr(err, "disabled") && strstr(err, "environment"),
           "bad env mode: enforce, named with value and source (%s)", err);
    clear_env();
    setenv("QUOTEGUARD_ALLOW", "xyz", 1);
    qg_settings_defaults(&s);
    s.mode = QG_MODE_AUDIT;
    problems = qg_settings_apply_env(&s, err, sizeof err);
    tap_ok(problems == 1 && s.mode == QG_MODE_ENFORCE && strstr(err, "QUOTEGUARD_ALLOW"),
           "bad env fingerprint: enforce (%s)", err);
    clear_env();
}

static void test_programs(void)
{
    qg_settings s;
    qg_settings_defaults(&s);
    qg_settings_set_program(&s, "psql");
    tap_ok(s.active && strcmp(s.program, "psql") == 0, "no lists: every program is active");

    parse(&s, "only_programs = php-fpm, psql\n", NULL, 0);
    qg_settings_set_program(&s, "psql");
    tap_ok(s.active, "listed in only_programs: active");
    qg_settings_set_program(&s, "perl");
    tap_ok(!s.active, "not in only_programs: inactive");

    qg_settings_defaults(&s);
    parse(&s, "skip_programs = pg_dump,pg_restore\n", NULL, 0);
    qg_settings_set_program(&s, "pg_restore");
    tap_ok(!s.active, "in skip_programs: inactive");
    qg_settings_set_program(&s, "psql");
    tap_ok(s.active, "not skipped: active");
    qg_settings_set_program(&s, "pg_restore2");
    tap_ok(s.active, "names match whole, not by prefix");

    parse(&s, "only_programs = pg_dump\n", NULL, 0);
    qg_settings_set_program(&s, "pg_dump");
    tap_ok(!s.active, "skip wins over only");
}

/* An explicitly named config file that cannot be read: reported, and the
 * mode is enforce although the environment says off.  Runs in a child,
 * since the process-wide settings load only once. */
static void test_loader_unreadable_file(void)
{
    char log_path[256];
    snprintf(log_path, sizeof log_path, "%s/unreadable.log", tmpdir);
    pid_t pid = fork();
    if (pid == 0) {
        clear_env();
        setenv("QUOTEGUARD_CONFIG", "/nonexistent/quoteguard.conf", 1);
        setenv("QUOTEGUARD_MODE", "off", 1);
        setenv("QUOTEGUARD_LOG", log_path, 1);
        const qg_settings *s = qg_settings_get();
        _exit(s->mode == QG_MODE_ENFORCE ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
           "unreadable QUOTEGUARD_CONFIG: mode enforce, not off");
    const char *log = read_whole_file(log_path, NULL);
    tap_ok(count_lines(log) == 1 && strstr(log, "\"level\":\"error\"") &&
               strstr(log, "/nonexistent/quoteguard.conf") && strstr(log, "QUOTEGUARD_CONFIG"),
           "reported once at level error, naming the file: %s", one_line(log));
}

static const qg_settings *seen[4];

static void *get_settings(void *arg)
{
    seen[(size_t)arg] = qg_settings_get();
    return NULL;
}

static void test_loader(void)
{
    char conf_path[256], log_path[256];
    snprintf(conf_path, sizeof conf_path, "%s/quoteguard.conf", tmpdir);
    snprintf(log_path, sizeof log_path, "%s/loader.log", tmpdir);
    write_file(conf_path, "mode = off\nbogus_key = 17\nverbose = 2\nskip_programs = other\n");
    clear_env();
    setenv("QUOTEGUARD_CONFIG", conf_path, 1);
    setenv("QUOTEGUARD_LOG", log_path, 1);
    setenv("QUOTEGUARD_ALLOW", "00000000000000aa", 1);

    pthread_t threads[4];
    for (size_t i = 0; i < 4; i++)
        pthread_create(&threads[i], NULL, get_settings, (void *)i);
    for (size_t i = 0; i < 4; i++)
        pthread_join(threads[i], NULL);
    const qg_settings *s = qg_settings_get();
    tap_ok(seen[0] == s && seen[1] == s && seen[2] == s && seen[3] == s,
           "concurrent first calls all get the same settings");
    tap_ok(s->mode == QG_MODE_ENFORCE, "config problem: mode enforce although the file says off");
    tap_ok(s->verbosity == 2 && s->allow_count == 1 && s->allow[0] == 0xaa,
           "file and environment both applied");
    tap_ok(s->log_sink == QG_LOG_FILE && strcmp(s->log_path, log_path) == 0,
           "log path from the environment");
    tap_ok(strcmp(s->config_path, conf_path) == 0, "config_path records the file read");
    tap_ok(strcmp(s->program, "test_config") == 0, "program name from /proc/self/exe: %s",
           s->program);
    tap_ok(s->active, "active: not in skip_programs");

    qg_settings_get();
    const char *log = read_whole_file(log_path, NULL);
    tap_ok(count_lines(log) == 1, "the problem is reported exactly once: %s", one_line(log));
    tap_ok(strstr(log, "\"level\":\"error\"") && strstr(log, "bogus_key") &&
               strstr(log, "17") && strstr(log, conf_path) && strstr(log, "line 2") &&
               strstr(log, "enforce"),
           "the report names key, value, file and line, and the fallback");
    clear_env();
}

/* allow = shape:HEX[@SITE] entries and counters_dir. */
static void test_allow_shapes_and_counters(void)
{
    qg_settings s;
    char err[512] = "";
    qg_settings_defaults(&s);
    tap_ok(parse(&s,
                 "allow = shape:00000000000000aa@legacy+0x1a2b, 0123456789abcdef\n"
                 "allow = shape:FEDCBA9876543210\n"
                 "counters_dir = /run/quoteguard\n",
                 err, sizeof err) == 0,
           "shape entries, a fingerprint beside them and counters_dir parse (%s)", err);
    tap_ok(s.allow_shape_count == 2 && s.allow_shapes[0].shape == 0xaa &&
               strcmp(s.allow_shapes[0].site, "legacy+0x1a2b") == 0 &&
               s.allow_shapes[1].shape == 0xfedcba9876543210ULL && s.allow_shapes[1].site[0] == '\0',
           "shape entries keep their shape and site (none: any site)");
    tap_ok(s.allow_count == 1 && s.allow[0] == 0x0123456789abcdefULL,
           "the fingerprint beside them is a fingerprint entry");
    tap_ok(s.counters && strcmp(s.counters_dir, "/run/quoteguard") == 0, "counters_dir sets counting");

    expect_problem("mode = off\nallow = shape:00aa\n", "shape:00aa", "shape:FINGERPRINT",
                   "a short shape");
    expect_problem("mode = off\nallow = shape:00000000000000aa@\n", "@", "shape:FINGERPRINT@SITE",
                   "an empty site");
    expect_problem("mode = off\ncounters_dir = run/qg\n", "run/qg", "absolute directory",
                   "a relative counters_dir");
    expect_problem("mode = off\nmode = \"audit\"\n", "audit", "without quotes",
                   "a quoted value: the message says values take none");
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_defaults();
    test_mode_names();
    test_file_full();
    test_file_problems();
    test_allow_shapes_and_counters();
    test_env();
    test_programs();
    test_loader_unreadable_file();
    test_loader();

    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        tap_diag("could not remove %s", tmpdir);
    return tap_done();
}
