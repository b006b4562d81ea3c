/* What preloading costs a process that never opens a database connection:
 * runs a program (by default /bin/true) again and again, in turn without a
 * preload, with an empty shared object preloaded (what the loader alone
 * costs) and with the shim preloaded, and prints for each the median
 * wall-clock time from spawn to exit and the median CPU time of the child
 * (user and system: what a loaded machine's queueing does not inflate),
 * and the medians of the per-round differences.
 *
 *   bench_startup EMPTY.so SHIM.so ROUNDS [program args…]
 *
 * Not a test: it reports, it does not judge. */
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum { NONE, EMPTY, SHIM, WAYS };

/* The environment without LD_PRELOAD, plus `preload` when it is given. */
static char **environment(const char *preload)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 2, sizeof *env);
    if (!env)
        return NULL;
    size_t used = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0)
            env[used++] = environ[i];
    if (preload) {
        size_t len = strlen("LD_PRELOAD=") + strlen(preload) + 1;
        char *entry = malloc(len);
        if (!entry)
            return NULL;
        snprintf(entry, len, "LD_PRELOAD=%s", preload);
        env[used++] = entry;
    }
    return env;
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

typedef struct run_time {
    double wall, cpu; /* microseconds */
} run_time;

/* One run; false when it failed. */
static bool run_once(char **argv, char **env, run_time *t)
{
    double start = now_us();
    pid_t pid;
    if (posix_spawn(&pid, argv[0], NULL, NULL, argv, env) != 0)
        return false;
    int status;
    struct rusage usage;
    if (wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return false;
    t->wall = now_us() - start;
    t->cpu = (double)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 +
             (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
    return true;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Medians of the ways' times and of the rounds' differences. */
static void report(const char *what, double *times[WAYS], size_t rounds, double *scratch)
{
    printf("  %s: without a preload %.1f, an empty object preloaded %.1f, the shim preloaded %.1f\n",
           what, median(times[NONE], rounds), median(times[EMPTY], rounds),
           median(times[SHIM], rounds));
    static const int pairs[3][2] = {{EMPTY, NONE}, {SHIM, NONE}, {SHIM, EMPTY}};
    double added[3];
    for (int p = 0; p < 3; p++) {
        for (size_t r = 0; r < rounds; r++)
            scratch[r] = times[pairs[p][0]][r] - times[pairs[p][1]][r];
        added[p] = median(scratch, rounds);
    }
    printf("    added (median of the rounds' differences): the empty object %.1f, the shim %.1f, "
           "the shim beyond the empty object %.1f\n",
           added[0], added[1], added[2]);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_startup EMPTY.so SHIM.so ROUNDS [program args...]\n");
        return 2;
    }
    long rounds = strtol(argv[3], NULL, 10);
    if (rounds < 1)
        return 2;
    static char *default_program[] = {"/bin/true", NULL};
    char **program = argc > 4 ? argv + 4 : default_program;
    char **env[WAYS] = {environment(NULL), environment(argv[1]), environment(argv[2])};
    double *wall[WAYS], *cpu[WAYS];
    double *scratch = calloc((size_t)rounds, sizeof(double));
    for (int w = 0; w < WAYS; w++) {
        wall[w] = calloc((size_t)rounds, sizeof(double));
        cpu[w] = calloc((size_t)rounds, sizeof(double));
        if (!env[w] || !wall[w] || !cpu[w] || !scratch)
            return 1;
    }
    run_time t;
    for (int w = 0; w < WAYS; w++) /* warm the page cache */
        if (!run_once(program, env[w], &t)) {
            fprintf(stderr, "bench_startup: %s failed\n", program[0]);
            return 1;
        }
    for (long r = 0; r < rounds; r++)
        for (int i = 0; i < WAYS; i++) {
            int w = (int)((r + i) % WAYS); /* each way goes first in turn */
            if (!run_once(program, env[w], &t)) {
                fprintf(stderr, "bench_startup: %s failed\n", program[0]);
                return 1;
            }
            wall[w][r] = t.wall;
            cpu[w][r] = t.cpu;
        }
    printf("%s, %ld rounds, medians (us):\n", program[0], rounds);
    report("wall-clock from spawn to exit", wall, (size_t)rounds, scratch);
    report("CPU time of the child (user + system)", cpu, (size_t)rounds, scratch);
    return 0;
}
