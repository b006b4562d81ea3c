/* Every implementation of the scans the CPU runs (the tables of
 * src/core/vectors.c), against the scalar reference on random text: each
 * table is complete; the quick scan settles only text the reference finds
 * clean; the checker, running each implementation, gives the reference's
 * verdict and findings and its lexer cuts the reference's tokens;
 * multibyte text reads as letters where it should; the character count
 * takes runs of whole characters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block_scalar.h"
#include "encoding_tables.h"
#include "lexer_internal.h"
#include "quoteguard.h"
#include "tap.h"

enum { ROUNDS = 400, MAX_TEXT = 300, MAX_TOKENS = 256 };

typedef struct setting {
    qg_dialect dialect;
    const char *encoding;
    unsigned flags;
} setting;

static const setting settings[] = {
    {QG_DIALECT_POSTGRES, "UTF8", QG_STD_STRINGS}, {QG_DIALECT_POSTGRES, "UTF8", 0},
    {QG_DIALECT_POSTGRES, "SJIS", 0},              {QG_DIALECT_POSTGRES, "GBK", QG_STD_STRINGS},
    {QG_DIALECT_MYSQL, "utf8mb4", 0},              {QG_DIALECT_MYSQL, "gbk", 0},
    {QG_DIALECT_MYSQL, "sjis", QG_NO_BACKSLASH_ESCAPES},
    {QG_DIALECT_MYSQL, "big5", QG_ANSI_QUOTES},
};

/* Text made of what the scans look for: quotes, escapes, comment openers,
 * prefixes, dollar signs, high bytes (lead and trail bytes of every
 * encoding above) and plain code. */
static const char *scan_piece(bool unused)
{
    static const char *const pieces[] = {
        "'", "''", "\"", "`", "\\", "\\'", "--", "#", "/*", "*/", "\n", " ", "x'", "b'",
        "E'", "U&'", "$$", "$a$", "$1", "SELECT ", "a", "1", "\x95\x5c", "\xbf\x27", "\x81",
        "\xe6\x97\xa5", "\xc8", "\xa4\x5c", "\x81\x30\x81\x30", ";", "abcdefghijklmnop"};
    (void)unused;
    return pieces[(size_t)rand() % (sizeof pieces / sizeof pieces[0])];
}

/* A text of random length below cap, of pieces from next(arg). */
static size_t text_of_pieces(char *out, size_t cap, const char *(*next)(bool), bool arg)
{
    size_t n = 0, want = (size_t)rand() % cap;
    while (n < want) {
        const char *p = next(arg);
        size_t len = strlen(p);
        if (n + len >= cap)
            break;
        memcpy(out + n, p, len);
        n += len;
    }
    out[n] = '\0';
    return n;
}

static size_t random_text(char *out, size_t cap)
{
    return text_of_pieces(out, cap, scan_piece, false);
}

static size_t lex_all(const qg_context *ctx, const char *sql, size_t len, qg_token *out)
{
    qg_lexer lx;
    qg_token tok;
    size_t n = 0;
    qg_lexer_init(&lx, ctx, sql, len, QG_READ_SERVER, NULL);
    while (qg_lexer_next(&lx, &tok))
        if (n < MAX_TOKENS)
            out[n++] = tok;
    return n;
}

static bool same_result(const qg_result *a, const qg_result *b)
{
    if (a->verdict != b->verdict || a->count != b->count)
        return false;
    unsigned kept = a->count < QG_MAX_FINDINGS ? a->count : QG_MAX_FINDINGS;
    for (unsigned i = 0; i < kept; i++)
        if (a->findings[i].reason != b->findings[i].reason ||
            a->findings[i].offset != b->findings[i].offset)
            return false;
    return true;
}

/* Whether `implementation` checks text as the reference does; the first
 * difference (none before: `earlier` 0) is shown. */
static bool checks_as_reference(int implementation, const qg_context *ctx, const char *text,
                                size_t len, int earlier)
{
    qg_result ref, got;
    qg_allow_vectors(QG_VECTORS_REFERENCE);
    qg_check(ctx, text, len, &ref);
    qg_allow_vectors(implementation);
    qg_check(ctx, text, len, &got);
    if (same_result(&ref, &got))
        return true;
    if (!earlier)
        tap_diag("%s: verdict %d (%u findings) against the reference's %d (%u): %s",
                 qg_vectors_name(implementation), (int)got.verdict, got.count, (int)ref.verdict,
                 ref.count, text);
    return false;
}

static void complete_tables(void)
{
    bool complete = true;
    for (int i = 0; i < QG_IMPLEMENTATIONS; i++) {
        const qg_scans *t = qg_scans_of(i);
        complete = complete && t->quick_scan && t->utf8_scan && t->pair_letters &&
                   t->quick_scan_letters && t->skip_quiet && t->count_chars;
    }
    tap_ok(complete, "every implementation's table has each scan");
    tap_ok(qg_scans_of(QG_VECTORS_WIDEST) == qg_scans_of(qg_cpu_vectors()),
           "an implementation the CPU cannot run is the widest it can (%s)",
           qg_vectors_name(qg_cpu_vectors()));
}

