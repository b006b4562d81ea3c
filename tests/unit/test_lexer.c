/* Lexer: token spans; the vector scan agreeing with the scalar reference
 * on the corpus and on random input; a lexer with findings and one without
 * cutting the same tokens.  Needs ../shared/corpus/pg-regress, the
 * reference material beside the source tree. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lexer_internal.h"
#include "quoteguard.h"
#include "sql_words.h"
#include "tap.h"

#define MAX_TOKENS 64

/* A dialect, client encoding and flags to lex in. */
typedef struct lex_setting {
    qg_dialect dialect;
    const char *enc;
    unsigned flags;
} lex_setting;

static void setting_context(qg_context *ctx, const lex_setting *setting)
{
    qg_context_init(ctx, setting->dialect, qg_encoding_find(setting->dialect, setting->enc),
                    setting->flags);
}

/* Whether two readings of a text agree; `round` picks a variant. */
typedef bool (*agreement)(const qg_context *ctx, const char *text, size_t len, int round);

/* Of `rounds` random texts (1 to max_len bytes of alphabet's `letters`,
 * each lexed in the next of `count` settings), how many `agree` rejects. */
static size_t random_disagreements(const char *alphabet, size_t letters, unsigned seed, int rounds,
                                   size_t max_len, const lex_setting *settings, size_t count,
                                   agreement agree)
{
    char buf[512];
    size_t differ = 0;
    for (int i = 0; i < rounds; i++) {
        size_t len = (size_t)i % max_len + 1;
        for (size_t j = 0; j < len; j++) {
            seed = seed * 1103515245u + 12345u;
            buf[j] = alphabet[(seed >> 16) % letters];
        }
        qg_context ctx;
        setting_context(&ctx, &settings[(size_t)i % count]);
        differ += !agree(&ctx, buf, len, i);
    }
    return differ;
}

static size_t lex_all(const qg_context *ctx, const char *sql, size_t len, qg_reading reading,
                      qg_result *findings, qg_token *out, size_t cap)
{
    qg_lexer lx;
    qg_token tok;
    size_t n = 0;
    qg_lexer_init(&lx, ctx, sql, len, reading, findings);
    while (qg_lexer_next(&lx, &tok))
        if (n < cap)
            out[n++] = tok;
    return n;
}

static void expect_tokens(qg_dialect dialect, const char *enc, unsigned flags, const char *sql,
                          const char *want)
{
    qg_context ctx;
    qg_context_init(&ctx, dialect, qg_encoding_find(dialect, enc), flags);
    qg_token toks[MAX_TOKENS];
    size_t n = lex_all(&ctx, sql, strlen(sql), QG_READ_SERVER, NULL, toks, MAX_TOKENS);
    char got[512] = "";
    size_t used = 0;
    for (size_t i = 0; i < n && used < sizeof got - 32; i++)
        used += (size_t)snprintf(got + used, sizeof got - used, "%s%c%zu-%zu%s", i ? " " : "",
                                 "?SICD"[toks[i].kind], toks[i].start, toks[i].end,
                                 toks[i].unterminated ? "!" : "");
    char shown[256];
    size_t k = 0;
    for (const unsigned char *p = (const unsigned char *)sql; *p && k < sizeof shown - 5; p++)
        k += (size_t)snprintf(shown + k, sizeof shown - k, (*p < 0x20 || *p >= 0x7f) ? "\\x%02x" : "%c", *p);
    tap_ok(strcmp(got, want) == 0, "%s: got \"%s\" want \"%s\"", shown, got, want);
}

