/*
 * Client encodings, table-driven.  Each encoding classifies a first byte
 * (ASCII, a valid single high byte, invalid, or the start of a multibyte
 * form) and each form lists the allowed byte set of every following byte.
 * Ranges follow the encodings' own definitions, which PostgreSQL's
 * conversions and MySQL's lexer enforce (see ../shared/ENCODINGS.md and
 * docs/DETECTION.md for where we are stricter than a verifier and why).
 */
#include <stdint.h>
#include <string.h>

#include "ascii.h"
#include "encoding_tables.h"
#include "hot.h"
#include "quoteguard.h"

/* ------------------------------------------------------------ byte tables */

/* Every byte but NUL is a character of its own. */
static const uint8_t single_lead[256] = {[0x00] = L_INVALID, [0x80 ... 0xff] = L_SINGLE};

/* PG: what a SQL_ASCII server accepts from a client encoding it cannot
 * convert from (SJIS, BIG5, GBK, UHC, GB18030, JOHAB, SHIFT_JIS_2004):
 * ASCII only, every other byte refused.  Read as a multibyte encoding
 * without a multibyte form, so that the lexer checks every high byte. */
static const uint8_t ascii_only_lead[256] = {[0x00] = L_INVALID, [0x80 ... 0xff] = L_INVALID};
static const uint8_t no_trail[256] = {0};

/* UTF-8 (RFC 3629).  Trail bits select the ranges the lead byte allows. */
enum { U_CONT = 1, U_A0BF = 2, U_809F = 4, U_90BF = 8, U_808F = 16 };
static const uint8_t utf8_trail[256] = {
    [0x80 ... 0x8f] = U_CONT | U_809F | U_808F,
    [0x90 ... 0x9f] = U_CONT | U_809F | U_90BF,
    [0xa0 ... 0xbf] = U_CONT | U_A0BF | U_90BF,
};
static const mb_form utf8_forms[] = {
    {2, {U_CONT, 0, 0}, 0},           /* 0: C2-DF */
    {3, {U_A0BF, U_CONT, 0}, 0},      /* 1: E0, no overlong */
    {3, {U_CONT, U_CONT, 0}, 0},      /* 2: E1-EF */
    {3, {U_809F, U_CONT, 0}, 0},      /* 3: ED, no UTF-16 surrogates */
    {4, {U_90BF, U_CONT, U_CONT}, 0}, /* 4: F0, no overlong */
    {4, {U_CONT, U_CONT, U_CONT}, 0}, /* 5: F1-F3 */
    {4, {U_808F, U_CONT, U_CONT}, 0}, /* 6: F4, <= U+10FFFF */
};
/* PostgreSQL: surrogates are invalid. */
static const uint8_t utf8_pg_lead[256] = {
    [0x00] = L_INVALID,           [0x80 ... 0xc1] = L_INVALID,  [0xc2 ... 0xdf] = L_FORM + 0,
    [0xe0] = L_FORM + 1,          [0xe1 ... 0xec] = L_FORM + 2, [0xed] = L_FORM + 3,
    [0xee ... 0xef] = L_FORM + 2, [0xf0] = L_FORM + 4,          [0xf1 ... 0xf3] = L_FORM + 5,
    [0xf4] = L_FORM + 6,          [0xf5 ... 0xff] = L_INVALID,
};
/* MariaDB utf8mb4: encoded surrogates are well formed. */
static const uint8_t utf8mb4_lead[256] = {
    [0x00] = L_INVALID,           [0x80 ... 0xc1] = L_INVALID,  [0xc2 ... 0xdf] = L_FORM + 0,
    [0xe0] = L_FORM + 1,          [0xe1 ... 0xef] = L_FORM + 2, [0xf0] = L_FORM + 4,
    [0xf1 ... 0xf3] = L_FORM + 5, [0xf4] = L_FORM + 6,          [0xf5 ... 0xff] = L_INVALID,
};
/* MariaDB utf8mb3: at most three bytes. */
static const uint8_t utf8mb3_lead[256] = {
    [0x00] = L_INVALID,          [0x80 ... 0xc1] = L_INVALID,  [0xc2 ... 0xdf] = L_FORM + 0,
    [0xe0] = L_FORM + 1,         [0xe1 ... 0xef] = L_FORM + 2, [0xf0 ... 0xff] = L_INVALID,
};

/* Shift_JIS family (PG SJIS, SHIFT_JIS_2004; MySQL sjis, cp932):
 * kana A1-DF single; lead 81-9F/E0-FC; trail 40-7E/80-FC. */
static const uint8_t sjis_lead[256] = {
    [0x00] = L_INVALID,           [0x80] = L_INVALID,           [0x81 ... 0x9f] = L_FORM + 0,
    [0xa0] = L_INVALID,           [0xa1 ... 0xdf] = L_SINGLE,   [0xe0 ... 0xfc] = L_FORM + 0,
    [0xfd ... 0xff] = L_INVALID,
};
static const uint8_t sjis_trail[256] = {[0x40 ... 0x7e] = 1, [0x80 ... 0xfc] = 1};
static const mb_form two_byte_forms[] = {{2, {1, 0, 0}, 0}};

/* BIG5: lead A1-F9, trail 40-7E/A1-FE. */
static const uint8_t big5_lead[256] = {
    [0x00] = L_INVALID, [0x80 ... 0xa0] = L_INVALID, [0xa1 ... 0xf9] = L_FORM + 0,
    [0xfa ... 0xff] = L_INVALID,
};
static const uint8_t big5_trail[256] = {[0x40 ... 0x7e] = 1, [0xa1 ... 0xfe] = 1};

