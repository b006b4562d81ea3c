/* Encoding tables: names, aliases and validity rules, byte by byte. */
#include <stdint.h>
#include <string.h>

#include "encoding_tables.h"
#include "quoteguard.h"
#include "tap.h"

typedef struct seq_case {
    qg_dialect dialect;
    const char *encoding;
    const char *bytes;
    size_t expect; /* char length, 0 = invalid */
} seq_case;

#define PG QG_DIALECT_POSTGRES
#define MY QG_DIALECT_MYSQL

static const seq_case seqs[] = {
    {PG, "UTF8", "a", 1},           {PG, "UTF8", "\xc3\xa9", 2},      {PG, "UTF8", "\xc1\xbf", 0},
    {PG, "UTF8", "\xc8'", 0},       {PG, "UTF8", "\xe0\xa0\x80", 3}, {PG, "UTF8", "\xe0\x9f\xbf", 0},
    {PG, "UTF8", "\xed\x9f\xbf", 3}, {PG, "UTF8", "\xed\xa0\x80", 0}, {PG, "UTF8", "\xf0\x90\x80\x80", 4},
    {PG, "UTF8", "\xf0\x8f\xbf\xbf", 0}, {PG, "UTF8", "\xf4\x8f\xbf\xbf", 4},
    {PG, "UTF8", "\xf4\x90\x80\x80", 0}, {PG, "UTF8", "\xf5\x80\x80\x80", 0},
    {PG, "UTF8", "\x80", 0},        {PG, "UTF8", "\xe6\x97", 0},
    {PG, "SJIS", "\x95\x5c", 2},    {PG, "SJIS", "\x83\x5c", 2},      {PG, "SJIS", "\xb1", 1},
    {PG, "SJIS", "\x80", 0},        {PG, "SJIS", "\xa0", 0},          {PG, "SJIS", "\xfd\x40", 0},
    {PG, "SJIS", "\x81\x7f", 0},    {PG, "SJIS", "\x81\x27", 0},      {PG, "SJIS", "\xe0\xfc", 2},
    {PG, "SHIFT_JIS_2004", "\x95\x5c", 2},
    {PG, "BIG5", "\xa5\x5c", 2},    {PG, "BIG5", "\xa4\x40", 2},      {PG, "BIG5", "\xa4\x27", 0},
    {PG, "BIG5", "\xa4\x80", 0},    {PG, "BIG5", "\x81\x40", 0},
    {PG, "GBK", "\xbf\x5c", 2},     {PG, "GBK", "\x81\x40", 2},       {PG, "GBK", "\xbf\x27", 0},
    {PG, "GBK", "\x80", 0},         {PG, "GBK", "\xff\x40", 0},
    {PG, "UHC", "\x81\x41", 2},     {PG, "UHC", "\x81\x5c", 0},       {PG, "UHC", "\xb0\xa1", 2},
    {PG, "GB18030", "\x81\x5c", 2}, {PG, "GB18030", "\x81\x30\x81\x30", 4},
    {PG, "GB18030", "\x81\x30\x81", 0}, {PG, "GB18030", "\x81\x30\x20\x30", 0},
    {PG, "GB18030", "\x80", 0},
    {PG, "EUC_JP", "\xa4\xa2", 2},  {PG, "EUC_JP", "\x8e\xb1", 2},    {PG, "EUC_JP", "\x8e\xe0", 0},
    {PG, "EUC_JP", "\x8f\xa1\xa1", 3}, {PG, "EUC_JP", "\xa4\x5c", 0}, {PG, "EUC_JP", "\x85\xa1", 0},
    {PG, "EUC_JIS_2004", "\xa4\xa2", 2},
    {PG, "EUC_KR", "\xb0\xa1", 2},  {PG, "EUC_KR", "\x8e\xa1", 0},
    {PG, "EUC_CN", "\xb0\xa1", 2},  {PG, "EUC_CN", "\xb0\x41", 0},
    {PG, "EUC_TW", "\x8e\xa1\xa1\xa1", 4}, {PG, "EUC_TW", "\x8e\xa8\xa1\xa1", 0},
    {PG, "EUC_TW", "\x8f\xa1\xa1", 0}, {PG, "EUC_TW", "\x90\xa1", 2},
    {PG, "MULE_INTERNAL", "\x81\xe9", 2}, {PG, "MULE_INTERNAL", "\x81\x41", 0},
    {PG, "MULE_INTERNAL", "\x92\xb0\xa1", 3}, {PG, "MULE_INTERNAL", "\x9c\xf5\xa1\xa1", 4},
    {PG, "MULE_INTERNAL", "\xe9", 1},
    {PG, "JOHAB", "\x88\xa1", 2},   {PG, "JOHAB", "\x88\x61", 0},
    {PG, "LATIN1", "\xe9", 1},      {PG, "WIN1252", "\x80", 1},       {PG, "SQL_ASCII", "\xff", 1},
    {PG, "LATIN1", "", 0},
    {MY, "gbk", "\xbf\x5c", 2},     {MY, "gbk", "\xbf\x27", 0},       {MY, "sjis", "\x95\x5c", 2},
    {MY, "cp932", "\x81\x5c", 2},   {MY, "big5", "\xa5\x5c", 2},      {MY, "big5", "\xfa\x40", 0},
    {MY, "euckr", "\x81\x41", 2},   {MY, "euckr", "\x81\x5c", 0},     {MY, "gb2312", "\xb0\xa1", 2},
    {MY, "gb2312", "\xf8\xa1", 0},  {MY, "ujis", "\x8f\xa1\xa1", 3},  {MY, "eucjpms", "\xa4\xa2", 2},
    {MY, "utf8mb4", "\xed\xa0\x80", 3}, {MY, "utf8mb4", "\xf0\x9f\x98\x80", 4},
    {MY, "utf8mb3", "\xf0\x9f\x98\x80", 0}, {MY, "utf8", "\xe6\x97\xa5", 3},
    {MY, "gb18030", "\x81\x30\x81\x30", 4}, {MY, "latin1", "\xff", 1}, {MY, "binary", "\x00", 0},
};

