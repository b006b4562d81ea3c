/* The functions every query runs through. */
#ifndef QG_HOT_H
#define QG_HOT_H

/* In a real client the shim's cost per query is set less by instruction
 * counts than by cold caches: between two queries the process sleeps in
 * poll() while the kernel and other processes evict the shim's code.  GCC
 * groups `hot` functions in .text.hot, so a query's path spans a few pages
 * and cache lines instead of the whole library (bench/bench_paired.c
 * measures it: docs/PERFORMANCE.md). */
#define QG_HOT __attribute__((hot))

/* The rare paths (findings, blocking, errors) leave the hot functions for
 * .text.unlikely, so that what every query runs stays on few lines and
 * pages. */
#define QG_COLD __attribute__((cold, noinline))

/* Large zeroed buffers of which a clean query reads the head at most (the
 * settings) or nothing (the configuration file's text, spare entries):
 * placed after .bss (src/shim-data.ld), so that the small variables every
 * query reads share a page or two instead of lying between them. */
#define QG_FAR_BSS __attribute__((section(".lbss.quoteguard")))

/* A variable every query reads, declared as defined in this object: the
 * compiler then reads it with one load, where an extern of default
 * visibility is reached through the GOT first (-fvisibility=hidden hides
 * definitions, not declarations). */
#define QG_LOCAL __attribute__((visibility("hidden")))

#endif