/* GBK: lead 81-FE, trail 40-7E/80-FE. */
static const uint8_t gbk_lead[256] = {
    [0x00] = L_INVALID, [0x80] = L_INVALID, [0x81 ... 0xfe] = L_FORM + 0, [0xff] = L_INVALID,
};
static const uint8_t gbk_trail[256] = {[0x40 ... 0x7e] = 1, [0x80 ... 0xfe] = 1};

/* UHC (PG) and euckr (MariaDB, a CP949 superset): lead 81-FE,
 * trail 41-5A/61-7A/81-FE. */
static const uint8_t uhc_trail[256] = {[0x41 ... 0x5a] = 1, [0x61 ... 0x7a] = 1, [0x81 ... 0xfe] = 1};

/* GB18030: two bytes [81-FE][40-7E,80-FE] or four [81-FE][30-39][81-FE][30-39]. */
enum { G_TRAIL2 = 1, G_DIGIT = 2, G_HIGH = 4 };
static const uint8_t gb18030_trail[256] = {
    [0x30 ... 0x39] = G_DIGIT, [0x40 ... 0x7e] = G_TRAIL2, [0x80] = G_TRAIL2,
    [0x81 ... 0xfe] = G_TRAIL2 | G_HIGH,
};
static const mb_form gb18030_forms[] = {
    {2, {G_TRAIL2, 0, 0}, L_FORM + 1},
    {4, {G_DIGIT, G_HIGH, G_DIGIT}, 0},
};

/* EUC family.  E_RANGE = A1-FE, E_KANA = A1-DF, E_TW2 = A1-A7, E_HIGH = 80-FF. */
enum { E_RANGE = 1, E_KANA = 2, E_TW2 = 4, E_HIGH = 8 };
static const uint8_t euc_trail[256] = {
    [0x80 ... 0xa0] = E_HIGH,
    [0xa1 ... 0xa7] = E_RANGE | E_KANA | E_TW2 | E_HIGH,
    [0xa8 ... 0xdf] = E_RANGE | E_KANA | E_HIGH,
    [0xe0 ... 0xfe] = E_RANGE | E_HIGH,
    [0xff] = E_HIGH,
};
static const mb_form euc_forms[] = {
    {2, {E_RANGE, 0, 0}, 0},             /* 0: [A1-FE][A1-FE] */
    {2, {E_KANA, 0, 0}, 0},              /* 1: SS2 kana */
    {3, {E_RANGE, E_RANGE, 0}, 0},       /* 2: SS3 JIS X 0212 */
    {4, {E_TW2, E_RANGE, E_RANGE}, 0},   /* 3: EUC_TW SS2 plane */
    {2, {E_HIGH, 0, 0}, 0},              /* 4: MULE LC1 */
    {3, {E_HIGH, E_HIGH, 0}, 0},         /* 5: MULE LC2 / LCPRV1 */
    {4, {E_HIGH, E_HIGH, E_HIGH}, 0},    /* 6: MULE LCPRV2 */
};
/* EUC_JP, EUC_JIS_2004, MySQL ujis/eucjpms. */
static const uint8_t eucjp_lead[256] = {
    [0x00] = L_INVALID,         [0x80 ... 0x8d] = L_INVALID, [0x8e] = L_FORM + 1,
    [0x8f] = L_FORM + 2,        [0x90 ... 0xa0] = L_INVALID, [0xa1 ... 0xfe] = L_FORM + 0,
    [0xff] = L_INVALID,
};
/* EUC_CN, EUC_KR (PG): two bytes in A1-FE only. */
static const uint8_t euckr_lead[256] = {
    [0x00] = L_INVALID, [0x80 ... 0xa0] = L_INVALID, [0xa1 ... 0xfe] = L_FORM + 0,
    [0xff] = L_INVALID,
};
/* MySQL gb2312: [A1-F7][A1-FE]. */
static const uint8_t gb2312_lead[256] = {
    [0x00] = L_INVALID, [0x80 ... 0xa0] = L_INVALID, [0xa1 ... 0xf7] = L_FORM + 0,
    [0xf8 ... 0xff] = L_INVALID,
};
/* EUC_TW (PG): SS2 + 3 bytes; SS3 invalid; any other high lead + [A1-FE]. */
static const uint8_t euctw_lead[256] = {
    [0x00] = L_INVALID,         [0x80 ... 0x8d] = L_FORM + 0, [0x8e] = L_FORM + 3,
    [0x8f] = L_INVALID,         [0x90 ... 0xff] = L_FORM + 0,
};
/* JOHAB (PG's verifier): EUC lengths, every following byte A1-FE. */
static const uint8_t johab_lead[256] = {
    [0x00] = L_INVALID, [0x80 ... 0x8d] = L_FORM + 0, [0x8e] = L_FORM + 0, [0x8f] = L_FORM + 2,
    [0x90 ... 0xff] = L_FORM + 0,
};
/* MULE_INTERNAL: charset-id leads; following bytes need the high bit; other
 * high bytes are accepted as one-byte characters. */
static const uint8_t mule_lead[256] = {
    [0x00] = L_INVALID,          [0x80] = L_SINGLE,           [0x81 ... 0x8d] = L_FORM + 4,
    [0x8e ... 0x8f] = L_SINGLE,  [0x90 ... 0x9b] = L_FORM + 5, [0x9c ... 0x9d] = L_FORM + 6,
    [0x9e ... 0xff] = L_SINGLE,
};