/* Each implementation against the reference, in the checker and alone. */
static void against_reference(int implementation)
{
    const qg_scans *scans = qg_scans_of(implementation);
    const char *name = qg_vectors_name(implementation);
    static char text[MAX_TEXT];
    static qg_token ref_tokens[MAX_TOKENS], tokens[MAX_TOKENS];
    int unsound = 0, verdicts = 0, cuts = 0, settled = 0;
    for (size_t s = 0; s < sizeof settings / sizeof settings[0]; s++) {
        qg_context ctx;
        qg_context_init(&ctx, settings[s].dialect,
                        qg_encoding_find(settings[s].dialect, settings[s].encoding), settings[s].flags);
        for (int round = 0; round < ROUNDS; round++) {
            size_t len = random_text(text, sizeof text);
            qg_result ref, got;
            qg_allow_vectors(QG_VECTORS_REFERENCE);
            qg_check(&ctx, text, len, &ref);
            size_t ref_n = lex_all(&ctx, text, len, ref_tokens);
            qg_allow_vectors(implementation);
            qg_check(&ctx, text, len, &got);
            size_t n = lex_all(&ctx, text, len, tokens);
            qg_quick_reading reading = scans->quick_scan(&ctx, text, len);
            bool quick = (reading == QG_QUICK_CLEAN || reading == QG_QUICK_DOUBLER) &&
                         !qg_pg_every_byte(&ctx, text, len);
            settled += quick;
            if (quick && ref.verdict != QG_VERDICT_CLEAN && !unsound++)
                tap_diag("%s settles %s/%s text the reference finds %u things in: %s", name,
                         settings[s].encoding, settings[s].flags ? "flags" : "plain", ref.count, text);
            if (!same_result(&ref, &got) && !verdicts++)
                tap_diag("%s: verdict %d (%u findings) against the reference's %d (%u): %s", name,
                         (int)got.verdict, got.count, (int)ref.verdict, ref.count, text);
            if ((n != ref_n || memcmp(tokens, ref_tokens, n * sizeof tokens[0]) != 0) && !cuts++)
                tap_diag("%s: %zu tokens against the reference's %zu: %s", name, n, ref_n, text);
        }
    }
    qg_allow_vectors(QG_VECTORS_WIDEST);
    tap_ok(!unsound, "%s: the quick scan settles only text the reference finds clean (%d settled)",
           name, settled);
    tap_ok(!verdicts, "%s: the checker gives the reference's verdict and findings", name);
    tap_ok(!cuts, "%s: the lexer cuts the reference's tokens", name);
}

/* Writes the text of one block-edge row: `tail` after `pad` bytes. */
typedef int (*edge_text)(char *text, size_t size, size_t pad, const char *tail);

/* Whether the implementation reads every text, one for each setting, tail
 * and padding up to past two blocks, as the reference does: one test, `what`
 * read as in the reference. */
static void block_ends_as_reference(int implementation, const setting *sets, size_t nsets,
                                    const char *const *tails, size_t ntails, edge_text write,
                                    const char *what)
{
    static char text[MAX_TEXT];
    int wrong = 0;
    for (size_t s = 0; s < nsets; s++) {
        qg_context ctx;
        qg_context_init(&ctx, sets[s].dialect, qg_encoding_find(sets[s].dialect, sets[s].encoding),
                        sets[s].flags);
        for (size_t t = 0; t < ntails; t++)
            for (size_t pad = 0; pad < 140; pad++) {
                int n = write(text, sizeof text, pad, tails[t]);
                wrong += !checks_as_reference(implementation, &ctx, text, (size_t)n, wrong);
            }
    }
    qg_allow_vectors(QG_VECTORS_WIDEST);
    tap_ok(!wrong, "%s: %s read as in the reference", qg_vectors_name(implementation), what);
}

/* Every third text without a string before the tail. */
static int after_a_string(char *text, size_t size, size_t pad, const char *tail)
{
    return snprintf(text, size, "SELECT %*s%s%s", (int)pad, "", pad % 3 ? "'a''b'" : "", tail);
}

/* Strings continued by doubled quotes, with backslashes, their quotes
 * at every place around a block's end: a continuation is read by the rules
 * of its chain's first quote (E'', U&'' …), in every implementation as in
 * the reference. */
static void doubled_quote_chains(int implementation)
{
    static const char *const tails[] = {
        "E'ab''cd\\' OR 1=1 --'", "'ab''\\' OR 1=1 --'", "'\x95\x5c''\x95\x5c' OR '\\'",
        "e''''\\'' x", "U&'a''\\' y'", "'a''b' 'c\\'' d'", "x'a''\\''b'",
        "'it''s \x95\x5c\x8e\xa6 it''s \x83\x5c' AND c = E'\\'''",
    };
    block_ends_as_reference(implementation, settings, sizeof settings / sizeof settings[0], tails,
                            sizeof tails / sizeof tails[0], after_a_string,
                            "strings continued by doubled quotes");
}

/* The tail inside a string the padding opens. */
static int in_a_string(char *text, size_t size, size_t pad, const char *tail)
{
    return snprintf(text, size, "SELECT '%*s%s", (int)pad, "", tail);
}

/* Backslashes where plain strings do not read them (N does): a Shift_JIS
 * or GBK trail byte 0x5c or a run of backslashes at every place around a
 * block's end, a quote or none right after it, so that the run escapes the
 * next block's first byte or not; every implementation as the reference. */
