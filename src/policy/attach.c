/* The "attached" line: proof for operators that the shim is loaded and sees
 * a client library or a database connection.  Logged once per process: at
 * start-up when the program links a client library, else at the first query
 * (a library an interpreter dlopen()ed later) or the first connection the
 * wire front recognises, never in processes without either. */
#include "attach.h"

#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "client_libraries.h"
#include "config.h"
#include "log.h"
#include "settings.h"

static bool announced;

typedef struct found_list {
    char *out;
    size_t cap, used;
} found_list;

/* Adds an object's file name when it is a client library. */
static int note_client_library(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    found_list *found = data;
    const char *path = info->dlpi_name;
    if (!path || !qg_is_client_library(path, strlen(path)))
        return 0;
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    int n = snprintf(found->out + found->used, found->cap - found->used, "%s%s",
                     found->used ? "," : "", name);
    if (n < 0 || (size_t)n >= found->cap - found->used)
        return 1;
    found->used += (size_t)n;
    return 0;
}

/* Comma-separated file names of the client libraries mapped now, read from
 * the loader's own list of objects: asking dlopen(RTLD_NOLOAD) by soname
 * would search every library directory for each name not loaded, in every
 * process the shim is preloaded into. */
static void loaded_libraries(char *out, size_t cap)
{
    found_list found = {out, cap, 0};
    out[0] = '\0';
    dl_iterate_phdr(note_client_library, &found);
}

void qg_attach_announce(void)
{
    if (__atomic_load_n(&announced, __ATOMIC_ACQUIRE))
        return;
    /* Probe first: a process without a client library never even loads
     * the settings here. */
    char found[256];
    loaded_libraries(found, sizeof found);
    if (found[0] == '\0')
        return;
    const qg_settings *s = qg_settings_get();
    if (s->mode == QG_MODE_OFF || !s->active)
        return;
    if (!__atomic_exchange_n(&announced, true, __ATOMIC_ACQ_REL))
        qg_log_write_startup(s, found);
}

void qg_attach_announce_wire(const char *what)
{
    if (__atomic_load_n(&announced, __ATOMIC_ACQUIRE))
        return;
    const qg_settings *s = qg_settings_get();
    if (s->mode == QG_MODE_OFF || !s->active)
        return;
    if (!__atomic_exchange_n(&announced, true, __ATOMIC_ACQ_REL))
        qg_log_write_startup(s, what);
}

/* Libraries the program links are mapped before any constructor runs. */
__attribute__((constructor)) static void announce_at_start(void)
{
    qg_attach_announce();
}