/* ------------------------------------------------------------- encodings */

#define SINGLE(canon, dialect, aliases) {canon, dialect, aliases, single_lead, NULL, NULL, false, false}

static const qg_encoding encodings[] = {
    /* PostgreSQL; aliases are pg_char_to_encoding's, after removing every
     * non-alphanumeric byte and lower-casing. */
    SINGLE("SQL_ASCII", QG_DIALECT_POSTGRES, "sqlascii\0"),
    {QG_PG_ASCII_ONLY, QG_DIALECT_POSTGRES, "\0", ascii_only_lead, no_trail, two_byte_forms, false,
     false},
    {"UTF8", QG_DIALECT_POSTGRES, "utf8\0unicode\0", utf8_pg_lead, utf8_trail, utf8_forms, false, true},
    {"EUC_JP", QG_DIALECT_POSTGRES, "eucjp\0", eucjp_lead, euc_trail, euc_forms, false, false},
    {"EUC_JIS_2004", QG_DIALECT_POSTGRES, "eucjis2004\0", eucjp_lead, euc_trail, euc_forms, false, false},
    {"EUC_CN", QG_DIALECT_POSTGRES, "euccn\0", euckr_lead, euc_trail, euc_forms, false, false},
    {"EUC_KR", QG_DIALECT_POSTGRES, "euckr\0", euckr_lead, euc_trail, euc_forms, false, false},
    {"EUC_TW", QG_DIALECT_POSTGRES, "euctw\0", euctw_lead, euc_trail, euc_forms, false, false},
    {"MULE_INTERNAL", QG_DIALECT_POSTGRES, "muleinternal\0", mule_lead, euc_trail, euc_forms, false, false},
    SINGLE("LATIN1", QG_DIALECT_POSTGRES, "latin1\0iso88591\0"),
    SINGLE("LATIN2", QG_DIALECT_POSTGRES, "latin2\0iso88592\0"),
    SINGLE("LATIN3", QG_DIALECT_POSTGRES, "latin3\0iso88593\0"),
    SINGLE("LATIN4", QG_DIALECT_POSTGRES, "latin4\0iso88594\0"),
    SINGLE("LATIN5", QG_DIALECT_POSTGRES, "latin5\0iso88599\0"),
    SINGLE("LATIN6", QG_DIALECT_POSTGRES, "latin6\0iso885910\0"),
    SINGLE("LATIN7", QG_DIALECT_POSTGRES, "latin7\0iso885913\0"),
    SINGLE("LATIN8", QG_DIALECT_POSTGRES, "latin8\0iso885914\0"),
    SINGLE("LATIN9", QG_DIALECT_POSTGRES, "latin9\0iso885915\0"),
    SINGLE("LATIN10", QG_DIALECT_POSTGRES, "latin10\0iso885916\0"),
    SINGLE("ISO_8859_5", QG_DIALECT_POSTGRES, "iso88595\0"),
    SINGLE("ISO_8859_6", QG_DIALECT_POSTGRES, "iso88596\0"),
    SINGLE("ISO_8859_7", QG_DIALECT_POSTGRES, "iso88597\0"),
    SINGLE("ISO_8859_8", QG_DIALECT_POSTGRES, "iso88598\0"),
    SINGLE("WIN866", QG_DIALECT_POSTGRES, "win866\0windows866\0alt\0"),
    SINGLE("WIN874", QG_DIALECT_POSTGRES, "win874\0windows874\0"),
    SINGLE("WIN1250", QG_DIALECT_POSTGRES, "win1250\0windows1250\0"),
    SINGLE("WIN1251", QG_DIALECT_POSTGRES, "win1251\0windows1251\0win\0"),
    SINGLE("WIN1252", QG_DIALECT_POSTGRES, "win1252\0windows1252\0"),
    SINGLE("WIN1253", QG_DIALECT_POSTGRES, "win1253\0windows1253\0"),
    SINGLE("WIN1254", QG_DIALECT_POSTGRES, "win1254\0windows1254\0"),
    SINGLE("WIN1255", QG_DIALECT_POSTGRES, "win1255\0windows1255\0"),
    SINGLE("WIN1256", QG_DIALECT_POSTGRES, "win1256\0windows1256\0"),
    SINGLE("WIN1257", QG_DIALECT_POSTGRES, "win1257\0windows1257\0"),
    SINGLE("WIN1258", QG_DIALECT_POSTGRES, "win1258\0windows1258\0abc\0tcvn\0tcvn5712\0vscii\0"),
    SINGLE("KOI8R", QG_DIALECT_POSTGRES, "koi8r\0koi8\0"),
    SINGLE("KOI8U", QG_DIALECT_POSTGRES, "koi8u\0"),
    {"SJIS", QG_DIALECT_POSTGRES, "sjis\0shiftjis\0mskanji\0win932\0windows932\0", sjis_lead,
     sjis_trail, two_byte_forms, true, false},
    {"SHIFT_JIS_2004", QG_DIALECT_POSTGRES, "shiftjis2004\0", sjis_lead, sjis_trail,
     two_byte_forms, true, false},
    {"BIG5", QG_DIALECT_POSTGRES, "big5\0win950\0windows950\0", big5_lead, big5_trail,
     two_byte_forms, true, false},
    {"GBK", QG_DIALECT_POSTGRES, "gbk\0win936\0windows936\0", gbk_lead, gbk_trail,
     two_byte_forms, true, false},
    {"UHC", QG_DIALECT_POSTGRES, "uhc\0win949\0windows949\0", gbk_lead, uhc_trail,
     two_byte_forms, true, false},
    {"GB18030", QG_DIALECT_POSTGRES, "gb18030\0", gbk_lead, gb18030_trail, gb18030_forms, true, false},
    {"JOHAB", QG_DIALECT_POSTGRES, "johab\0", johab_lead, euc_trail, euc_forms, false, false},

    /* MySQL / MariaDB character sets that can be character_set_client. */
    {"big5", QG_DIALECT_MYSQL, "big5\0", big5_lead, big5_trail, two_byte_forms, true, false},
    {"cp932", QG_DIALECT_MYSQL, "cp932\0", sjis_lead, sjis_trail, two_byte_forms, true, false},
    {"sjis", QG_DIALECT_MYSQL, "sjis\0", sjis_lead, sjis_trail, two_byte_forms, true, false},
    {"gbk", QG_DIALECT_MYSQL, "gbk\0", gbk_lead, gbk_trail, two_byte_forms, true, false},
    {"gb18030", QG_DIALECT_MYSQL, "gb18030\0", gbk_lead, gb18030_trail, gb18030_forms, true, false},
    {"euckr", QG_DIALECT_MYSQL, "euckr\0", gbk_lead, uhc_trail, two_byte_forms, true, false},
    {"gb2312", QG_DIALECT_MYSQL, "gb2312\0", gb2312_lead, euc_trail, euc_forms, false, false},
    {"ujis", QG_DIALECT_MYSQL, "ujis\0", eucjp_lead, euc_trail, euc_forms, false, false},
    {"eucjpms", QG_DIALECT_MYSQL, "eucjpms\0", eucjp_lead, euc_trail, euc_forms, false, false},
    {"utf8mb3", QG_DIALECT_MYSQL, "utf8mb3\0utf8\0", utf8mb3_lead, utf8_trail, utf8_forms, false, true},
    {"utf8mb4", QG_DIALECT_MYSQL, "utf8mb4\0", utf8mb4_lead, utf8_trail, utf8_forms, false, true},
    SINGLE("latin1", QG_DIALECT_MYSQL, "latin1\0"),
    SINGLE("latin2", QG_DIALECT_MYSQL, "latin2\0"),
    SINGLE("latin5", QG_DIALECT_MYSQL, "latin5\0"),
    SINGLE("latin7", QG_DIALECT_MYSQL, "latin7\0"),
    SINGLE("cp1250", QG_DIALECT_MYSQL, "cp1250\0"),
    SINGLE("cp1251", QG_DIALECT_MYSQL, "cp1251\0"),
    SINGLE("cp1256", QG_DIALECT_MYSQL, "cp1256\0"),
    SINGLE("cp1257", QG_DIALECT_MYSQL, "cp1257\0"),
    SINGLE("cp850", QG_DIALECT_MYSQL, "cp850\0"),
    SINGLE("cp852", QG_DIALECT_MYSQL, "cp852\0"),
    SINGLE("cp866", QG_DIALECT_MYSQL, "cp866\0"),
    SINGLE("koi8r", QG_DIALECT_MYSQL, "koi8r\0"),
    SINGLE("koi8u", QG_DIALECT_MYSQL, "koi8u\0"),
    SINGLE("ascii", QG_DIALECT_MYSQL, "ascii\0"),
    SINGLE("binary", QG_DIALECT_MYSQL, "binary\0"),
    SINGLE("dec8", QG_DIALECT_MYSQL, "dec8\0"),
    SINGLE("hp8", QG_DIALECT_MYSQL, "hp8\0"),
    SINGLE("swe7", QG_DIALECT_MYSQL, "swe7\0"),
    SINGLE("hebrew", QG_DIALECT_MYSQL, "hebrew\0"),
    SINGLE("tis620", QG_DIALECT_MYSQL, "tis620\0"),
    SINGLE("greek", QG_DIALECT_MYSQL, "greek\0"),
    SINGLE("armscii8", QG_DIALECT_MYSQL, "armscii8\0"),
    SINGLE("keybcs2", QG_DIALECT_MYSQL, "keybcs2\0"),
    SINGLE("macce", QG_DIALECT_MYSQL, "macce\0"),
    SINGLE("macroman", QG_DIALECT_MYSQL, "macroman\0"),
    SINGLE("geostd8", QG_DIALECT_MYSQL, "geostd8\0"),
};

