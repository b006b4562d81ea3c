/* How often a text is read: the statement reader's statements, the scans
 * of a whole text, the checker's readings and the shapes computed, counted
 * in a build made with -DQG_COUNT_PASSES (`make build/tests/test_passes`)
 * so that a test can hold the fronts to reading each text once.  Elsewhere
 * the counts compile to nothing. */
#ifndef QG_PASS_COUNT_H
#define QG_PASS_COUNT_H

typedef enum qg_pass_kind {
    QG_PASS_STATEMENT_READ, /* a statement read for its effect on the state */
    QG_PASS_TEXT_SCAN,      /* a text searched byte by byte outside the reader and the checker */
    QG_PASS_CHECK,          /* a text read by the checker */
    QG_PASS_CHECKED_BYTES,  /* the bytes of those texts */
    QG_PASS_SHAPE,          /* a text's shape computed */
    QG_PASS_KINDS
} qg_pass_kind;

#ifdef QG_COUNT_PASSES
extern unsigned long qg_pass_counts[QG_PASS_KINDS];
#define QG_COUNT_PASSES_OF(kind, n) (qg_pass_counts[kind] += (n))
#else
#define QG_COUNT_PASSES_OF(kind, n) ((void)0)
#endif
#define QG_COUNT_PASS(kind) QG_COUNT_PASSES_OF(kind, 1)

#endif