static void backslash_runs_across_blocks(int implementation)
{
    static const setting literal_backslashes[] = {
        {QG_DIALECT_POSTGRES, "SJIS", QG_STD_STRINGS},
        {QG_DIALECT_POSTGRES, "GBK", QG_STD_STRINGS},
        {QG_DIALECT_POSTGRES, "UTF8", QG_STD_STRINGS},
        {QG_DIALECT_MYSQL, "sjis", QG_NO_BACKSLASH_ESCAPES},
    };
    static const char *const tails[] = {
        "\x95\x5c' OR 1=1 --'", "\x95\x5c\x8e\xa6 it''s \x83\x5c'", "\\\\\\' x' y",
        "a\\\\' b", "\xbf\x5c\\' OR '", "\x95\x5c\x95\x5c\x95\x5c''' z", "\x95\x5c\x95\x5c",
        "a\\' OR 1=1 --'",
    };
    block_ends_as_reference(implementation, literal_backslashes,
                            sizeof literal_backslashes / sizeof literal_backslashes[0], tails,
                            sizeof tails / sizeof tails[0], in_a_string,
                            "backslashes plain strings do not read, around a block's end,");
}

/* Where plain strings read backslash escapes: a backslash at every place
 * around a block's end, as a trail byte 0x5c or not, before a quote, a
 * run of backslashes or a character, so that the server escapes the next
 * block's first byte or a character in it, or does not where an escaper
 * that takes the trail for a backslash does; every implementation as the
 * reference. */
static void escapes_across_blocks(int implementation)
{
    static const setting escaping[] = {
        {QG_DIALECT_MYSQL, "sjis", 0},    {QG_DIALECT_MYSQL, "gbk", 0},
        {QG_DIALECT_MYSQL, "big5", 0},    {QG_DIALECT_MYSQL, "gb18030", 0},
        {QG_DIALECT_MYSQL, "utf8mb4", 0}, {QG_DIALECT_POSTGRES, "SJIS", 0},
        {QG_DIALECT_POSTGRES, "UTF8", 0},
    };
    static const char *const tails[] = {
        "\\\\\\\x95\x40 x'",
        "\\\\\\\x95\x5c' OR 1=1 -- '",
        "\\\\\\\xe6\x97\xa5 x'",
        "\\\x95\x5c' OR 1=1 -- '",
        "\x95\x5c\\\\' OR '",
        "\x95\x5c\\\x95\x40 y'",
        "\\\\\x95\x5c\x95\x5c z'",
        "\x95\x5c\x95\x5c\\'' w'",
        "a\\'b\x95\x5c\x63\\\\d'",
        "\xe6\x97\xa5\\\\\xe6\x97\xa5'",
        "\x95\x5c\x95\x5c\x95\x5c",
    };
    block_ends_as_reference(implementation, escaping, sizeof escaping / sizeof escaping[0], tails,
                            sizeof tails / sizeof tails[0], in_a_string,
                            "backslash escapes around a block's end");
}

/* The padding inside the tail's first string, right after its opening
 * quote. */
static int inside_the_first_string(char *text, size_t size, size_t pad, const char *tail)
{
    const char *quote = strchr(tail, '\'');
    int opener = quote ? (int)(quote - tail) + 1 : 0;
    return snprintf(text, size, "SELECT %.*s%*s%s", opener, tail, (int)pad, "", tail + opener);
}

/* Strings whose prefix changes how they read backslashes (E'', U&'',
 * X'', B'', N'', an introducer), with a backslash or a trail byte 0x5c
 * at every distance from the opening quote, a block or more after it
 * too; every implementation as the reference. */
static void prefixed_strings_across_blocks(int implementation)
{
    static const setting prefixed[] = {
        {QG_DIALECT_POSTGRES, "UTF8", QG_STD_STRINGS}, {QG_DIALECT_POSTGRES, "UTF8", 0},
        {QG_DIALECT_POSTGRES, "SJIS", QG_STD_STRINGS}, {QG_DIALECT_MYSQL, "sjis", 0},
        {QG_DIALECT_MYSQL, "utf8mb4", QG_NO_BACKSLASH_ESCAPES},
    };
    static const char *const tails[] = {
        "E'\\' OR 1=1 --'", "U&'\\' OR 1=1 --'", "x'\\\\' y", "b'\\'' z'",
        "N'\x95\x5c' OR 1=1 -- '", "_latin1'\\' w'",
    };
    block_ends_as_reference(implementation, prefixed, sizeof prefixed / sizeof prefixed[0], tails,
                            sizeof tails / sizeof tails[0], inside_the_first_string,
                            "prefixed strings with a backslash a block or more on");
}

/* The tail twice, inside the string, or with the string opening after the
 * padding and before them. */
static int twice_in_or_after(char *text, size_t size, size_t pad, const char *tail)
{
    return snprintf(text, size, pad % 2 ? "SELECT '%*s%s%s" : "SELECT %*s'%s%s", (int)pad, "", tail,
                    tail);
}

/* Multibyte characters, whole and broken, at every place around a
 * block's end and the text's: UTF-8 of two to four bytes, pairs whose
 * trail is 0x5c, a Shift_JIS single-byte katakana, GB18030's four bytes, a
 * character cut by the quote or by the text's end; every implementation
 * as the reference. */