/* PG: drop every non-alphanumeric byte and lower-case; MySQL: lower-case. */
static bool normalize_name(qg_dialect dialect, const char *name, char *out, size_t cap)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        if (dialect == QG_DIALECT_POSTGRES && !qg_ascii_is_alnum(*p))
            continue;
        if (n + 1 >= cap)
            return false;
        out[n++] = (char)qg_ascii_lower(*p);
    }
    out[n] = '\0';
    return n > 0;
}

/* Servers report canonical names, and a connection keeps its encoding for
 * long: the last hits per dialect answer most look-ups in a strcmp or two,
 * also where a program's connections use different encodings in turn. */
#define FOUND_KEPT 4
static const qg_encoding *last_found[2][FOUND_KEPT];
static unsigned found_next[2];

static const qg_encoding *find_canonical(qg_dialect dialect, const char *name)
{
    for (size_t i = 0; i < sizeof encodings / sizeof encodings[0]; i++) {
        const qg_encoding *enc = &encodings[i];
        if (enc->dialect == dialect && enc->name[0] == name[0] && strcmp(enc->name, name) == 0)
            return enc;
    }
    return NULL;
}

static const qg_encoding *find_alias(qg_dialect dialect, const char *name)
{
    char key[64];
    if (!normalize_name(dialect, name, key, sizeof key))
        return NULL;
    for (size_t i = 0; i < sizeof encodings / sizeof encodings[0]; i++) {
        const qg_encoding *enc = &encodings[i];
        if (enc->dialect != dialect)
            continue;
        for (const char *alias = enc->aliases; *alias; alias += strlen(alias) + 1)
            if (strcmp(alias, key) == 0)
                return enc;
    }
    return NULL;
}