static void test_spans(void)
{
    const qg_dialect pg = QG_DIALECT_POSTGRES, my = QG_DIALECT_MYSQL;
    expect_tokens(pg, "UTF8", QG_STD_STRINGS, "SELECT 'a''b', E'\\'' -- c", "S7-13 S15-20 C21-25");
    expect_tokens(pg, "UTF8", QG_STD_STRINGS, "x U&'a' u&\"b\" N'c' b'1' X'f'", "S2-7 I8-13 S14-18 S19-23 S24-28");
    expect_tokens(pg, "UTF8", QG_STD_STRINGS, "'a'\n'b' 'c'", "S0-7 S8-11");
    expect_tokens(pg, "UTF8", QG_STD_STRINGS, "'a' -- x\n 'b'", "S0-13");
    expect_tokens(pg, "UTF8", QG_STD_STRINGS, "$a$ $b$ $a$ $$x$$", "D0-11 D12-17");
    expect_tokens(pg, "UTF8", QG_STD_STRINGS, "a$b$ 'c' $1 '$'", "S5-8 S12-15");
    expect_tokens(pg, "UTF8", QG_STD_STRINGS, "/* /* */ */ 1 /* x", "C0-11 C14-18!");
    expect_tokens(pg, "UTF8", QG_STD_STRINGS, "ne'x' e'\\''", "S2-5 S6-11");
    expect_tokens(pg, "UTF8", QG_STD_STRINGS, "e'\\'", "S0-4!");
    expect_tokens(pg, "UTF8", 0, "'a\\'b'", "S0-6");
    expect_tokens(pg, "SJIS", 0, "'\x95\x5c' x", "S0-4");
    expect_tokens(my, "utf8mb4", 0, "'a\\'b' \"c\" `d``e` # x\n-- y\n--z", "S0-6 S7-10 I11-17 C18-21 C22-26");
    expect_tokens(my, "utf8mb4", QG_ANSI_QUOTES, "\"a\\\" 'b'", "I0-4 S5-8");
    expect_tokens(my, "utf8mb4", QG_NO_BACKSLASH_ESCAPES, "'a\\' 'b'", "S0-4 S5-8");
    expect_tokens(my, "utf8mb4", 0, "/*!40101 'a' */ /* 'b' */ /*M!100000 'c' */", "S9-12 C16-25 S37-40");
    expect_tokens(my, "gbk", 0, "'\xbf\x5c' x '\xbf\x27", "S0-4 S7-10");
}

static bool same_tokens(const qg_context *ctx, const char *sql, size_t len, qg_reading reading)
{
    qg_token a[MAX_TOKENS], b[MAX_TOKENS];
    int widest = qg_vectors_in_use();
    qg_allow_vectors(QG_VECTORS_REFERENCE);
    size_t na = lex_all(ctx, sql, len, reading, NULL, a, MAX_TOKENS);
    qg_allow_vectors(widest);
    size_t nb = lex_all(ctx, sql, len, reading, NULL, b, MAX_TOKENS);
    return na == nb && memcmp(a, b, na * sizeof a[0]) == 0;
}

static bool vector_agrees(const qg_context *ctx, const char *text, size_t len, int round)
{
    return same_tokens(ctx, text, len, (qg_reading)(round & 1));
}

/* A lexer without findings ends doubling-quoted text at its first quote
 * byte not doubled where it can (ends_at_quote_byte); one with findings
 * reads it character by character: both must cut the same tokens. */
static bool same_tokens_with_findings(const qg_context *ctx, const char *sql, size_t len)
{
    qg_token a[MAX_TOKENS], b[MAX_TOKENS];
    qg_result findings;
    findings.verdict = QG_VERDICT_CLEAN;
    findings.count = 0;
    size_t na = lex_all(ctx, sql, len, QG_READ_SERVER, &findings, a, MAX_TOKENS);
    size_t nb = lex_all(ctx, sql, len, QG_READ_SERVER, NULL, b, MAX_TOKENS);
    return na == nb && memcmp(a, b, na * sizeof a[0]) == 0;
}

static bool findings_agree(const qg_context *ctx, const char *text, size_t len, int round)
{
    (void)round;
    return same_tokens_with_findings(ctx, text, len);
}