static void characters_across_blocks(int implementation)
{
    static const setting multibyte[] = {
        {QG_DIALECT_POSTGRES, "UTF8", QG_STD_STRINGS}, {QG_DIALECT_POSTGRES, "SJIS", QG_STD_STRINGS},
        {QG_DIALECT_POSTGRES, "GBK", 0},               {QG_DIALECT_POSTGRES, "BIG5", QG_STD_STRINGS},
        {QG_DIALECT_POSTGRES, "GB18030", QG_STD_STRINGS}, {QG_DIALECT_MYSQL, "utf8mb4", 0},
        {QG_DIALECT_MYSQL, "sjis", 0},                 {QG_DIALECT_MYSQL, "gb18030", 0},
    };
    static const char *const tails[] = {
        "\xe6\x97\xa5\xe6\x97\xa5\xe6\x97\xa5' x", "\xf0\x9f\x98\x80\xf0\x9f\x98\x80' y",
        "\xc3\xa9\xc3\xa9\xc3\xa9'", "\xe6\x97' z", "\xe6\x97\xa5\xe6\x97", "\x97\xa5' OR 1=1",
        "\xc0\xaf'", "\x95\x5c\x8e\xa6\xb1\xb2\x95\x5c'", "\x95' OR 1=1 --", "\xb1\x95\x5c\xb2",
        "\x81\x30\x81\x30\xc4\xe3\x81\x30'", "\x81\x30\x81' x", "\xa4\x5c\xa4\x5c' z", "\x80\xff'",
    };
    block_ends_as_reference(implementation, multibyte, sizeof multibyte / sizeof multibyte[0],
                            tails, sizeof tails / sizeof tails[0], twice_in_or_after,
                            "multibyte characters around a block's end");
}

/* One of three lists, at random: characters half the time, a broken
 * one an eighth of it unless `whole_only`, else code. */
#define PIECES(list) list, sizeof list / sizeof list[0]
static const char *piece_of(const char *const *chars, size_t nchars, const char *const *broken,
                            size_t nbroken, const char *const *code, size_t ncode, bool whole_only)
{
    int kind = rand() % 8;
    if (kind < 4)
        return chars[(size_t)rand() % nchars];
    if (kind == 4 && !whole_only)
        return broken[(size_t)rand() % nbroken];
    return code[(size_t)rand() % ncode];
}

/* A piece of UTF-8 text: characters of one to four bytes, cut and stray
 * bytes (a surrogate's, one past U+10FFFF and an overlong form among them)
 * unless `whole_only`, and what the scans look for: quotes, escapes,
 * comments, prefixes, introducers, names. */
static const char *utf8_piece(bool whole_only)
{
    static const char *const chars[] = {"\xc3\xa9", "\xe6\x97\xa5", "\xf0\x9f\x98\x80", "\xed\x95\x9c",
                                        "\xe2\x80\xa8", "\xc2\x80", "\xef\xbf\xbf", "\xf4\x8f\xbf\xbf"};
    static const char *const broken[] = {"\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\xaf", "\xe6\x97",
                                         "\x80", "\xff", "\xf0\x9f\x98", "\xc3"};
    static const char *const code[] = {
        "'", "''", "\"", "`", "\\", "\\'", "\\\\", "--", "#", "/*", "*/", "\n", " ", "x'", "b'",
        "E'", "U&'", "N'", "_latin1'", "_utf8mb4 '", "$$", "$1", "SELECT ", "a", "1", ";", "abcdefgh"};
    return piece_of(PIECES(chars), PIECES(broken), PIECES(code), whole_only);
}

/* A piece of UTF-8 text as utf8_piece half the time; else a run of ASCII
 * longer than a lane, in a string, a comment or code, or a comment longer
 * than the quick scan's span with a piece of utf8_piece in it: so that
 * the scans' longer spans run, lanes of ASCII follow characters whole and
 * cut, and the scan steps over characters in comments. */
static const char *long_utf8_piece(bool whole_only)
{
    static const char *const runs[] = {
        "abcdefghijklmnopqrstuvwxyz abcdefghijklmnopqrstuvwxyz ",
        "'it\\'s a plain string of ASCII text, longer than a lane of the scan' ",
        "SELECT a, b, c FROM t WHERE a = 1 AND b = 2 AND c = 3 ORDER BY a, b, c LIMIT 10 ",
        "/* a comment of plain ASCII words that runs on past a lane */ ",
        "-- a line comment of plain ASCII words that runs on past a lane\n",
    };
    static const char filler[] = "words of a comment words of a comment words of a comment "
                                 "words of a comment words of a comment words of a comment ";
    static char comment[200];
    switch (rand() % 4) {
    case 0:
        return runs[(size_t)rand() % (sizeof runs / sizeof runs[0])];
    case 1: {
        bool line = rand() % 2;
        int before = rand() % 100, after = rand() % 40;
        snprintf(comment, sizeof comment, "%s%.*s%s%.*s%s", line ? "-- " : "/* ", before, filler,
                 utf8_piece(whole_only), after, filler, line ? "\n" : " */");
        return comment;
    }
    default:
        return utf8_piece(whole_only);
    }
}

/* A piece of text in a pair encoding: pairs (trails 0x5c, 0x60, x, _
 * and high ones), GB18030's four bytes, Shift_JIS's one-byte katakana, a
 * lead cut or before a byte no trail is, stray bytes unless `whole_only`,
 * and what the scans look for. */
