/* Real symbols are looked up lazily so that a client library dlopen()ed after
 * start-up is found, and the shim never links libpq or libmysqlclient. */
#include "real.h"

#include <dlfcn.h>
#include <stddef.h>

#include "hot.h"

/* Starts at 1 so that a zeroed slot is always stale. */
static unsigned generation = 1;

void qg_real_invalidate(void)
{
    __atomic_add_fetch(&generation, 1, __ATOMIC_ACQ_REL);
}

void *qg_real_next(void **slot, const char *name)
{
    void *fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!fn) {
        fn = dlsym(RTLD_NEXT, name);
        __atomic_store_n(slot, fn, __ATOMIC_RELEASE);
    }
    return fn;
}

qg_dlopen_fn qg_real_dlopen(void)
{
    static void *slot;
    return (qg_dlopen_fn)qg_real_next(&slot, "dlopen");
}

qg_dlclose_fn qg_real_dlclose(void)
{
    static void *slot;
    return (qg_dlclose_fn)qg_real_next(&slot, "dlclose");
}

QG_HOT void *qg_real_resolve(qg_real_slot *slot, const char *name, const char *const *sonames)
{
    unsigned now = __atomic_load_n(&generation, __ATOMIC_ACQUIRE);
    if (__atomic_load_n(&slot->generation, __ATOMIC_ACQUIRE) == now) {
        void *cached = __atomic_load_n(&slot->fn, __ATOMIC_RELAXED);
        if (cached)
            return cached;
    }
    void *fn = dlsym(RTLD_NEXT, name);
    qg_dlopen_fn real_dlopen = fn ? NULL : qg_real_dlopen();
    for (size_t i = 0; real_dlopen && sonames && sonames[i]; i++) {
        void *handle = real_dlopen(sonames[i], RTLD_LAZY | RTLD_NOLOAD);
        if (!handle)
            continue;
        /* The reference RTLD_NOLOAD took is kept on purpose: it pins the
         * library, so the pointer cached below can never dangle. */
        fn = dlsym(handle, name);
        if (fn)
            break;
    }
    if (fn) {
        __atomic_store_n(&slot->fn, fn, __ATOMIC_RELAXED);
        __atomic_store_n(&slot->generation, now, __ATOMIC_RELEASE);
    }
    return fn;
}