QG_HOT const qg_encoding *qg_encoding_find(qg_dialect dialect, const char *name)
{
    if (!name || (unsigned)dialect > QG_DIALECT_MYSQL)
        return NULL;
    for (unsigned i = 0; i < FOUND_KEPT; i++) {
        const qg_encoding *kept = __atomic_load_n(&last_found[dialect][i], __ATOMIC_RELAXED);
        if (kept && strcmp(kept->name, name) == 0)
            return kept;
    }
    const qg_encoding *enc = find_canonical(dialect, name);
    if (!enc)
        enc = find_alias(dialect, name);
    if (enc) {
        unsigned slot = __atomic_fetch_add(&found_next[dialect], 1, __ATOMIC_RELAXED) % FOUND_KEPT;
        __atomic_store_n(&last_found[dialect][slot], enc, __ATOMIC_RELAXED);
    }
    return enc;
}

const char *qg_encoding_name(const qg_encoding *enc)
{
    return enc->name;
}

bool qg_encoding_has_ascii_trail(const qg_encoding *enc)
{
    return enc->ascii_trail;
}

QG_HOT bool qg_encoding_is_single_byte(const qg_encoding *enc)
{
    return enc->forms == NULL;
}

size_t qg_encoding_char_len(const qg_encoding *enc, const unsigned char *p, size_t avail)
{
    return encoding_char_len(enc, p, avail);
}

/* MySQL's single-byte sets whose ctype tables call some high bytes space
 * or control (measured on MariaDB 10.11: SELECT 1 --<byte>, 2 gives one
 * column). */
static const struct {
    const char *charset, *bytes;
} dash_spaces[] = {
    {"latin1", "\xa0"},
    {"latin2", "\xa0"},
    {"latin5", "\xa0"},
    {"latin7", "\x81\x83\x88\x8a\x8c\x90\x98\x9a\x9c\x9f\xa0\xa1\xa5"},
    {"cp1250", "\x80\x81\x83\x88\x90\x98\xa0"},
    {"cp850", "\xff"},
    {"cp852", "\xff"},
    {"cp866", "\xff"},
    {"keybcs2", "\xff"},
    {"dec8", "\xa0"},
    {"greek", "\xa0"},
    {"armscii8", "\xa0"},
    {"geostd8", "\xa0"},
    {"hebrew", "\xa0\xfd\xfe"},
    {"macroman", "\x80\xcb\xe5"},
    {"hp8", "\x80\x81\x82\x83\x84\x85\x86\x87\x88\x89\x8a\x8b\x8c\x8d\x8e\x8f"
            "\x90\x91\x92\x93\x94\x95\x96\x97\x98\x99\x9a\x9b\x9c\x9d\x9e\x9f"
            "\xa0\xb1\xb2\xf2\xf3\xf4\xf5\xff"},
};

bool qg_encoding_dash_space(const qg_encoding *enc, unsigned char c)
{
    if (enc->dialect != QG_DIALECT_MYSQL || c < 0x80)
        return false;
    for (size_t i = 0; i < sizeof dash_spaces / sizeof dash_spaces[0]; i++)
        if (strcmp(enc->name, dash_spaces[i].charset) == 0)
            return strchr(dash_spaces[i].bytes, c) != NULL;
    return false;
}

/* ------------------------------------------------------- quoted-text DFA */

#define ENCODING_COUNT (sizeof encodings / sizeof encodings[0])
#define DFA_MID_STATES 7 /* states 1..7 lie inside a character */

/* A state inside a character: form `form`, next byte `at` (1-based); the
 * alternative form is tried at the first following byte only. */
typedef struct dfa_state {
    uint8_t form, at;
} dfa_state;

/* Each automaton is built at the first check in its encoding, not at
 * start-up: every process the shim is preloaded into would pay for all of
 * them, database or not. */
enum { DFA_UNBUILT, DFA_BUILDING, DFA_BUILT, DFA_NONE };
QG_FAR_BSS static encoding_dfa_t dfas[ENCODING_COUNT];
static unsigned char dfa_state_of[ENCODING_COUNT];

/* Two states are one when the same byte masks remain to be matched. */
static bool same_rest(const qg_encoding *enc, dfa_state a, dfa_state b)
{
    const mb_form *fa = &enc->forms[a.form], *fb = &enc->forms[b.form];
    if (fa->len - a.at != fb->len - b.at)
        return false;
    if ((a.at == 1 && fa->alt) || (b.at == 1 && fb->alt))
        return a.form == b.form && a.at == b.at;
    for (unsigned i = 0; i < (unsigned)(fa->len - a.at); i++)
        if (fa->trail[a.at - 1 + i] != fb->trail[b.at - 1 + i])
            return false;
    return true;
}

