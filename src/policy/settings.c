/* The process's settings: loaded once, on first use, from any thread; each
 * problem the loader found is logged once. */
#include "settings.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "hot.h"
#include "log.h"

#define LOADER_PROBLEMS_KEPT 8

QG_FAR_BSS static qg_settings loaded_settings;
const qg_settings *qg_settings_loaded;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
QG_FAR_BSS static char kept_problems[LOADER_PROBLEMS_KEPT][QG_PROBLEM_TEXT_MAX];

static void copy_truncated(char *out, size_t cap, const char *text)
{
    size_t n = strnlen(text, cap - 1);
    memcpy(out, text, n);
    out[n] = '\0';
}

static void program_name(char *out, size_t cap)
{
    char exe[QG_PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        static const char deleted[] = " (deleted)";
        size_t dl = sizeof deleted - 1;
        if ((size_t)n > dl && strcmp(exe + n - dl, deleted) == 0)
            exe[n - dl] = '\0';
        const char *slash = strrchr(exe, '/');
        copy_truncated(out, cap, slash ? slash + 1 : exe);
        return;
    }
    copy_truncated(out, cap, program_invocation_short_name);
}

static void load(void)
{
    qg_settings *s = &loaded_settings;
    int problems = qg_settings_load_all(s, kept_problems, LOADER_PROBLEMS_KEPT);

    char program[QG_NAME_MAX];
    program_name(program, sizeof program);
    qg_settings_set_program(s, program);
    s->clean_in_line =
        s->mode != QG_MODE_OFF && s->active && s->shapes == QG_SHAPES_OFF && !s->counters;

    if (problems) {
        size_t shown =
            (size_t)problems < LOADER_PROBLEMS_KEPT ? (size_t)problems : LOADER_PROBLEMS_KEPT;
        for (size_t i = 0; i < shown; i++) {
            char detail[QG_PROBLEM_TEXT_MAX + 64];
            snprintf(detail, sizeof detail, "%.*s; using mode enforce", QG_PROBLEM_TEXT_MAX,
                     kept_problems[i]);
            qg_log_write_event(s, "error", "config_error", detail);
        }
        if ((size_t)problems > shown) {
            char detail[96];
            snprintf(detail, sizeof detail, "%zu more configuration problems not shown",
                     (size_t)problems - shown);
            qg_log_write_event(s, "error", "config_error", detail);
        }
    }
    __atomic_store_n(&qg_settings_loaded, s, __ATOMIC_RELEASE);
}

const qg_settings *qg_settings_load(void)
{
    pthread_once(&load_once, load);
    return &loaded_settings;
}
