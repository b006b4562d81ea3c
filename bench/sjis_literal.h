/* pgbench_sjis's literal, for the benchmarks that send it or check it in
 * process: 100 times a phrase in which several characters have the trail
 * byte 0x5c (表 能 十 予 ソ), as Shift_JIS; as in bench_e2e.sh. */
#ifndef QG_BENCH_SJIS_LITERAL_H
#define QG_BENCH_SJIS_LITERAL_H

#include <string.h>

static const char sjis_phrase[] = "\x95\x5c\x8e\xa6\x94\x5c\x97\xcd\x8f\x5c\x95\xaa\x97\x5c"
                                  "\x92\xe8\x83\x5c\x83\x74\x83\x67\x93\xfa\x96\x7b\x8c\xea"
                                  "\x82\xcc\x83\x66\x81\x5b\x83\x5e\x8c\x9f\x8d\xf5";
enum { SJIS_PHRASES = 100 };

/* pgbench_sjis's point select: printf's format for the key, then the
 * literal's body. */
#define SJIS_SELECT "SELECT abalance FROM pgbench_accounts WHERE aid = %u AND filler <> '%sx';"

/* The literal's body into buf (at least sizeof sjis_phrase * SJIS_PHRASES
 * bytes): two bytes a character. */
static inline void sjis_literal_fill(char *buf)
{
    buf[0] = '\0';
    for (int i = 0; i < SJIS_PHRASES; i++)
        strcat(buf, sjis_phrase);
}

#endif
