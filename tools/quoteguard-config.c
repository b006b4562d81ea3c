/* quoteguard-config: the shim's own settings loader, run on its own, so that
 * the wrapper validates and shows a configuration exactly as the preloaded
 * library will read it (shim/config.c; no second parser).
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "config.h"

#define KEPT_MAX 256

static char kept[KEPT_MAX][QG_PROBLEM_TEXT_MAX];

/* The settings' keys in the order `quoteguard check` lists them. */
static const char *const key_names[] = {
    "mode", "rewrite", "log", "verbose", "log_full_query", "syslog_facility", "allow",
    "only_programs", "skip_programs", "mysql_illformed_quote", "mysql_illformed", "shapes",
    "shapes_file", "counters_dir", "wire",
};
#define KEYS (sizeof key_names / sizeof key_names[0])

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

/* The value of key `k` in *s as text, as it would be written in the file. */
static void format_key(const qg_settings *s, size_t k, char *out, size_t cap)
{
    out[0] = '\0';
    char item[QG_SITE_MAX + 32];
    switch (k) {
    case 0: snprintf(out, cap, "%s", qg_mode_name(s->mode)); break;
    case 1: snprintf(out, cap, "%s", s->rewrite_all ? "all" : "needed"); break;
    case 2:
        snprintf(out, cap, "%s", s->log_sink == QG_LOG_FILE     ? s->log_path
                                 : s->log_sink == QG_LOG_SYSLOG ? "syslog"
                                                                : "stderr");
        break;
    case 3: snprintf(out, cap, "%d", s->verbosity); break;
    case 4: snprintf(out, cap, "%d", s->log_full_query ? 1 : 0); break;
    case 5:
        for (const CODE *c = facilitynames; c->c_name; c++)
            if (c->c_val == s->syslog_facility) {
                snprintf(out, cap, "%s", c->c_name);
                break;
            }
        break;
    case 6:
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
        break;
    case 7: format_list(out, cap, s->only_programs, s->only_count); break;
    case 8: format_list(out, cap, s->skip_programs, s->skip_count); break;
    case 9: snprintf(out, cap, "%s", action_name(s->mysql_illformed_quote)); break;
    case 10: snprintf(out, cap, "%s", action_name(s->mysql_illformed)); break;
    case 11: snprintf(out, cap, "%s", qg_shapes_mode_name(s->shapes)); break;
    case 12: snprintf(out, cap, "%s", s->shapes_file); break;
    case 13: snprintf(out, cap, "%s", s->counters_dir); break;
    case 14: snprintf(out, cap, "%s", s->wire ? "on" : "off"); break;
    default: break;
    }
}

/* The settings from the file alone: the QUOTEGUARD_* variables (but the
 * one naming the file) set aside while loading. */
static void load_file_only(qg_settings *s)
{
    char *saved[KEYS];
    char var[64];
    for (size_t k = 0; k < KEYS; k++) {
        snprintf(var, sizeof var, "QUOTEGUARD_%s", key_names[k]);
        for (char *c = var; *c; c++)
            if (*c >= 'a' && *c <= 'z')
                *c = (char)(*c - 'a' + 'A');
        const char *value = getenv(var);
        saved[k] = value ? strdup(value) : NULL;
        unsetenv(var);
    }
    qg_settings_load_all(s, kept, KEPT_MAX);
    for (size_t k = 0; k < KEYS; k++) {
        if (!saved[k])
            continue;
        snprintf(var, sizeof var, "QUOTEGUARD_%s", key_names[k]);
        for (char *c = var; *c; c++)
            if (*c >= 'a' && *c <= 'z')
                *c = (char)(*c - 'a' + 'A');
        setenv(var, saved[k], 1);
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
    for (size_t k = 0; k < KEYS; k++) {
        format_key(&defaults, k, a, sizeof a);
        format_key(&from_file, k, b, sizeof b);
        format_key(&effective, k, c, sizeof c);
        const char *source = strcmp(c, b) != 0 ? "environment"
                             : strcmp(b, a) != 0 ? "config"
                                                 : "default";
        if (k == 0 && problems)
            source = "forced: the settings have problems";
        printf("%s\t%s\t%s\n", key_names[k], c, source);
    }
    if (argc == 3) {
        qg_settings_set_program(&effective, argv[2]);
        printf("active\t%s\n", effective.active ? "yes" : "no");
    }
    return 0;
}
