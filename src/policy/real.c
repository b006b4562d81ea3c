/* Real symbols are looked up lazily so that a client library dlopen()ed after
 * start-up is found, and the shim never links libpq or libmysqlclient. */
#include "real.h"

#include <dlfcn.h>
#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>
#include <stddef.h>

#include "hot.h"

/* Starts at 1 so that a zeroed slot is always stale. */
unsigned qg_real_generation = 1;

void qg_real_invalidate(void)
{
    __atomic_add_fetch(&qg_real_generation, 1, __ATOMIC_ACQ_REL);
}

typedef void *(*dlsym_fn)(void *, const char *);

QG_BEFORE_SANITIZERS void *qg_real_dlsym(void)
{
    static void *slot;
    void *fn = __atomic_load_n(&slot, __ATOMIC_ACQUIRE);
    if (!fn) {
        /* With dlvsym: the shim's own dlsym (front_dlsym.c) would answer a
         * lookup of "dlsym" with itself.  The versions glibc gave it. */
        static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17", NULL};
        for (size_t i = 0; !fn && versions[i]; i++)
            fn = dlvsym(RTLD_NEXT, "dlsym", versions[i]);
        __atomic_store_n(&slot, fn, __ATOMIC_RELEASE);
    }
    return fn;
}

void *qg_real_next(void **slot, const char *name)
{
    void *fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    dlsym_fn real_dlsym = fn ? NULL : (dlsym_fn)qg_real_dlsym();
    if (real_dlsym) {
        fn = real_dlsym(RTLD_NEXT, name);
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

/* The C library's `name`, past the shim's own interposer, resolved once. */
#define LIBC(name)                                                                \
    static __typeof__(&(name)) libc_##name(void)                                  \
    {                                                                             \
        static void *slot;                                                        \
        return (__typeof__(&(name)))qg_real_next(&slot, #name);                   \
    }

LIBC(read)
LIBC(write)
LIBC(send)
LIBC(socket)
LIBC(close)

static int missing(void)
{
    errno = ENOSYS;
    return -1;
}

ssize_t qg_libc_read(int fd, void *buf, size_t n)
{
    __typeof__(&read) fn = libc_read();
    return fn ? fn(fd, buf, n) : missing();
}

ssize_t qg_libc_write(int fd, const void *buf, size_t n)
{
    __typeof__(&write) fn = libc_write();
    return fn ? fn(fd, buf, n) : missing();
}

ssize_t qg_libc_send(int fd, const void *buf, size_t n, int flags)
{
    __typeof__(&send) fn = libc_send();
    return fn ? fn(fd, buf, n, flags) : missing();
}

int qg_libc_socket(int domain, int type, int protocol)
{
    __typeof__(&socket) fn = libc_socket();
    return fn ? fn(domain, type, protocol) : missing();
}

int qg_libc_close(int fd)
{
    __typeof__(&close) fn = libc_close();
    return fn ? fn(fd) : missing();
}

QG_HOT void *qg_real_resolve(qg_real_slot *slot, const char *name, const char *const *sonames)
{
    unsigned now = __atomic_load_n(&qg_real_generation, __ATOMIC_ACQUIRE);
    void *cached = qg_real_cached(slot);
    if (cached)
        return cached;
    dlsym_fn real_dlsym = (dlsym_fn)qg_real_dlsym();
    if (!real_dlsym)
        return NULL;
    void *fn = real_dlsym(RTLD_NEXT, name);
    qg_dlopen_fn real_dlopen = fn ? NULL : qg_real_dlopen();
    for (size_t i = 0; real_dlopen && sonames && sonames[i]; i++) {
        void *handle = real_dlopen(sonames[i], RTLD_LAZY | RTLD_NOLOAD);
        if (!handle)
            continue;
        /* The reference RTLD_NOLOAD took is kept on purpose: it pins the
         * library, so the pointer cached below can never dangle. */
        fn = real_dlsym(handle, name);
        if (fn)
            break;
    }
    if (fn) {
        __atomic_store_n(&slot->fn, fn, __ATOMIC_RELAXED);
        __atomic_store_n(&slot->generation, now, __ATOMIC_RELEASE);
    }
    return fn;
}
