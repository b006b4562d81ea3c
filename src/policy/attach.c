/* The "attached" line: proof for operators that the shim is loaded and sees
 * a client library or a database connection.  Logged once per process: at
 * start-up when the program links a client library, else at the first query
 * (a library an interpreter dlopen()ed later) or the first connection the
 * wire front recognises, never in processes without either. */
#include "attach.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>

#include "client_libraries.h"
#include "config.h"
#include "log.h"
#include "real.h"
#include "settings.h"

static bool announced;

/* Comma-separated sonames of the client libraries mapped now. */
static void loaded_libraries(char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    qg_dlopen_fn real_dlopen = qg_real_dlopen();
    qg_dlclose_fn real_dlclose = qg_real_dlclose();
    for (size_t i = 0; real_dlopen && real_dlclose && qg_client_sonames[i]; i++) {
        void *handle = real_dlopen(qg_client_sonames[i], RTLD_LAZY | RTLD_NOLOAD);
        if (!handle)
            continue;
        real_dlclose(handle);
        int n = snprintf(out + used, cap - used, "%s%s", used ? "," : "", qg_client_sonames[i]);
        if (n < 0 || (size_t)n >= cap - used)
            break;
        used += (size_t)n;
    }
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