static const char *pair_piece(bool whole_only)
{
    static const char *const chars[] = {"\x95\x5c", "\x83\x5c", "\x81\x60", "\x83\x78", "\x82\x5f",
                                        "\x88\xa0", "\xb1",     "\xa4\x5c", "\x81\x30\x81\x30",
                                        "\xc4\xe3", "\xbf\x5c", "\xe0\x40"};
    static const char *const broken[] = {"\x95", "\x81\x27", "\x80", "\xff", "\x81\x30\x81",
                                         "\x95\x20"};
    static const char *const code[] = {"'", "''", "\"", "`", "\\", "\\'", "\\\\", "--", "#", "/*",
                                       "*/", "\n", " ", "x'", "E'", "_latin1'", "_sjis'", "$$",
                                       "SELECT ", "a", "1", "abcdefgh"};
    return piece_of(PIECES(chars), PIECES(broken), PIECES(code), whole_only);
}

/* The reading as letters (qg_only_plain_strings_as_letters) by its
 * definition, the text read character by character (qg_encoding_char_len):
 * whether each byte from 0x80 on is in a whole character, and a backslash
 * that is a character's later byte comes before no quote or backslash, any
 * other next to no high byte.  *letters: the text with its characters'
 * later bytes below 0x80 made 0xff; *high: it holds a byte from 0x80 on. */
static bool letters_by_definition(const qg_encoding *enc, const unsigned char *s, size_t len,
                                  unsigned char *letters, bool *high)
{
    static bool later[MAX_TEXT];
    *high = false;
    for (size_t i = 0; i < len;) {
        size_t n = s[i] < 0x80 ? 1 : qg_encoding_char_len(enc, s + i, len - i);
        if (n == 0)
            return false;
        *high = *high || s[i] >= 0x80;
        later[i] = false;
        for (size_t k = 1; k < n; k++)
            later[i + k] = true;
        i += n;
    }
    for (size_t i = 0; i < len; i++) {
        letters[i] = later[i] && s[i] < 0x80 ? 0xff : s[i];
        if (s[i] != '\\')
            continue;
        bool next_high = i + 1 < len && s[i + 1] >= 0x80;
        bool next_escape = i + 1 < len && (s[i + 1] == '\'' || s[i + 1] == '\\');
        if (later[i] ? next_escape : (i > 0 && s[i - 1] >= 0x80) || next_high)
            return false;
    }
    return true;
}

static bool holds_high_byte(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] >= 0x80)
            return true;
    return false;
}

/* Multibyte text read as letters: where the build has the scans, the
 * reading settles exactly what the quick scan with letters settles of the
 * text as the definition has it, and nothing of a text the definition
 * rejects (in a pair encoding, nor one without a high byte); a pair
 * encoding's copy is the definition's; and the checker, which settles such
 * text with the quick scan, gives the reference's verdict and findings,
 * the reading settling only text the reference finds clean. */
static void read_as_letters(int implementation, const char *what, const setting *settings,
                            size_t count, const char *(*piece)(bool), bool pairs)
{
    static char text[MAX_TEXT], copy[MAX_TEXT + QG_LETTERS_SLACK];
    static unsigned char want_text[MAX_TEXT];
    const qg_scans *scans = qg_scans_of(implementation);
    const char *name = qg_vectors_name(implementation);
    bool has_scans = implementation >= QG_VECTORS_AVX2;
    /* The AVX-512 build reads UTF-8 with the AVX2 build's scan
     * (src/core/vectors.c): what that reading settles is what the AVX2
     * build's scans settle, whose lanes are narrower than its own first
     * scan's.  Its first scan may then leave to the lexer a text the
     * reading could settle: only that it leaves none without a high byte
     * is asked of it. */
    const qg_scans *avx2 = qg_scans_of(QG_VECTORS_AVX2);
    bool borrowed =
        !pairs && implementation != QG_VECTORS_AVX2 && scans->utf8_scan == avx2->utf8_scan;
    const qg_scans *reading = borrowed ? avx2 : scans;
    int unlike = 0, verdicts = 0, unsound = 0, passed = 0, settled = 0, missed = 0;
    for (size_t s = 0; s < count; s++) {
        const qg_encoding *enc = qg_encoding_find(settings[s].dialect, settings[s].encoding);
        qg_context ctx;
        qg_context_init(&ctx, settings[s].dialect, enc, settings[s].flags);
        for (int round = 0; round < 4 * ROUNDS; round++) {
            size_t len = text_of_pieces(text, sizeof text, piece, round % 2);
            bool high = false;
            bool readable = has_scans &&
                            letters_by_definition(enc, (unsigned char *)text, len, want_text, &high) &&
                            (high || !pairs);
            qg_allow_vectors(implementation);
            qg_quick_reading want = readable
                                        ? reading->quick_scan_letters(&ctx, (char *)want_text, len)
                                        : QG_QUICK_UNSETTLED;
            bool copied = pairs && scans->pair_letters(encoding_dfa(enc), (unsigned char *)text,
                                                       len, (unsigned char *)copy);
            if (pairs && (copied != readable || (copied && memcmp(copy, want_text, len) != 0))) {
                if (!unlike++)
                    tap_diag("%s %s: copied as letters %d, by definition %d: %s", name,
                             settings[s].encoding, copied, readable, text);
            }
            qg_quick_reading got = qg_only_plain_strings_as_letters(&ctx, text, len, copy);
            if (got != want && !unlike++)
                tap_diag("%s %s: read as letters %d, by definition %d: %s", name,
                         settings[s].encoding, (int)got, (int)want, text);
            /* the checker reads as letters only what the first scan says
             * stopped at a high byte */
            qg_quick_reading first = scans->quick_scan(&ctx, text, len);
            if (((first == QG_QUICK_UNSETTLED && got != QG_QUICK_UNSETTLED && !borrowed) ||
                 (first == QG_QUICK_MULTIBYTE && !holds_high_byte(text, len))) &&
                !missed++)
                tap_diag("%s %s: the first scan says %d, read as letters %d: %s", name,
                         settings[s].encoding, (int)first, (int)got, text);
            passed += readable && high;
            verdicts += !checks_as_reference(implementation, &ctx, text, len, verdicts);
            if (got == QG_QUICK_UNSETTLED || qg_pg_every_byte(&ctx, text, len))
                continue;
            settled += high;
            qg_result ref;
            qg_allow_vectors(QG_VECTORS_REFERENCE);
            qg_check(&ctx, text, len, &ref);
            if (ref.verdict != QG_VERDICT_CLEAN && !unsound++)
                tap_diag("%s settles %s text read as letters that the reference finds %u things in: %s",
                         name, settings[s].encoding, ref.count, text);
        }
    }
    qg_allow_vectors(QG_VECTORS_WIDEST);
    tap_ok(!unlike, "%s: %s text reads as letters exactly where it should (%d texts with "
                    "multibyte characters did)", name, what, passed);
    tap_ok(!missed, "%s: the first scan leaves to the reading as letters each %s text it can "
                    "settle, and only text with a high byte", name, what);
    tap_ok(!verdicts, "%s: the checker reads %s text as the reference does", name, what);
    tap_ok(!unsound, "%s: the reading as letters settles only %s text the reference finds "
                     "clean (%d with multibyte characters settled)", name, what, settled);
}

