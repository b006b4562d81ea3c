/* Logs the start-up line once, when the shim is loaded into a process. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>

#include "config.h"
#include "log.h"

/* Client libraries the fronts know, by the sonames programs link. */
static const char *const client_sonames[] = {
    "libpq.so.5",           "libmariadb.so.3",        "libmysqlclient.so.24",
    "libmysqlclient.so.21", "libmysqlclient.so.20",   "libmysqlclient.so.18",
};

__attribute__((constructor)) static void log_startup(void)
{
    const qg_settings *s = qg_settings_get();
    if (s->mode == QG_MODE_OFF || !s->active)
        return;
    /* Libraries linked by the program are mapped before any constructor
     * runs; ones it dlopen()s later are not listed. */
    char found[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < sizeof client_sonames / sizeof client_sonames[0]; i++) {
        void *handle = dlopen(client_sonames[i], RTLD_LAZY | RTLD_NOLOAD);
        if (!handle)
            continue;
        dlclose(handle);
        int n = snprintf(found + used, sizeof found - used, "%s%s", used ? "," : "",
                         client_sonames[i]);
        if (n < 0 || (size_t)n >= sizeof found - used)
            break;
        used += (size_t)n;
    }
    qg_log_write_startup(s, found);
}
