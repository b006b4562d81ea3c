/* The settings of this process (src/policy/config.h: what they hold). */
#ifndef QG_SETTINGS_H
#define QG_SETTINGS_H

#include "config.h"
#include "hot.h"

/* The process-wide settings, loaded once (thread-safe) on first use.
 * Files: $QUOTEGUARD_CONFIG, else /etc/quoteguard.conf when it exists; then
 * the QUOTEGUARD_* variables (read with secure_getenv, so a setuid program
 * ignores them).  An empty variable counts as unset; a list set in the
 * environment replaces the file's list.
 * Every problem (bad value, unknown key, unreadable file) is logged once at
 * level "error" and the mode becomes enforce, whatever was asked for.
 * Once loaded they are read in line, without a call: every query reads them. */
static inline const qg_settings *qg_settings_get(void);

/* Loads them (once) and returns them. */
const qg_settings *qg_settings_load(void);
/* The loaded settings, NULL until loaded (settings.c). */
extern const qg_settings *qg_settings_loaded QG_LOCAL;

static inline const qg_settings *qg_settings_get(void)
{
    const qg_settings *s = __atomic_load_n(&qg_settings_loaded, __ATOMIC_ACQUIRE);
    return s ? s : qg_settings_load();
}

#endif
