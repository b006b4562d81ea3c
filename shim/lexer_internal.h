/* Lexer knobs for tests and the benchmark only. */
#ifndef QG_LEXER_INTERNAL_H
#define QG_LEXER_INTERNAL_H

#include <stdbool.h>

/* The reference implementation instead of the fast one (process-wide;
 * tests and fuzzers compare both on the same inputs): a byte-at-a-time scan
 * instead of the vector one, no block skipping, and the checker's second
 * pass over the whole query whenever S saw an ambiguous byte. */
void qg_force_reference(bool on);
bool qg_reference_forced(void);

#endif