static void test_sequences(void)
{
    for (size_t i = 0; i < sizeof seqs / sizeof seqs[0]; i++) {
        const seq_case *c = &seqs[i];
        const qg_encoding *enc = qg_encoding_find(c->dialect, c->encoding);
        if (!tap_ok(enc != NULL, "%s exists", c->encoding))
            continue;
        size_t len = strlen(c->bytes);
        if (c->dialect == MY && strcmp(c->encoding, "binary") == 0)
            len = 1; /* the NUL byte itself */
        size_t got = qg_encoding_char_len(enc, (const unsigned char *)c->bytes, len);
        char hex[32] = "";
        for (size_t j = 0; j < len && j < 8; j++)
            snprintf(hex + 3 * j, 4, "%02x ", (unsigned char)c->bytes[j]);
        tap_ok(got == c->expect, "%s [%s] -> %zu (want %zu)", c->encoding, hex, got, c->expect);
    }
}

static void test_names(void)
{
    static const struct {
        qg_dialect dialect;
        const char *alias;
        const char *canonical;
    } names[] = {
        {PG, "Shift_JIS", "SJIS"},     {PG, "shift-jis", "SJIS"},      {PG, "mskanji", "SJIS"},
        {PG, "WIN932", "SJIS"},        {PG, "windows-932", "SJIS"},    {PG, "utf-8", "UTF8"},
        {PG, "Unicode", "UTF8"},       {PG, "ISO-8859-1", "LATIN1"},   {PG, "iso_8859_15", "LATIN9"},
        {PG, "win936", "GBK"},         {PG, "windows949", "UHC"},      {PG, "win950", "BIG5"},
        {PG, "euc-jp", "EUC_JP"},      {PG, "koi8", "KOI8R"},          {PG, "alt", "WIN866"},
        {PG, "TCVN", "WIN1258"},       {PG, "win", "WIN1251"},         {PG, "shift_jis_2004", "SHIFT_JIS_2004"},
        {PG, "sql_ascii", "SQL_ASCII"}, {PG, "mule_internal", "MULE_INTERNAL"},
        {PG, "iso8859-5", "ISO_8859_5"}, {PG, "GB18030", "GB18030"},  {PG, "JOHAB", "JOHAB"},
        {MY, "GBK", "gbk"},            {MY, "utf8", "utf8mb3"},        {MY, "utf8mb4", "utf8mb4"},
        {MY, "cp932", "cp932"},        {MY, "Latin1", "latin1"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const qg_encoding *enc = qg_encoding_find(names[i].dialect, names[i].alias);
        tap_ok(enc && strcmp(qg_encoding_name(enc), names[i].canonical) == 0, "%s -> %s",
               names[i].alias, names[i].canonical);
    }
    tap_ok(qg_encoding_find(PG, "klingon") == NULL, "unknown PG name");
    tap_ok(qg_encoding_find(PG, "") == NULL, "empty name");
    tap_ok(qg_encoding_find(PG, "---") == NULL, "punctuation only");
    tap_ok(qg_encoding_find(MY, "shift_jis") == NULL, "MySQL names are exact");
    tap_ok(qg_encoding_find(MY, "ucs2") == NULL, "ucs2 cannot be a client charset");
    static const char *const pg_all[] = {
        "SQL_ASCII", "UTF8", "EUC_JP", "EUC_JIS_2004", "EUC_CN", "EUC_KR", "EUC_TW",
        "MULE_INTERNAL", "LATIN1", "LATIN2", "LATIN3", "LATIN4", "LATIN5", "LATIN6", "LATIN7",
        "LATIN8", "LATIN9", "LATIN10", "ISO_8859_5", "ISO_8859_6", "ISO_8859_7", "ISO_8859_8",
        "WIN866", "WIN874", "WIN1250", "WIN1251", "WIN1252", "WIN1253", "WIN1254", "WIN1255",
        "WIN1256", "WIN1257", "WIN1258", "KOI8R", "KOI8U", "SJIS", "SHIFT_JIS_2004", "BIG5",
        "GBK", "UHC", "GB18030", "JOHAB"};
    size_t found = 0;
    for (size_t i = 0; i < sizeof pg_all / sizeof pg_all[0]; i++) {
        const qg_encoding *enc = qg_encoding_find(PG, pg_all[i]);
        found += enc && strcmp(qg_encoding_name(enc), pg_all[i]) == 0;
    }
    tap_ok(found == sizeof pg_all / sizeof pg_all[0], "all %zu PG client encodings by canonical name",
           found);
    static const char *const trail[] = {"SJIS", "SHIFT_JIS_2004", "BIG5", "GBK", "UHC", "GB18030"};
    for (size_t i = 0; i < sizeof trail / sizeof trail[0]; i++)
        tap_ok(qg_encoding_has_ascii_trail(qg_encoding_find(PG, trail[i])), "%s has ASCII trail bytes",
               trail[i]);
    tap_ok(!qg_encoding_has_ascii_trail(qg_encoding_find(PG, "EUC_JP")), "EUC_JP has none");
    tap_ok(!qg_encoding_has_ascii_trail(qg_encoding_find(PG, "JOHAB")), "PG JOHAB has none");
    tap_ok(qg_encoding_is_single_byte(qg_encoding_find(PG, "KOI8U")), "KOI8U single-byte");
}

/* Every valid character of a 2-byte encoding is exactly what the ranges allow. */
static void test_exhaustive_pairs(void)
{
    const qg_encoding *sjis = qg_encoding_find(PG, "SJIS");
    const qg_encoding *gbk = qg_encoding_find(MY, "gbk");
    size_t sjis_bad = 0, gbk_bad = 0;
    for (unsigned a = 0x80; a <= 0xff; a++)
        for (unsigned b = 0; b <= 0xff; b++) {
            unsigned char p[2] = {(unsigned char)a, (unsigned char)b};
            bool sjis_lead = (a >= 0x81 && a <= 0x9f) || (a >= 0xe0 && a <= 0xfc);
            bool sjis_tail = (b >= 0x40 && b <= 0x7e) || (b >= 0x80 && b <= 0xfc);
            size_t want = (a >= 0xa1 && a <= 0xdf) ? 1 : (sjis_lead && sjis_tail) ? 2 : 0;
            sjis_bad += qg_encoding_char_len(sjis, p, 2) != want;
            bool gbk_ok = a >= 0x81 && a <= 0xfe && ((b >= 0x40 && b <= 0x7e) || (b >= 0x80 && b <= 0xfe));
            gbk_bad += qg_encoding_char_len(gbk, p, 2) != (gbk_ok ? 2u : 0u);
        }
    tap_ok(sjis_bad == 0, "SJIS: all 32768 high pairs as ISSJISHEAD/ISSJISTAIL say (%zu off)", sjis_bad);
    tap_ok(gbk_bad == 0, "gbk: all 32768 high pairs as the ranges say (%zu off)", gbk_bad);
}

typedef enum run_end { RUN_END, RUN_STOP, RUN_INVALID } run_end;

/* The quoted text at p (up to a byte that ends it between characters),
 * read character by character: how it ends, where, and whether a trail
 * byte looked like a quote or backslash. */
static run_end run_by_chars(const qg_encoding *enc, const unsigned char *p, size_t len,
                            size_t *at, bool *ambiguous)
{
    *ambiguous = false;
    for (size_t i = 0; i < len;) {
        if (p[i] == 0 || p[i] == '\'' || p[i] == '"' || p[i] == '`' || p[i] == '\\') {
            *at = i;
            return RUN_STOP;
        }
        size_t n = qg_encoding_char_len(enc, p + i, len - i);
        if (n == 0)
            return RUN_INVALID;
        for (size_t k = 1; k < n; k++)
            *ambiguous |= p[i + k] == '\'' || p[i + k] == '"' || p[i + k] == '\\';
        i += n;
    }
    *at = len;
    return RUN_END;
}

/* The same by the automaton. */
static run_end run_by_dfa(const encoding_dfa_t *dfa, const unsigned char *p, size_t len,
                          size_t *at, bool *ambiguous)
{
    unsigned state = 0, before = 0;
    for (size_t i = 0; i < len; i++) {
        before = state;
        state = (unsigned)(dfa->rows[p[i]] >> state) & 63;
        if (state == DFA_ERROR)
            return RUN_INVALID;
        if (state == DFA_STOP) {
            *at = i;
            *ambiguous = before != 0;
            return RUN_STOP;
        }
    }
    *at = len;
    *ambiguous = state != 0;
    return state == 0 || state == dfa->ambiguous ? RUN_END : RUN_INVALID;
}

/* Every multibyte encoding has an automaton, and it reads random text
 * (lead, trail and quoting bytes over-represented) exactly as the
 * character-by-character reading does. */
static void test_dfa_matches_char_len(void)
{
    static const struct {
        qg_dialect dialect;
        const char *name;
    } multibyte[] = {
        {PG, "UTF8"},    {PG, "EUC_JP"}, {PG, "EUC_JIS_2004"}, {PG, "EUC_CN"}, {PG, "EUC_KR"},
        {PG, "EUC_TW"},  {PG, "MULE_INTERNAL"}, {PG, "SJIS"}, {PG, "SHIFT_JIS_2004"},
        {PG, "BIG5"},    {PG, "GBK"},    {PG, "UHC"},    {PG, "GB18030"}, {PG, "JOHAB"},
        {MY, "big5"},    {MY, "cp932"},  {MY, "sjis"},   {MY, "gbk"},     {MY, "gb18030"},
        {MY, "euckr"},   {MY, "gb2312"}, {MY, "ujis"},   {MY, "eucjpms"}, {MY, "utf8mb3"},
        {MY, "utf8mb4"},
    };
    static const unsigned char hot[] = {'\'', '"', '\\', '`', 0, 'a', '0', 0x30, 0x39, 0x40,
                                        0x5c, 0x7e, 0x80, 0x81, 0x8e, 0x8f, 0x9f, 0xa0, 0xa1,
                                        0xbf, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xfe, 0xff};
    uint32_t rng = 20261203;
    for (size_t e = 0; e < sizeof multibyte / sizeof multibyte[0]; e++) {
        const qg_encoding *enc = qg_encoding_find(multibyte[e].dialect, multibyte[e].name);
        const encoding_dfa_t *dfa = enc ? encoding_dfa(enc) : NULL;
        if (!tap_ok(dfa != NULL, "%s has a quoted-text automaton", multibyte[e].name))
            continue;
        size_t differ = 0, ends[3] = {0, 0, 0}, ambiguous_runs = 0;
        for (unsigned t = 0; t < 50000; t++) {
            unsigned char buf[24];
            rng = rng * 1103515245u + 12345u;
            size_t len = 1 + (rng >> 16) % sizeof buf;
            for (size_t i = 0; i < len; i++) {
                rng = rng * 1103515245u + 12345u;
                unsigned r = rng >> 8;
                buf[i] = (r & 3) ? (unsigned char)(0x80 | (r >> 2)) : (r & 4) ? hot[(r >> 3) % sizeof hot]
                                                                             : (unsigned char)(r >> 3);
            }
            size_t at_c = 0, at_d = 0;
            bool amb_c = false, amb_d = false;
            run_end c = run_by_chars(enc, buf, len, &at_c, &amb_c);
            run_end d = run_by_dfa(dfa, buf, len, &at_d, &amb_d);
            bool same = c == d && (c == RUN_INVALID || (at_c == at_d && amb_c == amb_d));
            if (!same && differ++ < 3)
                tap_ok(false, "%s: chars end %d at %zu amb %d, automaton %d at %zu amb %d",
                       multibyte[e].name, c, at_c, amb_c, d, at_d, amb_d);
            ends[c]++;
            ambiguous_runs += c != RUN_INVALID && amb_c;
        }
        tap_ok(differ == 0 && ends[RUN_END] && ends[RUN_STOP] && ends[RUN_INVALID],
               "%s: automaton agrees on 50000 runs (%zu end, %zu stop, %zu invalid, %zu ambiguous)",
               multibyte[e].name, ends[RUN_END], ends[RUN_STOP], ends[RUN_INVALID], ambiguous_runs);
    }
}

static bool in_set(const nibble_set *set, unsigned b)
{
    return (set->low[b & 15] & set->high[b >> 4]) != 0;
}

/* The pair reading's byte sets (encoding_dfa.pairs), against the
 * character-by-character reading: every character of more than one byte
 * has two (else no pair reading); a lead starts one, a trail ends one after
 * every lead, a high single byte is one. */
static void test_pair_sets(void)
{
    static const struct {
        qg_dialect dialect;
        const char *name;
        bool pairs;
    } cases[] = {
        {PG, "SJIS", true},    {PG, "BIG5", true},     {PG, "GBK", true},      {PG, "UHC", true},
        {PG, "EUC_KR", true},  {PG, "EUC_CN", true},   {PG, "UTF8", false},    {PG, "GB18030", true},
        {PG, "EUC_JP", false}, {MY, "sjis", true},     {MY, "cp932", true},    {MY, "big5", true},
        {MY, "gbk", true},     {MY, "euckr", true},    {MY, "gb18030", true},  {MY, "utf8mb4", false},
    };
    for (size_t e = 0; e < sizeof cases / sizeof cases[0]; e++) {
        const qg_encoding *enc = qg_encoding_find(cases[e].dialect, cases[e].name);
        const encoding_dfa_t *dfa = encoding_dfa(enc);
        if (!tap_ok(dfa && dfa->pairs == cases[e].pairs, "%s %s read as pairs", cases[e].name,
                    cases[e].pairs ? "is" : "is not") ||
            !cases[e].pairs)
            continue;
        size_t wrong = 0, leads = 0;
        for (unsigned b = 0; b < 256; b++) {
            unsigned char pair[2] = {(unsigned char)b, 0};
            bool lead = false, every = true;
            for (unsigned t = 0; t < 256; t++) {
                pair[1] = (unsigned char)t;
                lead |= encoding_char_len(enc, pair, 2) == 2;
            }
            bool single = b >= 0x80 && encoding_char_len(enc, pair, 1) == 1;
            leads += lead;
            wrong += lead != in_set(&dfa->lead, b) || single != in_set(&dfa->single, b);
            for (unsigned l = 0; l < 256; l++) {
                unsigned char bytes[2] = {(unsigned char)l, (unsigned char)b};
                bool is_lead = false;
                for (unsigned t = 0; t < 256 && !is_lead; t++) {
                    unsigned char probe[2] = {(unsigned char)l, (unsigned char)t};
                    is_lead = encoding_char_len(enc, probe, 2) == 2;
                }
                if (is_lead)
                    every &= encoding_char_len(enc, bytes, 2) == 2;
            }
            wrong += every != in_set(&dfa->trail, b);
        }
        tap_ok(wrong == 0 && leads > 50, "%s: lead (%zu), trail and single bytes as read", cases[e].name,
               leads);
    }
}

int main(void)
{
    test_dfa_matches_char_len();
    test_sequences();
    test_names();
    test_exhaustive_pairs();
    test_pair_sets();
    return tap_done();
}