/* Index (1..DFA_MID_STATES) of the state, added when new; 0 when full. */
static unsigned state_index(const qg_encoding *enc, dfa_state *states, unsigned *count,
                            dfa_state want)
{
    for (unsigned i = 0; i < *count; i++)
        if (same_rest(enc, states[i], want))
            return i + 1;
    if (*count == DFA_MID_STATES)
        return 0;
    states[(*count)++] = want;
    return *count;
}

enum { STATE_STOP = 8, STATE_ERROR = 9 };

/* Where byte b leads from inside a character: a state index. */
static unsigned after_trail(const qg_encoding *enc, dfa_state st, unsigned char b,
                            dfa_state *states, unsigned *count, bool *full)
{
    const mb_form *form = &enc->forms[st.form];
    if (enc->trail[b] & form->trail[st.at - 1]) {
        if (st.at + 1 == form->len)
            return 0;
        unsigned i = state_index(enc, states, count, (dfa_state){st.form, (uint8_t)(st.at + 1)});
        *full |= i == 0;
        return i;
    }
    if (st.at == 1 && form->alt) {
        dfa_state alt = {(uint8_t)(form->alt - L_FORM), 1};
        if (enc->forms[alt.form].alt)
            *full = true; /* chains of alternatives: not modelled */
        else
            return after_trail(enc, alt, b, states, count, full);
    }
    return STATE_ERROR;
}

static bool quoting_byte(unsigned b)
{
    return b == '\'' || b == '"' || b == '\\';
}

/* States 0..count are found first (0 between characters).  With ASCII
 * trail bytes each has a twin, index + count + 1, entered for good once a
 * trail byte was a quote or backslash: the run is then ambiguous. */
static bool build_dfa(const qg_encoding *enc, encoding_dfa_t *dfa)
{
    dfa_state states[DFA_MID_STATES];
    uint8_t next[DFA_MID_STATES + 1][256];
    unsigned count = 0;
    bool full = false;
    for (unsigned b = 0; b < 256; b++) {
        uint8_t cls = enc->lead[b];
        unsigned to = STATE_ERROR;
        if (b == 0 || quoting_byte(b) || b == '`')
            to = STATE_STOP;
        else if (cls == L_ASCII || cls == L_SINGLE)
            to = 0;
        else if (cls >= L_FORM) {
            to = state_index(enc, states, &count, (dfa_state){(uint8_t)(cls - L_FORM), 1});
            full |= to == 0;
        }
        next[0][b] = (uint8_t)to;
    }
    /* States are found while rows are filled: go on until none is new. */
    for (unsigned done = 0; done < count && !full; done++)
        for (unsigned b = 0; b < 256; b++)
            next[done + 1][b] = (uint8_t)after_trail(enc, states[done], (unsigned char)b, states,
                                                     &count, &full);
    unsigned twin = enc->ascii_trail ? count + 1 : 0;
    if (full || count + twin > DFA_MID_STATES)
        return false;
    for (unsigned b = 0; b < 256; b++) {
        uint64_t row = (uint64_t)DFA_STOP << DFA_STOP | (uint64_t)DFA_ERROR << DFA_ERROR;
        for (unsigned from = 0; from <= count; from++) {
            unsigned to = next[from][b];
            bool mid = to < STATE_STOP;
            unsigned to_twin = mid && twin ? to + twin : to;
            if (mid && twin && from > 0 && quoting_byte(b))
                to = to_twin; /* a trail byte that looks like quoting */
            row |= (uint64_t)(to * DFA_BITS) << (from * DFA_BITS);
            if (twin)
                row |= (uint64_t)(to_twin * DFA_BITS) << ((from + twin) * DFA_BITS);
        }
        dfa->rows[b] = row;
    }
    dfa->ambiguous = twin * DFA_BITS;
    dfa->quote_trail = enc->trail['\''] != 0;
    return true;
}

/* The nibble rows of a byte set: one bit per distinct set of low nibbles
 * that a high nibble takes.  False when that needs more than 8 bits. */
static bool nibble_rows(const bool in[256], nibble_set *set)
{
    uint16_t lows_of[8] = {0};
    unsigned count = 0;
    memset(set, 0, sizeof *set);
    for (unsigned hi = 0; hi < 16; hi++) {
        uint16_t lows = 0;
        for (unsigned lo = 0; lo < 16; lo++)
            lows |= (uint16_t)(in[hi << 4 | lo] << lo);
        if (!lows)
            continue;
        unsigned k = 0;
        while (k < count && lows_of[k] != lows)
            k++;
        if (k == count) {
            if (count == 8)
                return false;
            lows_of[count++] = lows;
        }
        set->high[hi] |= (unsigned char)(1u << k);
        for (unsigned lo = 0; lo < 16; lo++)
            if ((lows >> lo) & 1)
                set->low[lo] |= (unsigned char)(1u << k);
    }
    return true;
}

/* The state a byte leads to from `from`, twins (ambiguous) read as the
 * state they are twins of. */
static unsigned plain_next(const encoding_dfa_t *dfa, unsigned from, unsigned b)
{
    unsigned to = (dfa->rows[b] >> from) & 63;
    return dfa->ambiguous && to >= dfa->ambiguous && to < DFA_STOP ? to - dfa->ambiguous : to;
}

/* Whether the bytes that lead on from `from` (to neither DFA_STOP nor
 * DFA_ERROR) are exactly `set`, all to one state, *to. */
