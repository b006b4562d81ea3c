/* Out-of-memory injector for the shim: preloaded before libquoteguard.so
 * (LD_PRELOAD="libfailalloc.so libquoteguard.so"), it makes every malloc,
 * calloc and realloc called from code of libquoteguard.so return NULL, and
 * serves every other caller (the program, libpq, libmariadb, libc) as usual.
 * So the shim runs out of memory while the client library does not: what
 * tests/t/74-failsafe.t needs to see the shim's own failure paths.
 *
 * The shim's code range is found once, at the first allocation after this
 * object's constructor ran, from the loaded objects' program headers. */
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);

static uintptr_t shim_start, shim_end;
static int ready;
static __thread int busy;

static int find_shim(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    if (!info->dlpi_name || !strstr(info->dlpi_name, "libquoteguard"))
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            shim_start = info->dlpi_addr + ph->p_vaddr;
            shim_end = shim_start + ph->p_memsz;
            return 1;
        }
    }
    return 0;
}

__attribute__((constructor)) static void locate_shim(void)
{
    busy = 1;
    dl_iterate_phdr(find_shim, NULL);
    busy = 0;
    __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
}

static int from_shim(const void *caller)
{
    if (busy || !__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
        return 0;
    uintptr_t at = (uintptr_t)caller;
    return at >= shim_start && at < shim_end;
}

__attribute__((visibility("default"))) void *malloc(size_t size)
{
    return from_shim(__builtin_return_address(0)) ? NULL : __libc_malloc(size);
}

__attribute__((visibility("default"))) void *calloc(size_t n, size_t size)
{
    return from_shim(__builtin_return_address(0)) ? NULL : __libc_calloc(n, size);
}

__attribute__((visibility("default"))) void *realloc(void *p, size_t size)
{
    return from_shim(__builtin_return_address(0)) ? NULL : __libc_realloc(p, size);
}