static void multibyte_read_as_letters(int implementation)
{
    static const setting utf8[] = {
        {QG_DIALECT_POSTGRES, "UTF8", QG_STD_STRINGS},
        {QG_DIALECT_POSTGRES, "UTF8", 0},
        {QG_DIALECT_MYSQL, "utf8mb4", 0},
        {QG_DIALECT_MYSQL, "utf8mb4", QG_NO_BACKSLASH_ESCAPES},
        {QG_DIALECT_MYSQL, "utf8mb4", QG_ANSI_QUOTES},
        {QG_DIALECT_MYSQL, "utf8mb3", 0},
    };
    static const setting pairs[] = {
        {QG_DIALECT_POSTGRES, "SJIS", QG_STD_STRINGS},
        {QG_DIALECT_POSTGRES, "SJIS", 0},
        {QG_DIALECT_POSTGRES, "BIG5", QG_STD_STRINGS},
        {QG_DIALECT_POSTGRES, "GBK", 0},
        {QG_DIALECT_POSTGRES, "GB18030", QG_STD_STRINGS},
        {QG_DIALECT_POSTGRES, "UHC", QG_STD_STRINGS},
        {QG_DIALECT_MYSQL, "sjis", 0},
        {QG_DIALECT_MYSQL, "cp932", QG_NO_BACKSLASH_ESCAPES},
        {QG_DIALECT_MYSQL, "gbk", QG_ANSI_QUOTES},
        {QG_DIALECT_MYSQL, "big5", 0},
        {QG_DIALECT_MYSQL, "gb18030", 0},
    };
    read_as_letters(implementation, "UTF-8", utf8, sizeof utf8 / sizeof utf8[0], utf8_piece, false);
    read_as_letters(implementation, "long UTF-8", utf8, sizeof utf8 / sizeof utf8[0],
                    long_utf8_piece, false);
    read_as_letters(implementation, "double-byte", pairs, sizeof pairs / sizeof pairs[0],
                    pair_piece, true);
}

/* The tail after a run of text that starts with a multibyte character
 * (the scans read as letters only such), with the padding in code, in a
 * string, in a comment that runs past a span (where the scans step over
 * its text; a quote after a line comment follows an underscore in it), or
 * right before the tail. */
static int after_multibyte(char *text, size_t size, size_t pad, const char *tail)
{
    static const char *const frames[] = {"SELECT '\xe6\x97\xa5', %*s%s", "'\xe6\x97\xa5%*s' %s",
                                         "/* \xe6\x97\xa5 */ /*%*s%s */ x",
                                         "\xe6\x97\xa5%*s-- %s\n'x'", "\xe6\x97\xa5 # %*s%s\n 'x'"};
    const char *frame = frames[pad % (sizeof frames / sizeof frames[0])];
    return snprintf(text, size, frame, (int)pad, "", tail);
}

/* MySQL introducers (the lexer checks the string after one in the set it
 * names) at every place around a lane's and a block's end: after a space,
 * a high byte, a word byte (no introducer), with space before the quote,
 * in strings and comments, after other underscores; the scans that read
 * a text as letters settle none that qg_introduced_string_in says holds
 * one, and the checker gives the reference's verdict. */
