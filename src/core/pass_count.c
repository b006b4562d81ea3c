/* The pass counts of a counting build (pass_count.h); nothing elsewhere. */
#include "pass_count.h"

#ifdef QG_COUNT_PASSES
unsigned long qg_pass_counts[QG_PASS_KINDS];
#endif
