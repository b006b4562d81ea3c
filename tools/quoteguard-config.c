/* quoteguard-config: the shim's own settings loader, run on its own, so that
 * the wrapper validates and shows a configuration exactly as the preloaded
 * library will read it (src/policy/config.c; no second parser).
 *
 *   quoteguard-config check            one line per problem on stdout;
 *                                      exit 1 when there is one, else 0
 *   quoteguard-config show [PROGRAM]   "key<TAB>value<TAB>source" per setting
 *                                      (source: default, config, environment),
 *                                      "active<TAB>yes|no" for PROGRAM, then
 *                                      "problem<TAB>text" lines
 *
 * The file is $QUOTEGUARD_CONFIG, else /etc/quoteguard.conf; the
 * QUOTEGUARD_* variables apply over it, as in the library.  Exit 2: usage. */
#define SYSLOG_NAMES
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "config.h"

#define KEPT_MAX 256

static char kept[KEPT_MAX][QG_PROBLEM_TEXT_MAX];

static const char *action_name(qg_action a)
{
    return a == QG_ACTION_BLOCK ? "block" : a == QG_ACTION_LOG ? "log" : "ignore";
}

static void append(char *out, size_t cap, const char *text)
{
    size_t used = strlen(out);
    snprintf(out + used, cap - used, "%s%s", used ? "," : "", text);
}

static void format_list(char *out, size_t cap, const char (*list)[QG_NAME_MAX], size_t n)
{
    for (size_t i = 0; i < n; i++)
        append(out, cap, list[i]);
}

static bool is(const char *key, const char *name)
{
    return strcmp(key, name) == 0;
}

/* The value of `key` in *s as text, as it would be written in the file. */
static void format_key(const qg_settings *s, const char *key, char *out, size_t cap)
{
    out[0] = '\0';
    char item[QG_SITE_MAX + 32];
    if (is(key, "mode"))
        snprintf(out, cap, "%s", qg_mode_name(s->mode));
    else if (is(key, "rewrite"))
        snprintf(out, cap, "%s", s->rewrite_all ? "all" : "needed");
    else if (is(key, "log")) {
        static const char *const sinks[] = {[QG_LOG_DEFAULT] = "none", [QG_LOG_STDERR] = "stderr",
                                            [QG_LOG_SYSLOG] = "syslog", [QG_LOG_JOURNAL] = "journal",
                                            [QG_LOG_FILE] = ""};
        snprintf(out, cap, "%s%s%s", sinks[s->log_sink],
                 s->log_path[0] && s->log_sink != QG_LOG_FILE ? ":" : "", s->log_path);
    } else if (is(key, "verbose")) {
        if (s->verbosity == QG_VERBOSITY_UNSET)
            snprintf(out, cap, "unset");
        else
            snprintf(out, cap, "%d", s->verbosity);
    }
    else if (is(key, "log_full_query"))
        snprintf(out, cap, "%d", s->log_full_query ? 1 : 0);
    else if (is(key, "syslog_facility")) {
        for (const CODE *c = facilitynames; c->c_name; c++)
            if (c->c_val == s->syslog_facility) {
                snprintf(out, cap, "%s", c->c_name);
                break;
            }
    } else if (is(key, "allow")) {
        for (size_t i = 0; i < s->allow_count; i++) {
            snprintf(item, sizeof item, "%016" PRIx64, s->allow[i]);
            append(out, cap, item);
        }
        for (size_t i = 0; i < s->allow_shape_count; i++) {
            const qg_allow_shape *a = &s->allow_shapes[i];
            snprintf(item, sizeof item, "shape:%016" PRIx64 "%s%s", a->shape,
                     a->site[0] ? "@" : "", a->site);
            append(out, cap, item);
        }
    } else if (is(key, "only_programs"))
        format_list(out, cap, s->only_programs, s->only_count);
    else if (is(key, "skip_programs"))
        format_list(out, cap, s->skip_programs, s->skip_count);
    else if (is(key, "mysql_illformed_quote"))
        snprintf(out, cap, "%s", action_name(s->mysql_illformed_quote));
    else if (is(key, "mysql_illformed"))
        snprintf(out, cap, "%s", action_name(s->mysql_illformed));
    else if (is(key, "shapes"))
        snprintf(out, cap, "%s", qg_shapes_mode_name(s->shapes));
    else if (is(key, "shapes_file"))
        snprintf(out, cap, "%s", s->shapes_file);
    else if (is(key, "counters_dir"))
        snprintf(out, cap, "%s", s->counters_dir);
    else if (is(key, "wire"))
        snprintf(out, cap, "%s", s->wire ? "on" : "off");
    else if (is(key, "wire_unguarded"))
        snprintf(out, cap, "%s", s->wire_unguarded_pass ? "pass" : "refuse");
    else
        snprintf(out, cap, "(not shown by quoteguard-config)");
}

