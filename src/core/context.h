/* The checker's context with its defaults (qg_context_init), in line for
 * the guard's check of every query: a call would save and restore the
 * caller's registers around a few stores. */
#ifndef QG_CONTEXT_H
#define QG_CONTEXT_H

#include "quoteguard.h"

/* Every reason blocks, except QG_REASON_ILLFORMED (logged). */
static inline void qg_context_fill(qg_context *ctx, qg_dialect dialect, const qg_encoding *enc,
                                   unsigned flags)
{
    *ctx = (qg_context){.dialect = dialect, .encoding = enc, .flags = flags};
    for (int r = 1; r < QG_REASON_COUNT; r++)
        ctx->action[r] = QG_ACTION_BLOCK;
    ctx->action[QG_REASON_ILLFORMED] = QG_ACTION_LOG;
}

#endif
