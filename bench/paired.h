/* Paired timing for the bench clients: a query through the functions the
 * shim interposes and the same kind of query through the library's own
 * functions, found with dlsym on the library's handle, which the shim never
 * sees, alternating query by query, so that the guest's drift over seconds,
 * which swamps a 1 % difference between whole runs, cancels in each pair. */
#ifndef QG_BENCH_PAIRED_H
#define QG_BENCH_PAIRED_H

#include <dlfcn.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline uint64_t paired_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The library's own entry point `name`; NULL when it is missing or is the
 * one the program calls (the shim is not preloaded).  Asked of the C
 * library's dlsym: the shim's answers a client library's handle with the
 * shim's own function, as the dynamic linker would for a linked call. */
static inline void *paired_own_symbol(const char *library, const char *name, void *interposed)
{
    typedef void *(*dlsym_fn)(void *, const char *);
    dlsym_fn libc_dlsym = (dlsym_fn)dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.34");
    if (!libc_dlsym)
        libc_dlsym = (dlsym_fn)dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.2.5");
    void *lib = dlopen(library, RTLD_NOW | RTLD_NOLOAD);
    void *sym = lib && libc_dlsym ? libc_dlsym(lib, name) : NULL;
    return sym == interposed ? NULL : sym;
}

static inline int paired_by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v, sorted in `scratch` so that v keeps its order. */
static inline double paired_median(const double *v, size_t n, double *scratch)
{
    memcpy(scratch, v, n * sizeof *v);
    qsort(scratch, n, sizeof *scratch, paired_by_value);
    return n % 2 ? scratch[n / 2] : (scratch[n / 2 - 1] + scratch[n / 2]) / 2;
}

/* The mean of b[i] - a[i] without the 5 % largest and smallest differences
 * (a round with a hiccup in one query, a descheduled process or a page
 * fault, tells nothing about the shim), its 95 % interval, and the ratio of
 * the summed latencies of the rounds kept: one client's throughput ratio. */
typedef struct paired_difference {
    double mean, ci95, ratio;
} paired_difference;

static inline paired_difference paired_compare(const double *a, const double *b, size_t n,
                                               double *scratch)
{
    for (size_t i = 0; i < n; i++)
        scratch[i] = b[i] - a[i];
    qsort(scratch, n, sizeof *scratch, paired_by_value);
    size_t cut = n / 20, kept = n - 2 * cut;
    double low = scratch[cut], high = scratch[n - cut - 1];
    double sum = 0, sq = 0, sum_a = 0, sum_b = 0;
    for (size_t i = cut; i < n - cut; i++)
        sum += scratch[i];
    double mean = sum / (double)kept;
    for (size_t i = cut; i < n - cut; i++)
        sq += (scratch[i] - mean) * (scratch[i] - mean);
    for (size_t i = 0; i < n; i++) {
        double d = b[i] - a[i];
        if (d >= low && d <= high) {
            sum_a += a[i];
            sum_b += b[i];
        }
    }
    return (paired_difference){mean, 1.96 * sqrt(sq / (double)(kept - 1) / (double)kept),
                               sum_a / sum_b};
}

#endif