static void env_name(const char *key, char *out, size_t cap)
{
    snprintf(out, cap, "QUOTEGUARD_%s", key);
    for (char *c = out; *c; c++)
        if (*c >= 'a' && *c <= 'z')
            *c = (char)(*c - 'a' + 'A');
}

/* The settings from the file alone: the QUOTEGUARD_* variables (but the
 * one naming the file) set aside while loading. */
static void load_file_only(qg_settings *s)
{
    enum { KEYS_MAX = 64 };
    char *saved[KEYS_MAX] = {0};
    char var[96];
    size_t n = 0;
    while (n < KEYS_MAX && qg_settings_key(n))
        n++;
    for (size_t k = 0; k < n; k++) {
        env_name(qg_settings_key(k), var, sizeof var);
        const char *value = getenv(var);
        saved[k] = value ? strdup(value) : NULL;
        unsetenv(var);
    }
    qg_settings_load_all(s, kept, KEPT_MAX);
    for (size_t k = 0; k < n; k++) {
        if (saved[k]) {
            env_name(qg_settings_key(k), var, sizeof var);
            setenv(var, saved[k], 1);
        }
        free(saved[k]);
    }
}

static qg_settings defaults, from_file, effective;

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "check") != 0 && strcmp(argv[1], "show") != 0) ||
        argc > 3) {
        fprintf(stderr, "usage: quoteguard-config check | show [PROGRAM]\n");
        return 2;
    }
    int problems = qg_settings_load_all(&effective, kept, KEPT_MAX);
    size_t shown = problems < KEPT_MAX ? (size_t)problems : KEPT_MAX;
    if (strcmp(argv[1], "check") == 0) {
        for (size_t i = 0; i < shown; i++)
            printf("%s\n", kept[i]);
        if ((size_t)problems > shown)
            printf("%zu more problems not shown\n", (size_t)problems - shown);
        return problems ? 1 : 0;
    }
    /* The problems' texts first: the file-only load below reuses `kept`. */
    for (size_t i = 0; i < shown; i++)
        printf("problem\t%s\n", kept[i]);
    qg_settings_defaults(&defaults);
    load_file_only(&from_file);
    char a[QG_PATH_MAX * 2], b[QG_PATH_MAX * 2], c[QG_PATH_MAX * 2];
    const char *key;
    for (size_t k = 0; (key = qg_settings_key(k)); k++) {
        format_key(&defaults, key, a, sizeof a);
        format_key(&from_file, key, b, sizeof b);
        format_key(&effective, key, c, sizeof c);
        const char *source = strcmp(c, b) != 0 ? "environment"
                             : strcmp(b, a) != 0 ? "config"
                                                 : "default";
        if (is(key, "mode") && problems)
            source = "forced: the settings have problems";
        printf("%s\t%s\t%s\n", key, c, source);
    }
    if (argc == 3) {
        qg_settings_set_program(&effective, argv[2]);
        printf("active\t%s\n", effective.active ? "yes" : "no");
    }
    return 0;
}
