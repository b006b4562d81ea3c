/* The shapes profile (see shape_profile.h): an open-addressing set of
 * fingerprints.  Readers take no lock: they load the current table and probe
 * it.  Writers (the load, learn mode) hold profile_lock; a full table is
 * replaced by a copy twice its size and the old one is not freed, since a
 * reader may still be probing it (the tables add up to less than twice the
 * last one).  A reader that misses a shape added meanwhile only takes the
 * slow path, where the lock makes the answer exact.  Replaced tables stay
 * chained to their successor (qg_shape_profile_forget frees them). */
#include "shape_profile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hot.h"
#include "real.h"
#include "log.h"
#include "shape.h"

/* Enough for a few thousand shapes without a single allocation. */
#define INITIAL_SLOTS 8192
#define LINE_MAX_BYTES (16 + 8 + QG_NAME_MAX + 40 + 600 + QG_SHAPE_SAMPLE_MAX + 8)

typedef struct shape_set {
    size_t mask; /* slots - 1; slots is a power of two */
    size_t count;
    uint64_t *slots;          /* 0: empty (fingerprints are never 0) */
    struct shape_set *retired; /* the table this one replaced, kept for readers */
} shape_set;

QG_FAR_BSS static uint64_t initial_slots[INITIAL_SLOTS];
static shape_set initial_set = {.mask = INITIAL_SLOTS - 1, .slots = initial_slots};
static shape_set *current_set = &initial_set;
static bool loaded;
static pthread_mutex_t profile_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static bool write_failure_reported;

/* A fork while another thread learns must not leave the child's lock held. */
static void lock_profile(void)
{
    pthread_mutex_lock(&profile_lock);
}

static void unlock_profile(void)
{
    pthread_mutex_unlock(&profile_lock);
}

static void register_atfork(void)
{
    pthread_atfork(lock_profile, unlock_profile, unlock_profile);
}

static size_t slot_of(uint64_t fingerprint, size_t mask)
{
    /* Fingerprints are already well mixed (shape.c finalizes them). */
    return (size_t)(fingerprint ^ (fingerprint >> 32)) & mask;
}

static bool set_has(const shape_set *set, uint64_t fingerprint)
{
    size_t i = slot_of(fingerprint, set->mask);
    for (;;) {
        uint64_t v = __atomic_load_n(&set->slots[i], __ATOMIC_ACQUIRE);
        if (v == fingerprint)
            return true;
        if (v == 0)
            return false;
        i = (i + 1) & set->mask;
    }
}

/* Under profile_lock.  Stores into a slot readers may be probing. */
static void set_put(shape_set *set, uint64_t fingerprint)
{
    size_t i = slot_of(fingerprint, set->mask);
    while (set->slots[i] != 0) {
        if (set->slots[i] == fingerprint)
            return;
        i = (i + 1) & set->mask;
    }
    __atomic_store_n(&set->slots[i], fingerprint, __ATOMIC_RELEASE);
    set->count++;
}

/* Under profile_lock: adds a fingerprint, growing the table past half full.
 * False when there was no memory for a bigger table. */
static bool profile_add(uint64_t fingerprint)
{
    shape_set *set = current_set;
    if ((set->count + 1) * 2 > set->mask + 1) {
        size_t slots = (set->mask + 1) * 2;
        shape_set *bigger = calloc(1, sizeof *bigger + slots * sizeof(uint64_t));
        if (!bigger)
            return false;
        bigger->mask = slots - 1;
        bigger->slots = (uint64_t *)(bigger + 1);
        bigger->retired = set;
        for (size_t i = 0; i <= set->mask; i++)
            if (set->slots[i])
                set_put(bigger, set->slots[i]);
        __atomic_store_n(&current_set, bigger, __ATOMIC_RELEASE);
        set = bigger;
    }
    set_put(set, fingerprint);
    return true;
}

void qg_shape_profile_path(const qg_settings *s, char *out, size_t cap)
{
    size_t o = 0;
    for (const char *p = s->shapes_file; *p && o + 1 < cap; p++) {
        const char *insert = NULL;
        if (p[0] == '%' && p[1] == 'p')
            insert = s->program;
        else if (p[0] == '%' && p[1] == '%')
            insert = "%";
        if (!insert) {
            out[o++] = *p;
            continue;
        }
        p++;
        for (; *insert && o + 1 < cap; insert++)
            out[o++] = *insert;
    }
    out[o] = '\0';
}

