/* dlsym front: a program that looks a client-library function up in the
 * library's own handle gets the shim's function, as the dynamic linker would
 * have given it for a call linked against the library.
 *
 * psycopg 3's pure-Python binding loads libpq with ctypes (RTLD_LOCAL) and
 * resolves PQsendQuery with dlsym(libpq handle, …): without this front its
 * queries reach libpq around the libpq front.  Here dlsym on the handle of a
 * library in client_libraries.h answers with the shim's own definition of
 * the name when the shim has one (the interposed PQ… and mysql_… entries),
 * else with the library's.
 *
 * Every other handle — RTLD_DEFAULT, RTLD_NEXT, any other library — goes to
 * the C library's dlsym untouched, and so that dlsym(RTLD_NEXT) still finds
 * the object after the caller's (not after the shim), dlsym is a jump, not a
 * call: a few instructions of assembly ask qg_dlsym_route where to go and
 * jump there with the caller's return address in place.  The C library's
 * dlsym is found with dlvsym (which the shim does not interpose), never with
 * dlsym itself, so runtimes that call dlsym before any constructor has run
 * (ThreadSanitizer's start-up) are answered without recursion.
 * x86-64 only; elsewhere dlsym is not interposed. */
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "client_libraries.h"
#include "real.h"

#if defined(__x86_64__)

typedef void *(*dlsym_fn)(void *, const char *);

/* The shim's own load address, to tell its definitions from others. */
static void *shim_base(void)
{
    static void *base;
    void *b = __atomic_load_n(&base, __ATOMIC_ACQUIRE);
    if (!b) {
        Dl_info info;
        if (dladdr((void *)shim_base, &info) && info.dli_fbase)
            b = info.dli_fbase;
        __atomic_store_n(&base, b, __ATOMIC_RELEASE);
    }
    return b;
}

/* dlsym on a client library's handle: the shim's definition of `name`
 * (the first in the global scope, the preload's) when the shim has one. */
static void *dlsym_client(void *handle, const char *name)
{
    dlsym_fn real = (dlsym_fn)qg_real_dlsym();
    void *fn = real ? real(handle, name) : NULL;
    if (!fn)
        return NULL;
    void *first = real(RTLD_DEFAULT, name);
    Dl_info info;
    if (first && first != fn && dladdr(first, &info) && info.dli_fbase == shim_base())
        return first;
    return fn;
}

static void *dlsym_missing(void *handle, const char *name)
{
    (void)handle;
    (void)name;
    return NULL;
}

static int is_client_handle(void *handle)
{
    struct link_map *map = NULL;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map || !map->l_name)
        return 0;
    return qg_is_client_library(map->l_name, strlen(map->l_name));
}

/* Where dlsym(handle, name) goes: called by the trampoline below.  The
 * special handles (all a sanitizer runtime uses while it starts) are
 * answered before anything instrumented runs. */
__attribute__((visibility("hidden"), used)) QG_BEFORE_SANITIZERS void *
qg_dlsym_route(void *handle, const char *name)
{
    (void)name;
    void *real = qg_real_dlsym();
    if (!real)
        return (void *)dlsym_missing;
    if (handle == RTLD_DEFAULT || handle == RTLD_NEXT)
        return real;
    return is_client_handle(handle) ? (void *)dlsym_client : real;
}

/* dlsym: keeps the two arguments, asks qg_dlsym_route (stack aligned to 16
 * bytes for the call), restores them and jumps, so that the function jumped
 * to sees the caller's return address. */
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        "dlsym:\n"
        "    .cfi_startproc\n"
        "    endbr64\n"
        "    push %rdi\n"
        "    .cfi_adjust_cfa_offset 8\n"
        "    push %rsi\n"
        "    .cfi_adjust_cfa_offset 8\n"
        "    sub $8, %rsp\n"
        "    .cfi_adjust_cfa_offset 8\n"
        "    call qg_dlsym_route\n"
        "    add $8, %rsp\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    pop %rsi\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    pop %rdi\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    jmp *%rax\n"
        "    .cfi_endproc\n"
        ".size dlsym, .-dlsym\n");

#endif
