/* Per-process counters: queries checked and blocked, findings by reason and
 * action.  With counters_dir set, each process that checks a query keeps
 * them in a file of its own, <counters_dir>/<program>.<pid>, mapped shared:
 * counting is an atomic add to memory, never a system call, and the file
 * can be read at any time, also after the process ended
 * (`quoteguard report --counters DIR`, `--prometheus`).
 *
 * File layout (native byte order; QG_COUNTERS_VERSION changes with it):
 *   char     magic[8]          "QGCOUNT1"
 *   uint32_t reasons           rows of the findings table
 *   uint32_t name_size         bytes of each reason name (NUL-padded)
 *   int64_t  pid
 *   char     program[256]      NUL-padded
 *   char     names[reasons][name_size]
 *   uint64_t queries_checked, queries_blocked
 *   uint64_t findings[reasons][3]   blocked, logged, allowed
 * Reason rows: the checker's reasons in qg_reason order ("none": a query in
 * an unknown encoding), then "unknown_shape". */
#ifndef QG_COUNTERS_H
#define QG_COUNTERS_H

#include <stdbool.h>

#include "config.h"
#include "log.h"

/* One query checked (s->counters set); `blocked`: it was not sent. */
void qg_counters_query(const qg_settings *s, bool blocked);
/* One logged finding, by its reason and action. */
void qg_counters_finding(const qg_settings *s, const qg_log_finding *f);

#endif