static int hex_digit(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* One profile line (without its newline): true when it is blank, a comment
 * or well formed; a shape for this program is added. */
static bool load_line(const qg_settings *s, const char *line, size_t len)
{
    while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' '))
        len--;
    if (len == 0 || line[0] == '#')
        return true;
    uint64_t fingerprint = 0;
    size_t i = 0;
    for (; i < len && i < 16; i++) {
        int d = hex_digit((unsigned char)line[i]);
        if (d < 0)
            return false;
        fingerprint = fingerprint << 4 | (uint64_t)d;
    }
    if (i != 16 || fingerprint == 0 || (len > 16 && line[16] != '\t'))
        return false;
    /* Third field: the program; a bare fingerprint counts for every one. */
    const char *program = NULL;
    size_t program_len = 0;
    const char *dialect_end = len > 17 ? memchr(line + 17, '\t', len - 17) : NULL;
    if (dialect_end) {
        program = dialect_end + 1;
        const char *program_end = memchr(program, '\t', (size_t)(line + len - program));
        program_len = program_end ? (size_t)(program_end - program) : (size_t)(line + len - program);
    } else if (len > 16) {
        return false;
    }
    bool ours = !program || (program_len == 1 && program[0] == '*') ||
                (program_len == strlen(s->program) && memcmp(program, s->program, program_len) == 0);
    if (ours)
        profile_add(fingerprint);
    return true;
}

/* How far the profile file has been read: whole lines up to `upto` of the
 * file dev/ino.  Learn mode reads what other processes appended before it
 * appends, so that a shape is written once whoever learns it. */
static struct {
    dev_t dev;
    ino_t ino;
    off_t upto;
    size_t lines;
    bool ends_in_newline;
    bool malformed_reported;
} file_read = {.ends_in_newline = true};

/* Under profile_lock: adds the lines of fd past file_read.upto to the set
 * (from the start when fd is another file or a shorter one).  A last line
 * without its newline counts too.  Malformed lines are reported once. */
static void read_new_lines(const qg_settings *s, int fd, const char *path)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return;
    if (st.st_dev != file_read.dev || st.st_ino != file_read.ino || st.st_size < file_read.upto) {
        file_read.dev = st.st_dev;
        file_read.ino = st.st_ino;
        file_read.upto = 0;
        file_read.lines = 0;
        file_read.ends_in_newline = true;
    }
    char buf[16384];
    size_t bad = 0, first_bad = 0;
    bool skipping = false; /* inside a line longer than buf */
    for (;;) {
        ssize_t n = pread(fd, buf, sizeof buf, file_read.upto);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        size_t used = 0;
        bool at_end = (size_t)n < sizeof buf;
        while (used < (size_t)n) {
            const char *nl = memchr(buf + used, '\n', (size_t)n - used);
            if (!nl && !at_end && !skipping && used > 0)
                break; /* read the rest of this line again with the next chunk */
            size_t len = nl ? (size_t)(nl - (buf + used)) : (size_t)n - used;
            if (skipping) {
                skipping = !nl;
            } else if (!nl && !at_end) {
                skipping = true; /* longer than buf: malformed */
                file_read.lines++;
                if (bad++ == 0)
                    first_bad = file_read.lines;
            } else {
                file_read.lines++;
                if (!load_line(s, buf + used, len) && bad++ == 0)
                    first_bad = file_read.lines;
            }
            used += len + (nl ? 1 : 0);
            file_read.ends_in_newline = nl != NULL;
        }
        file_read.upto += (off_t)used;
    }
    if (bad && !file_read.malformed_reported) {
        file_read.malformed_reported = true;
        char detail[QG_PATH_MAX + 160];
        snprintf(detail, sizeof detail,
                 "shapes profile %s: %zu malformed lines skipped (the first is line %zu)", path,
                 bad, first_bad);
        qg_log_write_event(s, "error", "shapes_profile_malformed", detail);
    }
}

/* Under profile_lock: reads the profile file into the set. */
static void load(const qg_settings *s)
{
    char path[QG_PATH_MAX];
    char detail[QG_PATH_MAX + QG_NAME_MAX + 160];
    qg_shape_profile_path(s, path, sizeof path);
    char why[QG_PATH_MAX + 64];
    int fd = qg_log_open_file(path, O_RDONLY, 0, why, sizeof why);
    if (fd < 0) {
        if (errno != ENOENT || s->shapes == QG_SHAPES_ENFORCE) {
            snprintf(detail, sizeof detail, "shapes profile cannot be read: %s%s", why,
                     s->shapes == QG_SHAPES_ENFORCE ? "; every query has an unknown shape" : "");
            qg_log_write_event(s, "error", "shapes_profile_unreadable", detail);
        }
        return;
    }
    while (flock(fd, LOCK_SH) != 0 && errno == EINTR)
        ;
    read_new_lines(s, fd, path);
    qg_libc_close(fd); /* releases the lock */
    if (s->verbosity >= 2) {
        snprintf(detail, sizeof detail, "shapes profile %s: %zu shapes for %s", path,
                 current_set->count, s->program);
        qg_log_write_event(s, "debug", "shapes_profile_loaded", detail);
    }
}