static void test_quote_bytes_match_characters(void)
{
    static const lex_setting ctxs[] = {
        {QG_DIALECT_POSTGRES, "UTF8", QG_STD_STRINGS},   {QG_DIALECT_POSTGRES, "SJIS", QG_STD_STRINGS},
        {QG_DIALECT_POSTGRES, "BIG5", QG_STD_STRINGS},   {QG_DIALECT_POSTGRES, "GB18030", QG_STD_STRINGS},
        {QG_DIALECT_POSTGRES, "EUC_JP", QG_STD_STRINGS}, {QG_DIALECT_POSTGRES, "LATIN1", QG_STD_STRINGS},
        {QG_DIALECT_POSTGRES, "SJIS", 0},                {QG_DIALECT_MYSQL, "gbk", QG_NO_BACKSLASH_ESCAPES},
        {QG_DIALECT_MYSQL, "sjis", 0},
    };
    const size_t contexts = sizeof ctxs / sizeof ctxs[0];
    /* lengths from sizeof: one case holds a NUL */
#define CASE(text) {text, sizeof text - 1}
    static const struct {
        const char *text;
        size_t len;
    } cases[] = {
        CASE("'a''b' 'c'"),       CASE("'\x95\x5c' x"),      CASE("'\x95\x5c''' '\x95'"),
        CASE("'\xc8' x'"),        CASE("'\xc8'' 'y'"),        CASE("'a\x00" "b' 'c'"),
        CASE("'a'\n'b' 'c"),      CASE("E'\\'' x 'y'"),       CASE("'\xe6\x97' 'x'"),
        CASE("'\x81\x30\x81' '"), CASE("U&'a' 'b\\' \"c''d\""), CASE("'a' -- '\n 'b'"),
        CASE("`\x95\x60` 'x'"), /* MySQL sjis: a trail byte that is a backtick */
    };
#undef CASE
    size_t differ = 0;
    for (size_t c = 0; c < contexts; c++) {
        qg_context ctx;
        setting_context(&ctx, &ctxs[c]);
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
            if (!same_tokens_with_findings(&ctx, cases[k].text, cases[k].len)) {
                differ++;
                tap_diag("with and without findings differ: case %zu, %s", k, ctxs[c].enc);
            }
    }
    tap_ok(differ == 0, "%zu cases x %zu contexts: with and without findings, the same tokens",
           sizeof cases / sizeof cases[0], contexts);

    /* Random bytes: quotes, backslashes, NUL, leads, trails, invalid bytes. */
    static const char alphabet[] = "''''\\\"-\n aE&U_\x95\x5c\xbf\x81\x30\xe6\x97\xa5\xc8\xff\x00";
    size_t random_differ = random_disagreements(alphabet, sizeof alphabet - 1, 4242, 30000, 190,
                                                ctxs, contexts, findings_agree);
    tap_ok(random_differ == 0, "30000 random inputs: with and without findings agree (%zu differ)",
           random_differ);
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *buf = malloc((size_t)n + 1);
    *len = fread(buf, 1, (size_t)n, f);
    fclose(f);
    return buf;
}

