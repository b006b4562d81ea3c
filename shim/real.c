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

QG_HOT void *qg_real_resolve(qg_real_slot *slot, const char *name, const char *const *sonames)
{
    unsigned now = __atomic_load_n(&generation, __ATOMIC_ACQUIRE);
    if (__atomic_load_n(&slot->generation, __ATOMIC_ACQUIRE) == now) {
        void *cached = __atomic_load_n(&slot->fn, __ATOMIC_RELAXED);
        if (cached)
            return cached;
    }
    void *fn = dlsym(RTLD_NEXT, name);
    for (size_t i = 0; !fn && sonames && sonames[i]; i++) {
        void *handle = dlopen(sonames[i], RTLD_LAZY | RTLD_NOLOAD);
        if (!handle)
            continue;
        /* The reference RTLD_NOLOAD took is kept on purpose: it pins the
         * library, so the pointer cached below can never dangle. */
        fn = dlsym(handle, name);
    }
    if (fn) {
        __atomic_store_n(&slot->fn, fn, __ATOMIC_RELAXED);
        __atomic_store_n(&slot->generation, now, __ATOMIC_RELEASE);
    }
    return fn;
}