static void introducers_across_blocks(int implementation)
{
    static const setting mysql[] = {
        {QG_DIALECT_MYSQL, "utf8mb4", 0},
        {QG_DIALECT_MYSQL, "utf8mb4", QG_NO_BACKSLASH_ESCAPES},
        {QG_DIALECT_MYSQL, "sjis", 0},
    };
    static const char *const tails[] = {
        "_big5 '\xe6\x97\xa5'",
        "\xe6\x97\xa5_big5'\xe6\x97\xa5' x",
        "a_big5'\xe6\x97\xa5'",
        "_utf8\r'\xf0\x9f\x98\x80'",
        "q_x _y z_ _latin1   'a\\'b'",
        "'_latin1''\xe6\x97\xa5'",
        "__ _ '_' x_'",
        "_binary'\xff'",
        "(_sjis'\x95\x5c')",
        "_big5",
        "a _latin1 ",
    };
    static char text[MAX_TEXT];
    const qg_scans *scans = qg_scans_of(implementation);
    int wrong = 0, settled = 0;
    for (size_t s = 0; s < sizeof mysql / sizeof mysql[0]; s++) {
        const qg_encoding *enc = qg_encoding_find(mysql[s].dialect, mysql[s].encoding);
        qg_context ctx;
        qg_context_init(&ctx, mysql[s].dialect, enc, mysql[s].flags);
        for (size_t t = 0; t < sizeof tails / sizeof tails[0]; t++)
            for (size_t pad = 0; pad < 140; pad++) {
                size_t len = (size_t)after_multibyte(text, sizeof text, pad, tails[t]);
                qg_allow_vectors(implementation);
                qg_quick_reading letters = scans->quick_scan_letters(&ctx, text, len);
                qg_quick_reading utf8 = scans->utf8_scan(
                    &ctx, encoding_dfa(qg_encoding_find(QG_DIALECT_MYSQL, "utf8mb4")), text, len);
                bool introduced = qg_introduced_string_in((const unsigned char *)text, len);
                settled += letters != QG_QUICK_UNSETTLED || utf8 != QG_QUICK_UNSETTLED;
                if (introduced && (letters != QG_QUICK_UNSETTLED || utf8 != QG_QUICK_UNSETTLED) &&
                    !wrong++)
                    tap_diag("%s %s: read as letters %d, as UTF-8 %d, past an introducer: %s",
                             qg_vectors_name(implementation), mysql[s].encoding, (int)letters,
                             (int)utf8, text);
                wrong += !checks_as_reference(implementation, &ctx, text, len, wrong);
            }
    }
    qg_allow_vectors(QG_VECTORS_WIDEST);
    tap_ok(!wrong,
           "%s: MySQL introducers around a block's end leave the text to the lexer, "
           "read as in the reference (%d texts settled)",
           qg_vectors_name(implementation), settled);
}

/* A pair encoding's copy read as letters, of text of whole characters
 * only (so that nearly every text is read): characters with a trail below
 * 0x80 and above, alone and GB18030's four bytes, around every block's
 * end and the text's, copied exactly as the definition has it. */
static void pair_copies_across_blocks(int implementation)
{
    static const struct {
        const char *encoding;
        const char *chars[6];
    } pairs[] = {
        {"SJIS", {"\x95\x5c", "\x83\x78", "\x88\xa0", "\xb1", "\xe0\x40", "\x81\x60"}},
        {"GBK", {"\xbf\x5c", "\xc4\xe3", "\x81\x40", "\xfe\x7e", "\xa1\xa1", "\x81\x80"}},
        {"BIG5", {"\xa4\x5c", "\xa4\x40", "\xa4\xa1", "\xf9\x7e", "\xc9\x60", "\xa5\xfe"}},
        {"UHC", {"\xb0\xa1", "\x81\x41", "\x81\x5a", "\xc8\xfe", "\xa1\x61", "\x8f\x7a"}},
        {"GB18030", {"\x81\x30\x81\x30", "\xc4\xe3", "\xbf\x5c", "\x84\x31\xa4\x39", "\x81\x40",
                     "\xfe\x7e"}},
    };
    static unsigned char text[MAX_TEXT], want[MAX_TEXT], copy[MAX_TEXT + QG_LETTERS_SLACK];
    const qg_scans *scans = qg_scans_of(implementation);
    if (implementation < QG_VECTORS_AVX2)
        return; /* no reading as letters */
    int wrong = 0, texts = 0, read = 0;
    for (size_t e = 0; e < sizeof pairs / sizeof pairs[0]; e++) {
        const qg_encoding *enc = qg_encoding_find(QG_DIALECT_POSTGRES, pairs[e].encoding);
        for (size_t cap = 1; cap < 200; cap++) {
            for (int round = 0; round < 4; round++) {
                size_t len = 0;
                for (;;) {
                    const char *c = rand() % 4 ? pairs[e].chars[rand() % 6] : "a";
                    if (len + strlen(c) > cap)
                        break;
                    memcpy(text + len, c, strlen(c));
                    len += strlen(c);
                }
                bool high = false;
                bool readable = letters_by_definition(enc, text, len, want, &high) && high;
                bool copied = scans->pair_letters(encoding_dfa(enc), text, len, copy);
                texts++;
                read += readable;
                if ((copied != readable || (copied && memcmp(copy, want, len) != 0)) && !wrong++)
                    tap_diag("%s %s: copied as letters %d, by definition %d, %zu bytes",
                             qg_vectors_name(implementation), pairs[e].encoding, copied,
                             readable, len);
            }
        }
    }
    tap_ok(!wrong && read > texts * 9 / 10,
           "%s: double-byte characters around a block's end are copied as letters as "
           "they should (%d of %d texts read)",
           qg_vectors_name(implementation), read, texts);
}

/* A pair encoding's copy around backslashes and quotes: a trail 0x5c
 * before a quote, a backslash or a letter, a backslash of its own next to
 * a high byte or between ASCII bytes, each at every offset around a
 * block's end and the text's (where the tests of a block look back at
 * the block before), copied or refused exactly as the definition has
 * it. */
