/* The settings of this process (shim/config.h: what they hold). */
#ifndef QG_SETTINGS_H
#define QG_SETTINGS_H

#include "config.h"

/* The process-wide settings, loaded once (thread-safe) on first use.
 * Files: $QUOTEGUARD_CONFIG, else /etc/quoteguard.conf when it exists; then
 * the QUOTEGUARD_* variables (read with secure_getenv, so a setuid program
 * ignores them).  An empty variable counts as unset; a list set in the
 * environment replaces the file's list.
 * Every problem (bad value, unknown key, unreadable file) is logged once at
 * level "error" and the mode becomes enforce, whatever was asked for. */
const qg_settings *qg_settings_get(void);

#endif
