/* Per-process counters in a shared mapping (see counters.h). */
#include "counters.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hot.h"
#include "real.h"

#define REASON_ROWS (QG_REASON_COUNT + 1)
#define ROW_UNKNOWN_SHAPE QG_REASON_COUNT
#define NAME_SIZE 32

enum { ACTION_BLOCKED, ACTION_LOGGED, ACTION_ALLOWED, ACTIONS };

typedef struct counters_file {
    char magic[8];
    uint32_t reasons;
    uint32_t name_size;
    int64_t pid;
    char program[QG_NAME_MAX];
    char names[REASON_ROWS][NAME_SIZE];
    uint64_t queries_checked;
    uint64_t queries_blocked;
    uint64_t findings[REASON_ROWS][ACTIONS];
} counters_file;

/* The mapping of this process; NULL until the first query, and again in a
 * forked child (whose counts belong in a file of its own). */
static counters_file *mapped;
static bool failed; /* the file could not be made: counted nowhere, said once */
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void lock_open(void) { pthread_mutex_lock(&open_lock); }
static void unlock_open(void) { pthread_mutex_unlock(&open_lock); }

/* The child's mapping is the parent's file: drop it, start a file at the
 * child's first query. */
static void child_after_fork(void)
{
    if (mapped)
        munmap(mapped, sizeof *mapped);
    mapped = NULL;
    failed = false;
    pthread_mutex_unlock(&open_lock);
}

static void register_atfork(void)
{
    pthread_atfork(lock_open, unlock_open, child_after_fork);
}

QG_COLD static void give_up(const qg_settings *s, const char *path, const char *why)
{
    failed = true;
    char detail[QG_PATH_MAX + 256];
    snprintf(detail, sizeof detail, "cannot keep counters in %s: %s; queries are not counted",
             path, why);
    qg_log_write_event(s, "warning", "counters_error", detail);
}

/* Creates this process's file.  The directory may be shared by every user
 * (mode 1777, as the package makes /run/quoteguard): a symbolic link or a
 * file of another user planted under our name is not used. */
QG_COLD static counters_file *open_counters(const qg_settings *s)
{
    pthread_once(&atfork_once, register_atfork);
    pthread_mutex_lock(&open_lock);
    counters_file *c = __atomic_load_n(&mapped, __ATOMIC_ACQUIRE);
    if (c || failed) {
        pthread_mutex_unlock(&open_lock);
        return c;
    }
    char path[QG_PATH_MAX + QG_NAME_MAX + 32];
    pid_t pid = getpid();
    snprintf(path, sizeof path, "%s/%s.%ld", s->counters_dir, s->program, (long)pid);
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    struct stat st;
    char why[128];
    snprintf(why, sizeof why, "%s", strerrordesc_np(errno));
    if (fd >= 0 && (fstat(fd, &st) != 0 || st.st_uid != geteuid() || !S_ISREG(st.st_mode))) {
        snprintf(why, sizeof why, "%s", strerrordesc_np(EPERM));
        qg_libc_close(fd);
        fd = -1;
    }
    counters_file head;
    memset(&head, 0, sizeof head);
    memcpy(head.magic, "QGCOUNT1", sizeof head.magic);
    head.reasons = REASON_ROWS;
    head.name_size = NAME_SIZE;
    head.pid = pid;
    snprintf(head.program, sizeof head.program, "%s", s->program);
    for (int r = 0; r < QG_REASON_COUNT; r++)
        snprintf(head.names[r], NAME_SIZE, "%s", qg_reason_name((qg_reason)r));
    snprintf(head.names[ROW_UNKNOWN_SHAPE], NAME_SIZE, "unknown_shape");
    /* A file left by an earlier process of the same pid starts again,
     * written as the log writes (ulimit -f never raises SIGXFSZ). */
    if (fd >= 0 && ftruncate(fd, 0) != 0) {
        snprintf(why, sizeof why, "%s", strerrordesc_np(errno));
        qg_libc_close(fd);
        fd = -1;
    }
    if (fd >= 0 && !qg_log_write_whole(fd, &head, sizeof head, why, sizeof why)) {
        qg_libc_close(fd);
        fd = -1;
    }
    if (fd >= 0) {
        void *m = mmap(NULL, sizeof head, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        snprintf(why, sizeof why, "%s", strerrordesc_np(errno));
        qg_libc_close(fd);
        if (m != MAP_FAILED)
            c = m;
    }
    if (c)
        __atomic_store_n(&mapped, c, __ATOMIC_RELEASE);
    else
        give_up(s, path, why);
    pthread_mutex_unlock(&open_lock);
    return c;
}

static counters_file *counters(const qg_settings *s)
{
    counters_file *c = __atomic_load_n(&mapped, __ATOMIC_ACQUIRE);
    if (__builtin_expect(c != NULL, 1) || __atomic_load_n(&failed, __ATOMIC_RELAXED))
        return c;
    return open_counters(s);
}

QG_HOT void qg_counters_query(const qg_settings *s, bool blocked)
{
    counters_file *c = counters(s);
    if (!c)
        return;
    __atomic_fetch_add(&c->queries_checked, 1, __ATOMIC_RELAXED);
    if (blocked)
        __atomic_fetch_add(&c->queries_blocked, 1, __ATOMIC_RELAXED);
}

void qg_counters_finding(const qg_settings *s, const qg_log_finding *f)
{
    counters_file *c = counters(s);
    if (!c)
        return;
    unsigned row = (unsigned)f->reason;
    if (f->reason_name)
        row = strcmp(f->reason_name, "unknown_shape") == 0 ? ROW_UNKNOWN_SHAPE : REASON_ROWS;
    if (row >= REASON_ROWS)
        return;
    int action = strcmp(f->action, "blocked") == 0   ? ACTION_BLOCKED
                 : strcmp(f->action, "allowed") == 0 ? ACTION_ALLOWED
                                                     : ACTION_LOGGED;
    __atomic_fetch_add(&c->findings[row][action], 1, __ATOMIC_RELAXED);
}
