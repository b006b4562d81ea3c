/* Minimal TAP producer for the C unit tests (run by prove). */
#ifndef QG_TAP_H
#define QG_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int tap_count;
static int tap_failed;

static int tap_ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3), unused));
static int tap_ok(int cond, const char *fmt, ...)
{
    va_list ap;
    tap_count++;
    if (!cond)
        tap_failed++;
    printf("%sok %d - ", cond ? "" : "not ", tap_count);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    return cond;
}

static void tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static void tap_diag(const char *fmt, ...)
{
    va_list ap;
    printf("# ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

static int tap_done(void) __attribute__((unused));
static int tap_done(void)
{
    printf("1..%d\n", tap_count);
    return tap_failed ? 1 : 0;
}

#endif
