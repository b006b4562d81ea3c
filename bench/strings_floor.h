/* The strings floor: the least a scan does to know where strings end where
 * backslashes escape (MySQL by default), for bench_checker.  Per 64-byte
 * block: a mask of quotes and one of backslashes, the bytes escaped (after
 * an odd run of backslashes, by the carries of the runs' odd and even
 * starts), and each byte's in-string state by one carry-less multiply.  No
 * stops, no encodings: the checker does all this and more, so this scan's
 * time bounds the checker's from below.  For ASCII text (a 0x5c trail byte
 * would be read as a backslash). */
#ifndef QG_BENCH_STRINGS_FLOOR_H
#define QG_BENCH_STRINGS_FLOOR_H

#include <stddef.h>
#include <stdint.h>

/* What the scans return where they give up: a backslash in code. */
#define STRINGS_FLOOR_GAVE_UP UINT64_MAX

/* The strings closed in s[0, len), or STRINGS_FLOOR_GAVE_UP. */
typedef uint64_t (*strings_floor_fn)(const unsigned char *s, size_t len);

/* The floor in the vector build `build` (QG_VECTORS_*); NULL for SSE2 and
 * off x86-64. */
strings_floor_fn strings_floor_for(int build);

/* The same, a byte at a time: what the vector builds must agree with. */
uint64_t strings_floor_bytewise(const unsigned char *s, size_t len);

#endif