static void test_vector_matches_scalar(void)
{
    static const lex_setting ctxs[] = {
        {QG_DIALECT_POSTGRES, "UTF8", QG_STD_STRINGS}, {QG_DIALECT_POSTGRES, "SJIS", 0},
        {QG_DIALECT_POSTGRES, "GB18030", QG_STD_STRINGS}, {QG_DIALECT_MYSQL, "gbk", 0},
        {QG_DIALECT_MYSQL, "utf8mb4", QG_ANSI_QUOTES | QG_NO_BACKSLASH_ESCAPES},
    };
    const char *dir = "../shared/corpus/pg-regress";
    DIR *d = opendir(dir);
    size_t files = 0, mismatches = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".sql") != 0)
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t len;
        char *buf = read_file(path, &len);
        if (!buf)
            continue;
        files++;
        for (size_t c = 0; c < sizeof ctxs / sizeof ctxs[0]; c++) {
            qg_context ctx;
            setting_context(&ctx, &ctxs[c]);
            for (int r = 0; r < 2; r++)
                if (!same_tokens(&ctx, buf, len, (qg_reading)r)) {
                    mismatches++;
                    tap_diag("vector/scalar differ: %s %s reading %d", e->d_name, ctxs[c].enc, r);
                }
        }
        free(buf);
    }
    if (d)
        closedir(d);
    tap_ok(files > 200 && mismatches == 0,
           "%s (reference material beside the source tree): %zu files x 5 contexts x 2 readings, "
           "%zu differ",
           dir, files, mismatches);

    /* Random bytes biased towards the bytes that change state. */
    static const char alphabet[] = "''\"\"`\\\\$$--//**#\n\r ab0e_\x95\x5c\xbf\x81\x30\xe6\x97\xa5\x00";
    size_t random_mismatch = random_disagreements(alphabet, sizeof alphabet - 1, 12345, 20000, 290,
                                                  ctxs, sizeof ctxs / sizeof ctxs[0], vector_agrees);
    tap_ok(random_mismatch == 0, "20000 random inputs: vector and scalar agree (%zu differ)",
           random_mismatch);
}

/* The executable-comment markers, as MariaDB's sql_lex.cc reads them. */
static void test_exec_comments(void)
{
    static const struct {
        const char *text;
        size_t marker;
        unsigned long version;
        bool mariadb, always;
    } cases[] = {
        {"/*! x */", 3, 0, false, true},
        {"/*!40101 x */", 8, 40101, false, true},
        {"/*!50700 x */", 8, 50700, false, false},  /* MariaDB: only in the M form */
        {"/*!100000 x */", 9, 100000, false, false}, /* at most the server's */
        {"/*!1234567 x */", 9, 123456, false, false}, /* six digits at most */
        {"/*!4010 x */", 3, 0, false, true},          /* four: the body's */
        {"/*M! x */", 4, 0, true, false},             /* MySQL: a comment */
        {"/*M!50700 x */", 9, 50700, true, false},
        {"/*!", 3, 0, false, true},
        {"/*!40101", 8, 40101, false, true},
        {"/*M x */", 0, 0, false, false},
        {"/* x */", 0, 0, false, false},
        {"/*M", 0, 0, false, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const unsigned char *s = (const unsigned char *)cases[i].text;
        qg_exec_comment ec = {0};
        size_t marker = qg_my_exec_comment(s, 0, strlen(cases[i].text), &ec);
        tap_ok(marker == cases[i].marker &&
                   (!marker || (ec.version == cases[i].version && ec.mariadb == cases[i].mariadb &&
                                qg_my_exec_comment_always_runs(&ec) == cases[i].always)),
               "executable comment [%s]: marker %zu version %lu", cases[i].text, marker, ec.version);
    }
}

/* Words: letters, digits, '$', a multibyte character whole. */
static void test_words(void)
{
    const qg_encoding *sjis = qg_encoding_find(QG_DIALECT_POSTGRES, "SJIS");
    const unsigned char *s = (const unsigned char *)"ab$1_\x83\x5c" "c d";
    size_t len = strlen((const char *)s);
    tap_ok(qg_word_end(sjis, s, 0, len, 0) == 8, "a word takes an SJIS character whose trail is '\\'");
    tap_ok(qg_word_end(NULL, s, 0, len, 0) == 6, "byte-wise, 0x5c ends it");
    const unsigned char *v = (const unsigned char *)"@@global.sql_mode=";
    tap_ok(qg_word_end(NULL, v, 0, 18, QG_CC(QG_CC_AT) | QG_CC(QG_CC_DOT)) == 17 &&
               qg_word_end(NULL, v, 2, 18, 0) == 8,
           "a variable's name takes '@' and '.' only when asked");
}

int main(void)
{
    test_exec_comments();
    test_words();
    test_spans();
    test_vector_matches_scalar();
    test_quote_bytes_match_characters();
    return tap_done();
}
