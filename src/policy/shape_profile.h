/* The program's shapes profile: a text file, one shape a line,
 *
 *   fingerprint<TAB>dialect<TAB>program<TAB>first seen<TAB>site<TAB>sample
 *
 * e.g. "3f2a…(16 hex)\tpostgres\tlegacy\t2026-12-03T07:06:39.123Z\t
 * legacy!main+0x4c\tselect * from t where id = ?".  Lines starting with '#'
 * and blank lines are ignored; a line counts for the programs named in its
 * third field ("*": every program).  The file is read once, at the first
 * lookup, into an in-memory set; lookups take no lock and allocate nothing.
 * In learn mode a new shape is added to the set and appended to the file in
 * one O_APPEND write, so concurrent threads and processes never interleave
 * lines and each process writes a shape at most once. */
#ifndef QG_SHAPE_PROFILE_H
#define QG_SHAPE_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

/* True when the fingerprint is in the profile named by s->shapes_file (with
 * %p and %% expanded), loading it at the first call. */
bool qg_shape_profile_contains(const qg_settings *s, uint64_t fingerprint);

/* Learn mode: adds the shape and appends its line, unless this process
 * already has it.  `sample` is the normalized text (shape.h), `caller` the
 * return address of the intercepted call. */
void qg_shape_profile_learn(const qg_settings *s, uint64_t fingerprint, qg_dialect dialect,
                            const char *sample, const void *caller);

/* The profile's path as opened: s->shapes_file with %p and %% expanded. */
void qg_shape_profile_path(const qg_settings *s, char *out, size_t cap);

/* Tests: forget the loaded profile; the next call loads it again.  Not safe
 * while other threads look shapes up. */
void qg_shape_profile_forget(void);

#endif