static void ensure_loaded(const qg_settings *s)
{
    if (__atomic_load_n(&loaded, __ATOMIC_ACQUIRE))
        return;
    pthread_once(&atfork_once, register_atfork);
    pthread_mutex_lock(&profile_lock);
    if (!loaded) {
        load(s);
        __atomic_store_n(&loaded, true, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&profile_lock);
}

bool qg_shape_profile_contains(const qg_settings *s, uint64_t fingerprint)
{
    ensure_loaded(s);
    return set_has(__atomic_load_n(&current_set, __ATOMIC_ACQUIRE), fingerprint);
}

/* Copies text into a profile field: tabs and line breaks would split it. */
static size_t put_field(char *out, size_t cap, const char *text)
{
    size_t n = 0;
    for (; text[n] && n + 1 < cap; n++) {
        char c = text[n];
        if (c == '\t' || c == '\n' || c == '\r')
            c = ' ';
        out[n] = c;
    }
    return n;
}

void qg_shape_profile_learn(const qg_settings *s, uint64_t fingerprint, qg_dialect dialect,
                            const char *sample, const void *caller)
{
    ensure_loaded(s);
    pthread_mutex_lock(&profile_lock);
    if (set_has(current_set, fingerprint)) {
        pthread_mutex_unlock(&profile_lock);
        return;
    }
    char when[64], site[512], path[QG_PATH_MAX], line[LINE_MAX_BYTES + 1];
    qg_log_format_time(when, sizeof when);
    if (caller)
        qg_log_format_caller(site, sizeof site, caller, s->program);
    else
        snprintf(site, sizeof site, "-");
    const size_t cap = LINE_MAX_BYTES; /* one byte kept for a leading newline */
    size_t n = (size_t)snprintf(line, cap, "%016" PRIx64 "\t%s\t", fingerprint,
                                dialect == QG_DIALECT_MYSQL ? "mysql" : "postgres");
    n += put_field(line + n, cap - n, s->program[0] ? s->program : "-");
    n += (size_t)snprintf(line + n, cap - n, "\t%s\t", when);
    n += put_field(line + n, cap - n, site);
    line[n++] = '\t';
    n += put_field(line + n, cap - n - 1, sample);
    line[n++] = '\n';

    qg_shape_profile_path(s, path, sizeof path);
    bool written = false;
    char why[QG_PATH_MAX + 128];
    int fd = qg_log_open_file(path, O_RDWR | O_APPEND | O_CREAT, 0640, why, sizeof why);
    if (fd >= 0) {
        /* Other processes learn into the same file: under the file lock,
         * take in what they appended, and append only a shape still new. */
        while (flock(fd, LOCK_EX) != 0 && errno == EINTR)
            ;
        read_new_lines(s, fd, path);
        if (set_has(current_set, fingerprint)) {
            written = true;
        } else {
            profile_add(fingerprint);
            /* A hand-edited last line without its newline keeps it. */
            if (!file_read.ends_in_newline) {
                memmove(line + 1, line, n);
                line[0] = '\n';
                n++;
            }
            written = qg_log_write_whole(fd, line, n, why, sizeof why);
            if (written) {
                file_read.upto += (off_t)n;
                file_read.lines++;
                file_read.ends_in_newline = true;
            }
        }
        flock(fd, LOCK_UN);
        qg_libc_close(fd);
    } else {
        profile_add(fingerprint); /* reported once below; not retried per query */
    }
    if (!written && !write_failure_reported) {
        write_failure_reported = true;
        char detail[2 * QG_PATH_MAX + 256];
        if (fd < 0) /* why names the path */
            snprintf(detail, sizeof detail, "cannot append to shapes profile %s", why);
        else
            snprintf(detail, sizeof detail, "cannot append to shapes profile %s: %s", path, why);
        qg_log_write_event(s, "error", "shapes_profile_unwritable", detail);
    }
    pthread_mutex_unlock(&profile_lock);
}

void qg_shape_profile_forget(void)
{
    pthread_mutex_lock(&profile_lock);
    while (current_set != &initial_set) {
        shape_set *retired = current_set->retired;
        free(current_set);
        current_set = retired;
    }
    memset(initial_slots, 0, sizeof initial_slots);
    initial_set.count = 0;
    current_set = &initial_set;
    loaded = false;
    write_failure_reported = false;
    memset(&file_read, 0, sizeof file_read);
    file_read.ends_in_newline = true;
    pthread_mutex_unlock(&profile_lock);
}
