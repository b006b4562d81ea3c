/* dlopen front: keeps RTLD_DEEPBIND from routing a client library's callers
 * around the shim, and drops cached real symbols when a library goes away.
 *
 * PHP (8.x) loads its extensions with RTLD_DEEPBIND.  Deep binding makes the
 * loaded object look symbols up in its own dependencies before the global
 * scope, so pgsql.so would call libpq's PQexec directly and never reach the
 * preloaded shim.  When the object to be loaded names a client library in its
 * DT_NEEDED entries, the flag is cleared; everything else is loaded as asked.
 *
 * Caveat: glibc resolves dlopen("name") (no '/') with the RUNPATH of the
 * object that called dlopen, found from the return address.  Once dlopen is
 * interposed that caller would be the shim, whose RUNPATH is empty; so the
 * real dlopen is reached by a tail call (a jump at -O2, which leaves the
 * program's return address in place).  An unoptimised build makes it an
 * ordinary call, and then a program relying on its own RUNPATH (or $ORIGIN)
 * to dlopen a bare name no longer finds the library.
 */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client_libraries.h"
#include "config.h"
#include "log.h"
#include "real.h"
#include "settings.h"

#define QG_EXPORT __attribute__((visibility("default")))

/* ------------------------------------------------------------- ELF reading */

/* Where the fields we read sit in each ELF class; p_type and d_tag are at 0,
 * d_val follows d_tag, and a dynamic entry is two words. */
typedef struct elf_class {
    size_t word; /* bytes in an address, offset, d_tag, d_val */
    size_t ehdr_size, e_phoff, e_phentsize, e_phnum;
    size_t p_offset, p_vaddr, p_filesz;
} elf_class;

static const elf_class elf32 = {
    4,
    sizeof(Elf32_Ehdr), offsetof(Elf32_Ehdr, e_phoff), offsetof(Elf32_Ehdr, e_phentsize),
    offsetof(Elf32_Ehdr, e_phnum),
    offsetof(Elf32_Phdr, p_offset), offsetof(Elf32_Phdr, p_vaddr), offsetof(Elf32_Phdr, p_filesz),
};

static const elf_class elf64 = {
    8,
    sizeof(Elf64_Ehdr), offsetof(Elf64_Ehdr, e_phoff), offsetof(Elf64_Ehdr, e_phentsize),
    offsetof(Elf64_Ehdr, e_phnum),
    offsetof(Elf64_Phdr, p_offset), offsetof(Elf64_Phdr, p_vaddr), offsetof(Elf64_Phdr, p_filesz),
};

/* A little-endian unsigned field of `width` bytes. */
static uint64_t read_le(const unsigned char *p, size_t width)
{
    uint64_t value = 0;
    for (size_t i = width; i-- > 0;)
        value = value << 8 | p[i];
    return value;
}

/* True when [offset, offset + len) lies inside a file of `size` bytes. */
static bool in_file(uint64_t offset, uint64_t len, size_t size)
{
    return offset <= size && len <= size - offset;
}

typedef struct elf_file {
    const unsigned char *data;
    size_t size;
    const elf_class *cls;
    uint64_t phoff, phentsize, phnum;
} elf_file;

/* The program header at index i (bounds were checked by elf_open). */
static const unsigned char *program_header(const elf_file *f, uint64_t i)
{
    return f->data + f->phoff + i * f->phentsize;
}

/* Translates a virtual address into a file offset through the PT_LOAD
 * segments; `*room` gets the bytes the segment holds from there on. */
static bool vaddr_to_offset(const elf_file *f, uint64_t vaddr, uint64_t *offset, uint64_t *room)
{
    const elf_class *c = f->cls;
    for (uint64_t i = 0; i < f->phnum; i++) {
        const unsigned char *ph = program_header(f, i);
        if (read_le(ph, 4) != PT_LOAD)
            continue;
        uint64_t start = read_le(ph + c->p_vaddr, c->word);
        uint64_t filesz = read_le(ph + c->p_filesz, c->word);
        if (vaddr < start || vaddr - start >= filesz)
            continue;
        uint64_t seg_offset = read_le(ph + c->p_offset, c->word);
        if (!in_file(seg_offset, filesz, f->size))
            return false;
        *offset = seg_offset + (vaddr - start);
        *room = filesz - (vaddr - start);
        return true;
    }
    return false;
}

