/* Lazy, thread-safe resolution of the real client-library functions. */
#ifndef QG_REAL_H
#define QG_REAL_H

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

/* Declares a typed accessor `real_NAME()` that resolves on first call. */
#define QG_REAL_FN(ret, name, args, sonames)                                      \
    typedef ret(*name##_fn) args;                                                 \
    static name##_fn real_##name(void)                                            \
    {                                                                             \
        static qg_real_slot slot;                                                 \
        return (name##_fn)qg_real_resolve(&slot, #name, sonames);                 \
    }

#endif
