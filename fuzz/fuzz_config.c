/*
 * qg_settings_parse_file_text: no crash on any text (not NUL-terminated, any
 * error-buffer size), every field stays within its bounds, a problem always
 * means enforce, and the text parsed line by line gives the same settings as
 * the text parsed whole.  Input: error-buffer size byte, then the file text.
 */
#include "config.h"
#include "fuzz_common.h"

static void check_name_list(const char (*list)[QG_NAME_MAX], size_t count, const char *what)
{
    FUZZ_CHECK(count <= QG_MAX_PROGRAMS, "%zu %s", count, what);
    for (size_t i = 0; i < count; i++) {
        size_t n = strnlen(list[i], QG_NAME_MAX);
        FUZZ_CHECK(n > 0 && n < QG_NAME_MAX, "%s[%zu] has length %zu", what, i, n);
        FUZZ_CHECK(!memchr(list[i], '/', n) && !memchr(list[i], ',', n), "%s[%zu] = \"%s\"", what,
                   i, list[i]);
    }
}

static void check_settings(const qg_settings *s, int problems)
{
    FUZZ_CHECK(problems >= 0, "%d problems", problems);
    FUZZ_CHECK(s->mode <= QG_MODE_REWRITE, "mode %d", (int)s->mode);
    if (problems > 0)
        FUZZ_CHECK(s->mode == QG_MODE_ENFORCE, "%d problems but mode %s", problems,
                   qg_mode_name(s->mode));
    FUZZ_CHECK(s->log_sink <= QG_LOG_FILE, "sink %d", (int)s->log_sink);
    size_t path_len = strnlen(s->log_path, QG_PATH_MAX);
    FUZZ_CHECK(path_len < QG_PATH_MAX, "log path not terminated");
    if (s->log_sink == QG_LOG_FILE)
        FUZZ_CHECK(s->log_path[0] == '/', "log file \"%s\" is not absolute", s->log_path);
    else
        FUZZ_CHECK(s->log_path[0] == '\0' || s->log_path[0] == '/',
                   "log socket \"%s\" is not absolute", s->log_path);
    if (s->log_sink == QG_LOG_STDERR || s->log_sink == QG_LOG_DEFAULT)
        FUZZ_CHECK(s->log_path[0] == '\0', "sink %d with a path", (int)s->log_sink);
    FUZZ_CHECK(s->verbosity == QG_VERBOSITY_UNSET || (s->verbosity >= 0 && s->verbosity <= 2),
               "verbosity %d", s->verbosity);
    FUZZ_CHECK(s->mysql_illformed_quote <= QG_ACTION_BLOCK && s->mysql_illformed <= QG_ACTION_BLOCK,
               "actions %d %d", s->mysql_illformed_quote, s->mysql_illformed);
    FUZZ_CHECK(s->allow_count <= QG_MAX_ALLOW, "%zu fingerprints", s->allow_count);
    check_name_list(s->only_programs, s->only_count, "only_programs");
    check_name_list(s->skip_programs, s->skip_count, "skip_programs");
}

/* Settings minus the mode, which a problem anywhere overrides. */
static bool same_except_mode(const qg_settings *a, const qg_settings *b)
{
    qg_settings x = *a, y = *b;
    x.mode = y.mode = QG_MODE_OFF;
    return memcmp(&x, &y, sizeof x) == 0;
}

static qg_settings whole, by_line, again;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t errlen = data[0] % 40;
    size_t len = size - 1;
    char *text = (char *)fuzz_exact_copy(data + 1, len);
    char *errbuf = NULL;
    if (errlen) {
        errbuf = calloc(1, errlen); /* exact size: ASan sees an overflow */
        FUZZ_CHECK(errbuf != NULL, "out of memory");
    }

    qg_settings_defaults(&whole);
    int problems = qg_settings_parse_file_text(&whole, text, len, errbuf, errlen);
    check_settings(&whole, problems);
    if (errbuf) {
        FUZZ_CHECK(memchr(errbuf, '\0', errlen) != NULL, "error text not terminated");
        if (problems > 0 && errlen > 1)
            FUZZ_CHECK(errbuf[0] != '\0', "%d problems, no text", problems);
        if (problems == 0)
            FUZZ_CHECK(errbuf[0] == '\0', "no problem, but text \"%s\"", errbuf);
    }

    qg_settings_defaults(&again);
    FUZZ_CHECK(qg_settings_parse_file_text(&again, text, len, NULL, 0) == problems,
               "problem count changes between runs");
    FUZZ_CHECK(memcmp(&whole, &again, sizeof whole) == 0, "settings change between runs");

    /* Lines are independent: feeding them one at a time gives the same. */
    qg_settings_defaults(&by_line);
    int line_problems = 0;
    size_t pos = 0;
    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t line_len = nl ? (size_t)(nl - (text + pos)) + 1 : len - pos;
        line_problems += qg_settings_parse_file_text(&by_line, text + pos, line_len, NULL, 0);
        pos += line_len;
    }
    FUZZ_CHECK(line_problems == problems, "%d problems whole, %d line by line", problems,
               line_problems);
    FUZZ_CHECK(same_except_mode(&whole, &by_line), "line-by-line parse differs");
    if (problems == 0)
        FUZZ_CHECK(whole.mode == by_line.mode, "mode differs");

    free(errbuf);
    free(text);
    return 0;
}
