/* Query shapes: what a query is once its values are taken out.
 *
 * The tokens of the query as the server reads it (the lexer's S reading for
 * strings, quoted identifiers, comments and dollar quotes; words, numbers,
 * operators and punctuation in between), with
 *   - string, dollar-quoted and numeric literals, NULL/TRUE/FALSE, PG $n and
 *     MySQL ? parameters (with a sign right before a number) as one value;
 *   - the elements of an IN (…) list, of a PG ARRAY[…] and the rows of a
 *     VALUES list collapsed when equal to the element before, so lists of
 *     any length have one shape;
 *   - unquoted words case-folded, quoted identifiers kept exact;
 *   - comments, white space and MySQL executable-comment markers left out.
 * Pure logic: one pass, nothing allocated. */
#ifndef QG_SHAPE_H
#define QG_SHAPE_H

#include <stddef.h>
#include <stdint.h>

#include "quoteguard.h"

/* Room for a normalized sample, NUL included; longer ones end in "...". */
#define QG_SHAPE_SAMPLE_MAX 1024

/* The 64-bit fingerprint of the shape of sql[0, len) (never 0; the dialect is
 * part of it).  When sample is not NULL it receives the normalized text —
 * lower-case words, "?" for values, single spaces, bytes outside printable
 * ASCII and '\' as \xNN — cut to cap - 1 bytes (ending in "...") and
 * NUL-terminated. */
uint64_t qg_shape_compute(const qg_context *ctx, const char *sql, size_t len, char *sample,
                          size_t cap);

#endif
