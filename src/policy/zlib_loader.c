/* zlib, loaded with the C library's dlopen on first use (zlib_loader.h). */
#include "zlib_loader.h"

#include <dlfcn.h>
#include <stdlib.h>

#include "real.h"

#define ZLIB_SONAME "libz.so.1"

static const qg_wire_zlib *loaded;
static bool missing;

typedef void *(*dlsym_fn)(void *, const char *);

/* The table of zlib's functions in `handle`, or NULL. */
static qg_wire_zlib *resolve(void *handle)
{
    dlsym_fn sym = (dlsym_fn)qg_real_dlsym();
    qg_wire_zlib *t = sym ? calloc(1, sizeof *t) : NULL;
    if (!t)
        return NULL;
    t->inflate_init = (__typeof__(t->inflate_init))sym(handle, "inflateInit_");
    t->inflate = (__typeof__(t->inflate))sym(handle, "inflate");
    t->inflate_reset = (__typeof__(t->inflate_reset))sym(handle, "inflateReset");
    t->inflate_end = (__typeof__(t->inflate_end))sym(handle, "inflateEnd");
    if (t->inflate_init && t->inflate && t->inflate_reset && t->inflate_end)
        return t;
    free(t);
    return NULL;
}

const qg_wire_zlib *qg_zlib_load(void)
{
    const qg_wire_zlib *z = __atomic_load_n(&loaded, __ATOMIC_ACQUIRE);
    if (z || __atomic_load_n(&missing, __ATOMIC_ACQUIRE))
        return z;
    qg_dlopen_fn open_library = qg_real_dlopen();
    void *handle = open_library ? open_library(ZLIB_SONAME, RTLD_LAZY | RTLD_LOCAL) : NULL;
    qg_wire_zlib *t = handle ? resolve(handle) : NULL;
    qg_dlclose_fn close_library = qg_real_dlclose();
    if (!t) {
        if (handle && close_library)
            close_library(handle);
        __atomic_store_n(&missing, true, __ATOMIC_RELEASE);
        return NULL;
    }
    /* Threads that raced here each loaded it: the first table stays, the
     * others give their reference back.  The one kept pins the library. */
    const qg_wire_zlib *first = NULL;
    if (!__atomic_compare_exchange_n(&loaded, &first, t, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        free(t);
        if (close_library)
            close_library(handle);
        return first;
    }
    return t;
}
