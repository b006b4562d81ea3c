/* Lazy, thread-safe resolution of the real client-library functions. */
#ifndef QG_REAL_H
#define QG_REAL_H

#include <stddef.h>
#include <sys/types.h>

#include "hot.h"

typedef struct qg_real_slot {
    void *fn;
    unsigned generation; /* qg_real_generation() when fn was resolved */
} qg_real_slot;

/* Resolves `name` into *slot: first dlsym(RTLD_NEXT) (the next object in the
 * global scope after the shim), then — for a client library loaded with
 * dlopen(RTLD_LOCAL), which RTLD_NEXT cannot see — each already-loaded
 * library in `sonames` (NULL-terminated) through dlopen(RTLD_NOLOAD).
 * Returns NULL when the symbol is nowhere; never loads a library itself. */
void *qg_real_resolve(qg_real_slot *slot, const char *name, const char *const *sonames);

/* Called when the program dlclose()s a library: every slot resolves again. */
void qg_real_invalidate(void);

/* Counts the invalidations, from 1: what the fronts derive from a client
 * library's answers (pg_encoding.h) is kept per generation. */
extern unsigned qg_real_generation QG_LOCAL;

/* Code that sanitizer runtimes reach through dlsym while they start (their
 * interceptors look up the real functions), before their own state exists:
 * it must not be instrumented. */
#define QG_BEFORE_SANITIZERS __attribute__((no_sanitize("thread", "address")))

/* The C library's dlsym, found past the shim's own (front_dlsym.c) without
 * calling dlsym; what the shim calls for itself.  NULL when missing. */
QG_BEFORE_SANITIZERS void *qg_real_dlsym(void);

/* The next definition of `name` after the shim (dlsym(RTLD_NEXT)),
 * resolved once into *slot: for the C library's entries, which are never
 * unloaded. */
void *qg_real_next(void **slot, const char *name);

/* The C library's dlopen and dlclose, found past the shim's own
 * (front_dlopen.c): what the shim calls for itself.  NULL when missing. */
typedef void *(*qg_dlopen_fn)(const char *, int);
typedef int (*qg_dlclose_fn)(void *);
qg_dlopen_fn qg_real_dlopen(void);
qg_dlclose_fn qg_real_dlclose(void);

/* The slot's function when it is of this generation, else NULL. */
static inline void *qg_real_cached(qg_real_slot *slot)
{
    unsigned now = __atomic_load_n(&qg_real_generation, __ATOMIC_ACQUIRE);
    if (__atomic_load_n(&slot->generation, __ATOMIC_ACQUIRE) != now)
        return NULL;
    return __atomic_load_n(&slot->fn, __ATOMIC_RELAXED);
}

/* The C library's own calls, for the shim's own descriptors (settings
 * file, log, counters, shapes profile): past the wire front's interposers
 * (front_wire_io.c), so that the glue never calls up into a front.  -1 with
 * ENOSYS if the C library lacks one. */
ssize_t qg_libc_read(int fd, void *buf, size_t n);
ssize_t qg_libc_write(int fd, const void *buf, size_t n);
ssize_t qg_libc_send(int fd, const void *buf, size_t n, int flags);
int qg_libc_socket(int domain, int type, int protocol);
int qg_libc_close(int fd);

/* Declares a typed accessor `real_NAME()` that resolves on first call, and
 * `cached_NAME()`: the function if resolved in this generation, else NULL,
 * for a path that must make no call of its own.  A resolved slot is read
 * in line, without a call. */
#define QG_REAL_FN(ret, name, args, sonames)                                      \
    typedef ret(*name##_fn) args;                                                 \
    static qg_real_slot name##_slot;                                              \
    static inline name##_fn cached_##name(void)                                   \
    {                                                                             \
        return (name##_fn)qg_real_cached(&name##_slot);                           \
    }                                                                             \
    static inline name##_fn real_##name(void)                                     \
    {                                                                             \
        name##_fn fn = cached_##name();                                           \
        return fn ? fn : (name##_fn)qg_real_resolve(&name##_slot, #name, sonames); \
    }

#endif