static bool set_leads_to(const encoding_dfa_t *dfa, unsigned from, const bool set[256],
                         unsigned *to)
{
    bool first = true;
    for (unsigned b = 0; b < 256; b++) {
        unsigned next = plain_next(dfa, from, b);
        bool on = next < DFA_STOP;
        if (on != set[b] || (on && !first && next != *to))
            return false;
        if (on) {
            *to = next;
            first = false;
        }
    }
    return !first;
}

/* The pair reading of an automaton (encoding_dfa.pairs), from its rows:
 * a lead leads from between characters to inside one, the same state for
 * every lead (after_lead), and a trail from there back (0, or `ambiguous`
 * after a trail that looks like quoting).  GB18030's four bytes are two
 * pairs, the second byte of each a digit: the digits lead on from
 * after_lead (to after_digit), a lead from there (to after_digit_lead),
 * and a digit from there back between characters. */
static void build_pairs(encoding_dfa_t *dfa)
{
    bool lead[256], trail[256], single[256], digit[256];
    bool trails = false, digits = false, one_state = true;
    unsigned after_lead = 0, after_digit = 0;
    for (unsigned b = 0; b < 256; b++) {
        unsigned to = dfa->rows[b] & 63;
        lead[b] = to > 0 && to < DFA_STOP;
        single[b] = b >= 0x80 && to == 0;
        if (lead[b]) {
            one_state &= !after_lead || to == after_lead;
            after_lead = to;
        }
    }
    for (unsigned t = 0; t < 256; t++) {
        unsigned to = plain_next(dfa, after_lead, t);
        trail[t] = after_lead && to == 0;
        digit[t] = after_lead && to > 0 && to < DFA_STOP;
        trails |= trail[t];
        if (digit[t]) {
            one_state &= !digits || to == after_digit;
            after_digit = to;
            digits = true;
        }
    }
    dfa->after_lead = after_lead;
    dfa->after_digit = after_digit;
    dfa->pairs = trails && one_state && nibble_rows(lead, &dfa->lead) &&
                 nibble_rows(trail, &dfa->trail) && nibble_rows(single, &dfa->single);
    if (digits && dfa->pairs) {
        /* after_digit must take exactly the leads on, to after_digit_lead,
         * and that exactly the digits back between characters */
        unsigned back = 0;
        dfa->pairs = set_leads_to(dfa, after_digit, lead, &dfa->after_digit_lead) &&
                     dfa->after_digit_lead &&
                     set_leads_to(dfa, dfa->after_digit_lead, digit, &back) && back == 0 &&
                     nibble_rows(digit, &dfa->digit);
    }
    dfa->quads = dfa->pairs && digits;
}

/* The byte pairs that are wrong in a UTF-8 (encoding_dfa.utf8), one bit
 * each, every one a product of nibble sets: the byte before (its high and
 * low nibble) and the byte (its high nibble).  Which surrogates and how
 * long a character may be come from the encoding's tables. */
enum { ANY_NIBBLE = 0xffff, ASCII_NIBBLES = 0x00ff, CONT_NIBBLES = 0x0f00, LEAD_NIBBLES = 0xf000 };
static void build_utf8(const qg_encoding *enc, encoding_dfa_t *dfa)
{
    bool surrogates = encoding_char_len(enc, (const unsigned char *)"\xed\xa0\x80", 3) == 3;
    bool four = encoding_char_len(enc, (const unsigned char *)"\xf0\x90\x80\x80", 4) == 4;
    const struct {
        uint16_t before_high, before_low, high;
    } wrong[8] = {
        {LEAD_NIBBLES, ANY_NIBBLE, ASCII_NIBBLES | LEAD_NIBBLES}, /* a lead cut short */
        {ASCII_NIBBLES, ANY_NIBBLE, CONT_NIBBLES},                /* a continuation alone */
        {1u << 0xc, 0x0003, CONT_NIBBLES},                        /* C0, C1: overlong */
        {1u << 0xe, 0x0001, 0x0300},                              /* E0 80-9F: overlong */
        {surrogates ? 0 : 1u << 0xe, 0x2000, 0x0c00},             /* ED A0-BF: surrogate */
        {1u << 0xf, four ? 0xffe1 : ANY_NIBBLE, four ? 0x0100 : CONT_NIBBLES}, /* F0 80-8F, F5-FF */
        {1u << 0xf, 0xfff0, 0x0e00},                              /* F4-FF 90-BF: too large */
        {CONT_NIBBLES, ANY_NIBBLE, CONT_NIBBLES}, /* continuation after continuation: UTF8_CONTS */
    };
    for (unsigned bit = 0; bit < 8; bit++)
        for (unsigned n = 0; n < 16; n++) {
            unsigned char mask = (unsigned char)(1u << bit);
            dfa->utf8_before_high[n] |= (wrong[bit].before_high >> n) & 1 ? mask : 0;
            dfa->utf8_before_low[n] |= (wrong[bit].before_low >> n) & 1 ? mask : 0;
            dfa->utf8_high[n] |= (wrong[bit].high >> n) & 1 ? mask : 0;
        }
    dfa->utf8 = true;
}

/* Builds the automaton of encodings[i] unless another thread is at it;
 * until it is built, callers read without one (the same answers, slower). */
