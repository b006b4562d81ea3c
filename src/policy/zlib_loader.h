/* zlib for the wire front's reading of MySQL's compressed protocol
 * (src/wire/wire_compress.h), loaded the first time a connection needs
 * it: the shim links no zlib, so a program that never meets compression
 * never loads it. */
#ifndef QG_ZLIB_LOADER_H
#define QG_ZLIB_LOADER_H

#include "wire_compress.h"

/* libz.so.1's inflate functions, loaded once (thread-safe); NULL when the
 * library or one of them cannot be found, which is then not tried again. */
const qg_wire_zlib *qg_zlib_load(void);

#endif
