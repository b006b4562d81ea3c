/* Lexer knobs for tests and the benchmark only. */
#ifndef QG_LEXER_INTERNAL_H
#define QG_LEXER_INTERNAL_H

#include <stdbool.h>

/* Use the byte-at-a-time reference scan instead of the vector one
 * (process-wide; tests compare both on the same inputs). */
void qg_lexer_force_scalar(bool on);

#endif