QG_COLD static const encoding_dfa_t *build_dfa_once(size_t i)
{
    unsigned char expected = DFA_UNBUILT;
    if (!__atomic_compare_exchange_n(&dfa_state_of[i], &expected, DFA_BUILDING, false,
                                     __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        return NULL;
    if (!encodings[i].forms || !build_dfa(&encodings[i], &dfas[i])) {
        __atomic_store_n(&dfa_state_of[i], DFA_NONE, __ATOMIC_RELEASE);
        return NULL;
    }
    build_pairs(&dfas[i]);
    if (encodings[i].utf8)
        build_utf8(&encodings[i], &dfas[i]);
    __atomic_store_n(&dfa_state_of[i], DFA_BUILT, __ATOMIC_RELEASE);
    return &dfas[i];
}

QG_HOT const encoding_dfa_t *encoding_dfa(const qg_encoding *enc)
{
    size_t i = (size_t)(enc - encodings);
    unsigned char state = __atomic_load_n(&dfa_state_of[i], __ATOMIC_ACQUIRE);
    if (state == DFA_BUILT)
        return &dfas[i];
    return state == DFA_UNBUILT ? build_dfa_once(i) : NULL;
}

/* ------------------------------------------------------------ conversions */

bool qg_encoding_pg_client_only(const qg_encoding *enc)
{
    static const char *const client_only[] = {"SJIS",    "SHIFT_JIS_2004", "BIG5", "GBK",
                                              "UHC",     "GB18030",        "JOHAB"};
    for (size_t i = 0; i < sizeof client_only / sizeof client_only[0]; i++)
        if (enc->dialect == QG_DIALECT_POSTGRES && strcmp(enc->name, client_only[i]) == 0)
            return true;
    return false;
}

/* The client characters PostgreSQL's conversions turn into ASCII, measured
 * over every character of every client encoding against every server
 * encoding it converts to (tests/t/18-diff-conversions-pg.t, which fails
 * when a conversion makes ASCII this table does not list). */
static const qg_ascii_conversion sjis2004_ascii[] = {
    {{0x81, 0x5f}, 2, '\\'},
    {{0x81, 0xb0}, 2, '~'},
    {{0}, 0, 0},
};

static const struct {
    const char *client, *server;
    const qg_ascii_conversion *table;
} ascii_conversions[] = {
    {"SHIFT_JIS_2004", "UTF8", sjis2004_ascii},
};
#define ASCII_CONVERSION_COUNT (sizeof ascii_conversions / sizeof ascii_conversions[0])

bool qg_encoding_converts_to_ascii(const qg_encoding *client)
{
    for (size_t i = 0; i < ASCII_CONVERSION_COUNT; i++)
        if (strcmp(ascii_conversions[i].client, client->name) == 0)
            return true;
    return false;
}

const qg_ascii_conversion *qg_conversion_to_ascii(const qg_encoding *client, const char *server)
{
    for (size_t i = 0; server && i < ASCII_CONVERSION_COUNT; i++)
        if (strcmp(ascii_conversions[i].client, client->name) == 0 &&
            strcmp(ascii_conversions[i].server, server) == 0)
            return ascii_conversions[i].table;
    return NULL;
}

/* The table's entry for the character of n bytes at p, or NULL. */
static const qg_ascii_conversion *converted(const qg_ascii_conversion *table,
                                            const unsigned char *p, size_t n)
{
    for (; table->len; table++)
        if (table->len == n && memcmp(table->bytes, p, n) == 0)
            return table;
    return NULL;
}

/* Walks the characters of the client's text as the server's conversion
 * does (an invalid byte alone: the conversion rejects the query there, and
 * the checker reports it) and counts the converted ones; with `text`, also
 * writes the view there and the converted characters to `chars`, and the
 * view's length to *view_len. */
static size_t walk_converted(const qg_encoding *client, const qg_ascii_conversion *table,
                             const unsigned char *s, size_t len, char *text,
                             qg_converted_char *chars, size_t *view_len)
{
    size_t count = 0, view = 0;
    for (size_t pos = 0; pos < len;) {
        size_t n = s[pos] < 0x80 ? 1 : encoding_char_len(client, s + pos, len - pos);
        if (n == 0)
            n = 1;
        const qg_ascii_conversion *c = s[pos] < 0x80 ? NULL : converted(table, s + pos, n);
        if (text && c) {
            chars[count] = (qg_converted_char){view, pos, pos + n};
            text[view++] = (char)c->ascii;
        } else if (text) {
            memcpy(text + view, s + pos, n);
            view += n;
        }
        count += c != NULL;
        pos += n;
    }
    if (view_len)
        *view_len = view;
    return count;
}

/* Whether the bytes of some character in the table occur in the text at
 * all: where none does, no character converts, and nothing need be walked. */
static bool may_hold_converted(const qg_ascii_conversion *table, const char *sql, size_t len)
{
    for (; table->len; table++)
        if (memmem(sql, len, table->bytes, table->len))
            return true;
    return false;
}

size_t qg_server_view_count(const qg_encoding *client, const qg_ascii_conversion *table,
                            const char *sql, size_t len)
{
    if (!table || !may_hold_converted(table, sql, len))
        return 0;
    return walk_converted(client, table, (const unsigned char *)sql, len, NULL, NULL, NULL);
}

void qg_server_view_build(const qg_encoding *client, const qg_ascii_conversion *table,
                          const char *sql, size_t len, char *text, qg_converted_char *chars,
                          qg_server_view *out)
{
    static const qg_ascii_conversion none[] = {{{0}, 0, 0}};
    out->text = text;
    out->chars = chars;
    out->count = walk_converted(client, table ? table : none, (const unsigned char *)sql, len,
                                text, chars, &out->len);
}