static bool elf_open(elf_file *f, const unsigned char *data, size_t size)
{
    if (size < EI_NIDENT || memcmp(data, ELFMAG, SELFMAG) != 0 ||
        data[EI_DATA] != ELFDATA2LSB)
        return false;
    f->data = data;
    f->size = size;
    f->cls = data[EI_CLASS] == ELFCLASS64 ? &elf64 : data[EI_CLASS] == ELFCLASS32 ? &elf32 : NULL;
    if (!f->cls || size < f->cls->ehdr_size)
        return false;
    const elf_class *c = f->cls;
    f->phoff = read_le(data + c->e_phoff, c->word);
    f->phentsize = read_le(data + c->e_phentsize, 2);
    f->phnum = read_le(data + c->e_phnum, 2);
    /* phentsize and phnum are 16-bit, so the product cannot overflow. */
    return f->phentsize >= c->p_filesz + c->word && in_file(f->phoff, f->phentsize * f->phnum, size);
}

/* True when the object's dynamic section names a client library in DT_NEEDED. */
static bool elf_needs_client_library(const unsigned char *data, size_t size)
{
    elf_file f;
    if (!elf_open(&f, data, size))
        return false;
    const elf_class *c = f.cls;
    uint64_t dyn_offset = 0, dyn_size = 0;
    for (uint64_t i = 0; i < f.phnum; i++) {
        const unsigned char *ph = program_header(&f, i);
        if (read_le(ph, 4) == PT_DYNAMIC) {
            dyn_offset = read_le(ph + c->p_offset, c->word);
            dyn_size = read_le(ph + c->p_filesz, c->word);
            break;
        }
    }
    if (dyn_size == 0 || !in_file(dyn_offset, dyn_size, size))
        return false;

    size_t entry = 2 * c->word, count = dyn_size / entry;
    const unsigned char *dyn = data + dyn_offset;
    uint64_t strtab_vaddr = 0, strsz = 0;
    bool have_strtab = false;
    for (size_t i = 0; i < count; i++) {
        uint64_t tag = read_le(dyn + i * entry, c->word);
        uint64_t val = read_le(dyn + i * entry + c->word, c->word);
        if (tag == DT_NULL)
            break;
        if (tag == DT_STRTAB) {
            strtab_vaddr = val;
            have_strtab = true;
        } else if (tag == DT_STRSZ) {
            strsz = val;
        }
    }
    uint64_t strtab_offset, room;
    if (!have_strtab || !vaddr_to_offset(&f, strtab_vaddr, &strtab_offset, &room))
        return false;
    if (strsz > room)
        strsz = room;
    const char *strtab = (const char *)data + strtab_offset;

    for (size_t i = 0; i < count; i++) {
        uint64_t tag = read_le(dyn + i * entry, c->word);
        uint64_t val = read_le(dyn + i * entry + c->word, c->word);
        if (tag == DT_NULL)
            break;
        if (tag != DT_NEEDED || val >= strsz)
            continue;
        const char *name = strtab + val;
        const char *end = memchr(name, '\0', strsz - val);
        if (end && qg_is_client_library(name, (size_t)(end - name)))
            return true;
    }
    return false;
}

static bool file_needs_client_library(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    bool needs = false;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        size_t size = (size_t)st.st_size;
        void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map != MAP_FAILED) {
            needs = elf_needs_client_library(map, size);
            munmap(map, size);
        }
    }
    close(fd);
    return needs;
}

/* -------------------------------------------------------------- entries */

QG_EXPORT void *dlopen(const char *file, int flags)
{
    /* A bare name is searched for by the loader; we cannot know which file
     * it will pick, so only paths are inspected.  Settings are read last:
     * dlopen may run before the shim's own initialisation has finished. */
    if ((flags & RTLD_DEEPBIND) && file && strchr(file, '/')) {
        const qg_settings *s = qg_settings_get();
        if (s->mode != QG_MODE_OFF && s->active && file_needs_client_library(file)) {
            flags &= ~RTLD_DEEPBIND;
            qg_log_write_event(s, "debug", "dlopen_deepbind_cleared", file);
        }
    }
    qg_dlopen_fn real = qg_real_dlopen();
    if (!real)
        return NULL;
    return real(file, flags); /* a tail call: see the caveat at the top */
}

QG_EXPORT int dlclose(void *handle)
{
    qg_dlclose_fn real = qg_real_dlclose();
    if (!real)
        return -1;
    int rc = real(handle);
    if (rc == 0)
        qg_real_invalidate();
    return rc;
}