static void pair_backslashes_across_blocks(int implementation)
{
    static const struct {
        const char *encoding, *backslash_trail, *high_trail;
    } pairs[] = {
        {"SJIS", "\x95\x5c", "\x88\xa0"},
        {"GBK", "\xbf\x5c", "\xc4\xe3"},
        {"BIG5", "\xa4\x5c", "\xa4\xa1"},
        {"GB18030", "\xbf\x5c", "\x81\x30\x81\x30"},
    };
    /* T: the character with the trail 0x5c, H: one with a high trail */
    static const char *const probes[] = {"T'",  "T\\", "Ta",   "T\\\\", "TT'", "\\H",
                                         "H\\", "a\\'", "a\\\\a", "T a'", "'T'", "HT"};
    static unsigned char text[MAX_TEXT], want[MAX_TEXT], copy[MAX_TEXT + QG_LETTERS_SLACK];
    const qg_scans *scans = qg_scans_of(implementation);
    if (implementation < QG_VECTORS_AVX2)
        return; /* no reading as letters */
    int wrong = 0, read = 0, refused = 0;
    for (size_t e = 0; e < sizeof pairs / sizeof pairs[0]; e++) {
        const qg_encoding *enc = qg_encoding_find(QG_DIALECT_POSTGRES, pairs[e].encoding);
        size_t high_len = strlen(pairs[e].high_trail);
        for (size_t probe = 0; probe < sizeof probes / sizeof probes[0]; probe++)
            for (size_t at = 0; at < 140; at++)
                for (size_t after = 0; after < 70; after += 1 + after / 4) {
                    /* `at` bytes before the probe, `after` after it */
                    size_t len = 0;
                    for (; len < at % high_len; len++)
                        text[len] = 'a';
                    for (; len < at; len += high_len)
                        memcpy(text + len, pairs[e].high_trail, high_len);
                    for (const char *c = probes[probe]; *c; c++) {
                        const char *piece = *c == 'T'   ? pairs[e].backslash_trail
                                            : *c == 'H' ? pairs[e].high_trail
                                                        : NULL;
                        size_t n = piece ? strlen(piece) : 1;
                        memcpy(text + len, piece ? piece : c, n);
                        len += n;
                    }
                    for (size_t end = len + after; len + high_len <= end;)
                        memcpy(text + len, pairs[e].high_trail, high_len), len += high_len;
                    bool high = false;
                    bool readable = letters_by_definition(enc, text, len, want, &high) && high;
                    bool copied = scans->pair_letters(encoding_dfa(enc), text, len, copy);
                    read += readable;
                    refused += !readable;
                    if ((copied != readable || (copied && memcmp(copy, want, len) != 0)) &&
                        !wrong++)
                        tap_diag("%s %s: copied as letters %d, by definition %d, probe %zu at %zu "
                                 "in %zu bytes",
                                 qg_vectors_name(implementation), pairs[e].encoding, copied,
                                 readable, probe, at, len);
                }
    }
    tap_ok(!wrong && read > 1000 && refused > 1000,
           "%s: backslashes and quotes next to double-byte characters around a block's end "
           "are copied or refused as they should (%d read, %d refused)",
           qg_vectors_name(implementation), read, refused);
}

/* The character count: where it stops, a character ends, and it counted
 * the characters before. */
static void counts_whole_characters(int implementation)
{
    static const char *const encodings[] = {"UTF8", "SJIS", "GBK", "BIG5", "GB18030", "EUC_JP"};
    static const char *const chars_of[] = {"\xe6\x97\xa5", "\x95\x5c", "\xbf\x5c", "\xa4\x5c",
                                           "\x81\x30\x81\x30", "\xa4\xa2"};
    static unsigned char body[4096];
    const qg_scans *scans = qg_scans_of(implementation);
    int wrong = 0;
    for (size_t e = 0; e < sizeof encodings / sizeof encodings[0]; e++) {
        const qg_encoding *enc = qg_encoding_find(QG_DIALECT_POSTGRES, encodings[e]);
        for (int round = 0; round < 50; round++) {
            size_t len = 0, want_cap = 64 + (size_t)rand() % 2000;
            while (len + 4 < want_cap) {
                const char *c = rand() % 3 ? chars_of[e] : "a";
                memcpy(body + len, c, strlen(c));
                len += strlen(c);
            }
            size_t chars = 0, want = 0, p = 0, c = 1;
            size_t end = scans->count_chars(encoding_dfa(enc), body, 0, len, &chars);
            while (p < end && (c = qg_encoding_char_len(enc, body + p, len - p)))
                p += c, want++;
            if ((p != end || chars != want) && !wrong++)
                tap_diag("%s %s: stopped at %zu with %zu characters (%zu end at %zu)",
                         qg_vectors_name(implementation), encodings[e], end, chars, want, p);
        }
    }
    tap_ok(!wrong, "%s: the character count takes whole characters",
           qg_vectors_name(implementation));
}

int main(void)
{
    srand(47);
    complete_tables();
    for (int i = QG_VECTORS_REFERENCE; i <= qg_cpu_vectors(); i++) {
        against_reference(i);
        doubled_quote_chains(i);
        backslash_runs_across_blocks(i);
        escapes_across_blocks(i);
        prefixed_strings_across_blocks(i);
        characters_across_blocks(i);
        multibyte_read_as_letters(i);
        if (i >= QG_VECTORS_AVX2)
            introducers_across_blocks(i);
        pair_copies_across_blocks(i);
        pair_backslashes_across_blocks(i);
        counts_whole_characters(i);
    }
    return tap_done();
}
