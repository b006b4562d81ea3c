/* Shared by the libFuzzer targets: every client encoding of both dialects,
 * picked by one input byte, so that each run covers them all. */
#ifndef QG_FUZZ_COMMON_H
#define QG_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quoteguard.h"

typedef struct fuzz_encoding {
    qg_dialect dialect;
    const char *name; /* canonical, as qg_encoding_name() reports it */
} fuzz_encoding;

/* ENCODINGS.md A.1 (PostgreSQL) and B.1 (MariaDB character_set_client). */
static const fuzz_encoding fuzz_encodings[] = {
    {QG_DIALECT_POSTGRES, "SQL_ASCII"},  {QG_DIALECT_POSTGRES, "UTF8"},
    {QG_DIALECT_POSTGRES, "EUC_JP"},     {QG_DIALECT_POSTGRES, "EUC_JIS_2004"},
    {QG_DIALECT_POSTGRES, "EUC_CN"},     {QG_DIALECT_POSTGRES, "EUC_KR"},
    {QG_DIALECT_POSTGRES, "EUC_TW"},     {QG_DIALECT_POSTGRES, "MULE_INTERNAL"},
    {QG_DIALECT_POSTGRES, "LATIN1"},     {QG_DIALECT_POSTGRES, "LATIN2"},
    {QG_DIALECT_POSTGRES, "LATIN3"},     {QG_DIALECT_POSTGRES, "LATIN4"},
    {QG_DIALECT_POSTGRES, "LATIN5"},     {QG_DIALECT_POSTGRES, "LATIN6"},
    {QG_DIALECT_POSTGRES, "LATIN7"},     {QG_DIALECT_POSTGRES, "LATIN8"},
    {QG_DIALECT_POSTGRES, "LATIN9"},     {QG_DIALECT_POSTGRES, "LATIN10"},
    {QG_DIALECT_POSTGRES, "ISO_8859_5"}, {QG_DIALECT_POSTGRES, "ISO_8859_6"},
    {QG_DIALECT_POSTGRES, "ISO_8859_7"}, {QG_DIALECT_POSTGRES, "ISO_8859_8"},
    {QG_DIALECT_POSTGRES, "WIN866"},     {QG_DIALECT_POSTGRES, "WIN874"},
    {QG_DIALECT_POSTGRES, "WIN1250"},    {QG_DIALECT_POSTGRES, "WIN1251"},
    {QG_DIALECT_POSTGRES, "WIN1252"},    {QG_DIALECT_POSTGRES, "WIN1253"},
    {QG_DIALECT_POSTGRES, "WIN1254"},    {QG_DIALECT_POSTGRES, "WIN1255"},
    {QG_DIALECT_POSTGRES, "WIN1256"},    {QG_DIALECT_POSTGRES, "WIN1257"},
    {QG_DIALECT_POSTGRES, "WIN1258"},    {QG_DIALECT_POSTGRES, "KOI8R"},
    {QG_DIALECT_POSTGRES, "KOI8U"},      {QG_DIALECT_POSTGRES, "SJIS"},
    {QG_DIALECT_POSTGRES, "SHIFT_JIS_2004"}, {QG_DIALECT_POSTGRES, "BIG5"},
    {QG_DIALECT_POSTGRES, "GBK"},        {QG_DIALECT_POSTGRES, "UHC"},
    {QG_DIALECT_POSTGRES, "GB18030"},    {QG_DIALECT_POSTGRES, "JOHAB"},
    {QG_DIALECT_MYSQL, "big5"},          {QG_DIALECT_MYSQL, "cp932"},
    {QG_DIALECT_MYSQL, "sjis"},          {QG_DIALECT_MYSQL, "gbk"},
    {QG_DIALECT_MYSQL, "gb18030"},       {QG_DIALECT_MYSQL, "euckr"},
    {QG_DIALECT_MYSQL, "gb2312"},        {QG_DIALECT_MYSQL, "ujis"},
    {QG_DIALECT_MYSQL, "eucjpms"},       {QG_DIALECT_MYSQL, "utf8mb3"},
    {QG_DIALECT_MYSQL, "utf8mb4"},       {QG_DIALECT_MYSQL, "latin1"},
    {QG_DIALECT_MYSQL, "latin2"},        {QG_DIALECT_MYSQL, "latin5"},
    {QG_DIALECT_MYSQL, "latin7"},        {QG_DIALECT_MYSQL, "cp1250"},
    {QG_DIALECT_MYSQL, "cp1251"},        {QG_DIALECT_MYSQL, "cp1256"},
    {QG_DIALECT_MYSQL, "cp1257"},        {QG_DIALECT_MYSQL, "cp850"},
    {QG_DIALECT_MYSQL, "cp852"},         {QG_DIALECT_MYSQL, "cp866"},
    {QG_DIALECT_MYSQL, "koi8r"},         {QG_DIALECT_MYSQL, "koi8u"},
    {QG_DIALECT_MYSQL, "ascii"},         {QG_DIALECT_MYSQL, "binary"},
    {QG_DIALECT_MYSQL, "dec8"},          {QG_DIALECT_MYSQL, "hp8"},
    {QG_DIALECT_MYSQL, "swe7"},          {QG_DIALECT_MYSQL, "hebrew"},
    {QG_DIALECT_MYSQL, "tis620"},        {QG_DIALECT_MYSQL, "greek"},
    {QG_DIALECT_MYSQL, "armscii8"},      {QG_DIALECT_MYSQL, "keybcs2"},
    {QG_DIALECT_MYSQL, "macce"},         {QG_DIALECT_MYSQL, "macroman"},
    {QG_DIALECT_MYSQL, "geostd8"},
};
#define FUZZ_ENCODING_COUNT (sizeof fuzz_encodings / sizeof fuzz_encodings[0])

/* A broken invariant: say which and abort, so libFuzzer keeps the input. */
#define FUZZ_CHECK(cond, ...)                                                                  \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "invariant broken: %s: ", #cond);                                  \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fprintf(stderr, "\n");                                                             \
            abort();                                                                           \
        }                                                                                      \
    } while (0)

/* The encoding named by selector byte `b`; the table must match the library. */
__attribute__((unused)) static const qg_encoding *fuzz_pick_encoding(uint8_t b,
                                                                  qg_dialect *dialect)
{
    const fuzz_encoding *fe = &fuzz_encodings[b % FUZZ_ENCODING_COUNT];
    const qg_encoding *enc = qg_encoding_find(fe->dialect, fe->name);
    FUZZ_CHECK(enc != NULL, "encoding %s unknown to the library", fe->name);
    FUZZ_CHECK(strcmp(qg_encoding_name(enc), fe->name) == 0, "%s reports itself as %s",
               fe->name, qg_encoding_name(enc));
    *dialect = fe->dialect;
    return enc;
}

/* A heap copy of exactly `size` bytes, so ASan sees any read past the end
 * (libFuzzer's own buffer is exact too, but the sub-slices we pass are not). */
__attribute__((unused)) static unsigned char *fuzz_exact_copy(const uint8_t *data, size_t size)
{
    unsigned char *copy = malloc(size ? size : 1);
    FUZZ_CHECK(copy != NULL, "out of memory");
    if (size)
        memcpy(copy, data, size);
    return copy;
}

#endif
