/*
 * The detection rule's two error rates, measured on generated statements
 * (docs/DETECTION.md, "Measured error rates").
 *
 *   legitimate: query templates (a third commented by hand: prose with
 *               apostrophes and double quotes) x realistic values (among
 *               them the translations of the machine's gettext catalogs) x
 *               the real escapers' algorithms (tests/measure/escapers.h,
 *               checked byte for byte against the real ones by
 *               tests/t/80-rule-drivers.t and 35-rule-prose-escapers.t) x
 *               every client encoding x every quoting mode.  Target: none
 *               blocked.
 *   attacks:    the same templates x attacker payloads x byte-naive
 *               escapers.  A statement counts as an attack only where the
 *               server's reading S (the lexer, differential-tested against
 *               the servers) differs from the template's (other token kinds
 *               or other code between them) and some of the input runs.
 *               Target: none passes.
 *
 * Usage: measure_rule [--per-dialect N] [--seed S] [--show K] [--dialect pg|mysql]
 *                     [--sample FILE K]
 *        measure_rule --verify ESCAPER pg|mysql ENCODING FLAGS < "value literal" lines (hex)
 * Also printed: "text that is both" (PostgreSQL: a literal, an E'' literal
 * with \' from an encoding-aware escaper, the program's dollar quote with
 * a quote), counted apart, and both error rates if a blocked statement
 * passed where the call site (the template) sent the same shape before.
 * --sample writes about K effective attacks a dialect (the first of each
 * setting) to FILE, for the servers to confirm (tests/t/19-rule-attacks-servers.t).
 * Prints a table per encoding and quoting mode; exits 1 when a legitimate
 * statement is blocked or an attack passes (and shows up to K of each).
 * Each statement is also checked by the reference implementation; where
 * its verdict differs from the fast one's, that is counted and shown.
 */
#include <glob.h>
#include <iconv.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escapers.h"
#include "lexer_internal.h"
#include "quoteguard.h"
#include "shape.h"

#define MAX_SQL 16384
#define MAX_VALUE 512
#define MAX_LITERALS 8

/* ------------------------------------------------------------------ random */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng_next(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

static unsigned rng_below(unsigned n)
{
    return (unsigned)(rng_next() % n);
}

static bool rng_chance(unsigned percent)
{
    return rng_below(100) < percent;
}

#define PICK(array) (array)[rng_below(sizeof(array) / sizeof((array)[0]))]

/* ------------------------------------------------------------ the settings */

typedef struct setting {
    qg_dialect dialect;
    const char *encoding;
    unsigned flags;
    const char *mode; /* as printed */
} setting;

static const char *const pg_encodings[] = {
    "UTF8",  "EUC_JP", "EUC_JIS_2004", "EUC_CN", "EUC_KR",  "EUC_TW", "SJIS",   "SHIFT_JIS_2004",
    "BIG5",  "GBK",    "UHC",          "GB18030", "JOHAB", "MULE_INTERNAL", "LATIN1", "WIN1252", "WIN1251", "KOI8R",
};
static const char *const my_encodings[] = {
    "utf8mb4", "utf8mb3", "sjis",  "cp932", "gbk",   "big5",   "gb18030",
    "euckr",   "gb2312",  "ujis",  "eucjpms", "latin1", "cp1251", "ascii",
};

typedef struct stats {
    uint64_t legit, legit_blocked, legit_logged;
    uint64_t attacks_generated, attacks, attacks_rejected, attacks_passed;
    uint64_t same_structure; /* naive escaping that changed no structure */
    uint64_t inert;          /* a changed structure where none of the input runs */
    uint64_t differ;         /* fast and reference checkers disagree */
    /* "text that is both" (PG): a literal, an E'' literal with \' and a
     * dollar quote holding ', correctly escaped */
    uint64_t both, both_blocked;
    /* the call site's history: a blocked statement whose shape the same
     * template (call site) sent before, harmless values in it */
    uint64_t legit_history, both_history, attacks_history;
} stats;

/* ------------------------------------------------------------------ values */

typedef struct value {
    unsigned char b[MAX_VALUE];
    size_t n;
} value;

static void put(value *v, const void *p, size_t n)
{
    if (v->n + n > MAX_VALUE - 8)
        return;
    memcpy(v->b + v->n, p, n);
    v->n += n;
}

static void puts_v(value *v, const char *s)
{
    put(v, s, strlen(s));
}

/* A valid character of enc of two or more bytes (one byte >= 0x80 for
 * single-byte encodings), trail bytes 0x5c, 0x7c, 0x60 favoured where the
 * encoding has ASCII trail bytes.  Returns its length, 0 when none found. */
static size_t gen_char(const qg_encoding *enc, unsigned char *out)
{
    if (qg_encoding_is_single_byte(enc)) {
        for (int tries = 0; tries < 64; tries++) {
            out[0] = (unsigned char)(0x80 + rng_below(128));
            if (qg_encoding_char_len(enc, out, 1) == 1)
                return 1;
        }
        return 0;
    }
    static const unsigned char favoured[] = {0x5c, 0x7c, 0x60, 0x40, 0x5b, 0x5d, 0x7e, 0x7b, 0x7d, 0x41, 0x61};
    bool ascii_trail = qg_encoding_has_ascii_trail(enc);
    for (int tries = 0; tries < 400; tries++) {
        size_t len = 2 + rng_below(3);
        out[0] = (unsigned char)(0x81 + rng_below(0x7e));
        if (tries % 4 == 0)
            out[0] = (unsigned char)(0x8e + rng_below(2)); /* EUC's SS2/SS3 */
        for (size_t i = 1; i < len; i++) {
            unsigned r = rng_below(100);
            if (ascii_trail && r < 40)
                out[i] = PICK(favoured);
            else if (r < 50)
                out[i] = (unsigned char)(0x30 + rng_below(10)); /* GB18030's second/fourth */
            else
                out[i] = (unsigned char)(0x80 + rng_below(0x7f));
        }
        if (qg_encoding_char_len(enc, out, len) == len)
            return len;
    }
    return 0;
}

static void put_text_mb(value *v, const qg_encoding *enc, unsigned chars)
{
    for (unsigned i = 0; i < chars; i++) {
        unsigned char c[4];
        size_t n = gen_char(enc, c);
        if (n)
            put(v, c, n);
        else
            puts_v(v, "x");
        if (rng_chance(15))
            puts_v(v, PICK(((const char *[]){" ", "\\", "'", "-", ", ", "\\\\", "''", "\"", "/", "*"})));
    }
}

static const char *const paths[] = {
    "C:\\temp\\", "C:\\Program Files\\App\\", "\\\\server\\share\\dir\\", "D:\\data\\x.txt",
    "C:\\", "\\", "..\\..\\", "/usr/local/bin/", "C:\\Users\\o'neil\\", "%APPDATA%\\Foo\\",
};
static const char *const regexes[] = {
    "^\\d+(\\.\\d+)?$", "[a-z]+\\s*--\\s*'", "\\\\w+", "^[^'\"]*$", "(?i)select\\b.*--",
    "\\'", "a\\", "\\b(\\w+)\\s+\\1\\b", "[\\x00-\\x1f]", "^--.*$",
};
static const char *const prose[] = {
    "see --help", "a -- b", "/* note */", "x */ y", "-- signature", "it's fine -- really",
    "use /* and */ carefully", "--", "/*", "*/", "2 - -3", "well--maybe", "# not a comment",
    "price: 5$ or $$", "$1 and $tag$", "#1 fan", "ok -- ' -- \"",
};
static const char *const sqlish[] = {
    "SELECT * FROM users WHERE name = 'x' -- c", "DROP TABLE t; --", "' OR 1=1 --",
    "{\"a\": \"b\\\"c\", \"d\": [1, 2]}", "{\"path\": \"C:\\\\x\\\\\"}", "a' || 'b",
    "1); DELETE FROM t; --", "\" OR \"\"=\"", "') /*", "'; SELECT pg_sleep(1); --",
    "E'\\n'", "U&'\\0041'", "$$ body $$", "`id`", "x UNION SELECT 1 #",
};
static const char *const quotes[] = {
    "it's", "\"quoted\"", "O'Brien", "'", "''", "\\'", "\\\"", "`", "'\\''", "\\\\'",
    "say \"hi\"", "don't \\ do", "'''", "\\", "\\\\", "a\\'b",
};
static const char *const markup[] = {
    "<a href=\"x\">it's</a>", "<!-- c -->", "<p class='x'>--</p>", "<![CDATA[ ' ]]>",
    "&lt;b&gt; &amp; &#39;", "<script>alert('x')</script>",
};
static const char *const code[] = {
    "printf(\"%s\\n\", x); // it's", "if (a) { b = '\\\\'; }", "# comment\nx = 1",
    "s/\\\\/\\//g", "echo 'a' -- b", "char c = '\\0';", "/* c */ int x; // --",
    "print(\"it's\") # --", "x = y -- 1\ny = 2",
};
static const char *const emails[] = {
    "o'neil@example.com", "first.last+tag@example.org", "\"john doe\"@example.com",
    "a--b@example.net",
};
static const char *const signatures[] = {
    "-- \nJohn", "--\r\nSent from my phone", "Regards,\n-- \nA", "\n--\n",
};
static const char *const controls[] = {"\n", "\r\n", "\t", "\x1a", "\x7f", "\r"};

static void put_base64(value *v)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    unsigned n = 4 * (1 + rng_below(12));
    for (unsigned i = 0; i < n; i++)
        put(v, &b64[rng_below(64)], 1);
    if (rng_chance(30))
        puts_v(v, "==");
}

/* Real multilingual text: the translations of the machine's gettext
 * catalogs (/usr/share/locale/ * /LC_MESSAGES/ *.mo), up to
 * TEXTS_PER_CATALOG spread over each, read once. */
enum { TEXTS_PER_CATALOG = 16, MAX_TEXTS = 100000, MAX_TEXT_LEN = 200 };
static char *texts[MAX_TEXTS];
static size_t text_count, catalog_count;

static uint32_t mo_word(const unsigned char *mo, size_t size, size_t at)
{
    if (at + 4 > size)
        return 0;
    return (uint32_t)mo[at] | (uint32_t)mo[at + 1] << 8 | (uint32_t)mo[at + 2] << 16 |
           (uint32_t)mo[at + 3] << 24;
}

/* The translation of entry i of a little-endian .mo file (the first of its
 * plural forms), or NULL. */
static const char *mo_translation(const unsigned char *mo, size_t size, uint32_t i, size_t *len)
{
    uint32_t table = mo_word(mo, size, 16);
    uint32_t n = mo_word(mo, size, (size_t)table + 8 * i);
    uint32_t at = mo_word(mo, size, (size_t)table + 8 * i + 4);
    if ((size_t)at + n >= size)
        return NULL;
    *len = strnlen((const char *)mo + at, n);
    return (const char *)mo + at;
}

static void load_catalog(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    static unsigned char mo[8 << 20];
    size_t size = fread(mo, 1, sizeof mo, f);
    fclose(f);
    uint32_t entries = mo_word(mo, size, 8);
    size_t len;
    const char *header = entries ? mo_translation(mo, size, 0, &len) : NULL;
    if (mo_word(mo, size, 0) != 0x950412de || !header || !memmem(header, len, "charset=UTF-8", 13))
        return;
    catalog_count++;
    uint32_t stride = entries / TEXTS_PER_CATALOG + 1;
    for (uint32_t i = 1; i < entries && text_count < MAX_TEXTS; i += stride) {
        const char *t = mo_translation(mo, size, i, &len);
        if (t && len > 0 && len <= MAX_TEXT_LEN)
            texts[text_count++] = strndup(t, len);
    }
}

static void load_catalogs(void)
{
    glob_t g;
    if (glob("/usr/share/locale/*/LC_MESSAGES/*.mo", 0, NULL, &g) != 0)
        return;
    for (size_t i = 0; i < g.gl_pathc && text_count < MAX_TEXTS; i++)
        load_catalog(g.gl_pathv[i]);
    globfree(&g);
}

/* The character set's name for iconv, or NULL (MULE_INTERNAL: none).
 * euckr as CP949, whose extended syllables MariaDB's euckr reads. */
static const char *iconv_name(const char *name)
{
    static const char *const names[][2] = {
        {"UTF8", "UTF-8"}, {"EUC_JP", "EUC-JP"}, {"EUC_JIS_2004", "EUC-JISX0213"},
        {"EUC_CN", "EUC-CN"}, {"EUC_KR", "EUC-KR"}, {"EUC_TW", "EUC-TW"}, {"SJIS", "CP932"},
        {"SHIFT_JIS_2004", "SHIFT_JISX0213"}, {"BIG5", "BIG5"}, {"GBK", "GBK"}, {"UHC", "CP949"},
        {"GB18030", "GB18030"}, {"JOHAB", "JOHAB"}, {"LATIN1", "ISO-8859-1"},
        {"WIN1252", "CP1252"}, {"WIN1251", "CP1251"}, {"KOI8R", "KOI8-R"},
        {"utf8mb4", "UTF-8"}, {"utf8mb3", "UTF-8"}, {"sjis", "SHIFT_JIS"}, {"cp932", "CP932"},
        {"gbk", "GBK"}, {"big5", "BIG5"}, {"gb18030", "GB18030"}, {"euckr", "CP949"},
        {"gb2312", "EUC-CN"}, {"ujis", "EUC-JP"}, {"eucjpms", "EUC-JP-MS"}, {"latin1", "CP1252"},
        {"cp1251", "CP1251"}, {"ascii", "ASCII"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(names[i][0], name))
            return names[i][1];
    return NULL;
}

/* Whether every byte of s[0, n) is part of a valid character of enc. */
static bool valid_in(const qg_encoding *enc, const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t len = s[i] < 0x80 ? 1 : qg_encoding_char_len(enc, s + i, n - i);
        if (!len)
            return false;
        i += len;
    }
    return true;
}

/* A translation that the connection's encoding can write, converted to
 * it; false when none of a few tried could be. */
static bool put_translation(value *v, const qg_encoding *enc)
{
    static const qg_encoding *open_for;
    static iconv_t cd = (iconv_t)-1;
    if (!text_count)
        return false;
    if (open_for != enc) {
        if (cd != (iconv_t)-1)
            iconv_close(cd);
        const char *to = iconv_name(qg_encoding_name(enc));
        cd = to ? iconv_open(to, "UTF-8") : (iconv_t)-1;
        open_for = enc;
    }
    if (cd == (iconv_t)-1)
        return false;
    for (int tries = 0; tries < 24; tries++) {
        char *in = texts[rng_below((unsigned)text_count)];
        size_t in_left = strlen(in);
        unsigned char buf[2 * MAX_TEXT_LEN];
        char *out = (char *)buf;
        size_t out_left = sizeof buf;
        iconv(cd, NULL, NULL, NULL, NULL);
        if (iconv(cd, &in, &in_left, &out, &out_left) == (size_t)-1 ||
            iconv(cd, NULL, NULL, &out, &out_left) == (size_t)-1)
            continue;
        size_t n = sizeof buf - out_left;
        if (valid_in(enc, buf, n)) {
            put(v, buf, n);
            return true;
        }
    }
    return false;
}

/* A realistic value, valid in enc: one to three fragments. */
static void gen_value(value *v, const qg_encoding *enc, bool nul_ok)
{
    v->n = 0;
    unsigned parts = 1 + rng_below(3);
    for (unsigned i = 0; i < parts; i++) {
        switch (rng_below(16)) {
        case 0: puts_v(v, PICK(paths)); break;
        case 1: puts_v(v, PICK(regexes)); break;
        case 2: puts_v(v, PICK(prose)); break;
        case 3: puts_v(v, PICK(sqlish)); break;
        case 4: puts_v(v, PICK(quotes)); break;
        case 5: puts_v(v, PICK(markup)); break;
        case 6: puts_v(v, PICK(code)); break;
        case 7: put_base64(v); break;
        case 8: puts_v(v, PICK(emails)); break;
        case 9: puts_v(v, PICK(signatures)); break;
        case 10: puts_v(v, PICK(controls)); break;
        case 11:
        case 12:
        case 13:
            if (!put_translation(v, enc))
                put_text_mb(v, enc, 1 + rng_below(6));
            break;
        default: put_text_mb(v, enc, 1 + rng_below(6)); break;
        }
        if (rng_chance(20))
            puts_v(v, " ");
    }
    if (nul_ok && rng_chance(3))
        put(v, "\0", 1);
    if (rng_chance(25)) /* many a value ends in a character with a 0x5c trail, or a backslash */
        put_text_mb(v, enc, 1);
}

/* ---------------------------------------------------------------- templates */

/* A template: code with '?' where a literal goes; `prefix[i]` is written
 * before the i-th literal (E, U&, N …). */
typedef struct template {
    char text[2048];
    unsigned literals;
    const char *prefix[MAX_LITERALS];
    bool like[MAX_LITERALS];
    unsigned prose_percent; /* how often a prose comment follows a literal */
    bool pg;
} template;

static void tpl_add(template *t, const char *s)
{
    strncat(t->text, s, sizeof t->text - strlen(t->text) - 1);
}

/* A comment as people write them by hand: prose with apostrophes and
 * double quotes, as a line comment (--, MySQL's #) or a block comment. */
static void tpl_prose(template *t)
{
    static const char *const prose_comments[] = {
        "it's fine", "don't cache this", "the 'name' column", "can't be NULL here", "l'ete",
        "say \"hi\"", "won't change", "see the \"users\" table", "O'Brien's order",
        "we'll fix it later", "TODO: isn't used", "the user's e-mail", "it's \"quoted\" here",
        "n'oublie pas", "c'est l'heure", "rock 'n' roll", "\"legacy\" path, don't touch",
        "'x' or 'y'", "what's this for", "shouldn't happen", "it's 5' long",
    };
    const char *text = PICK(prose_comments);
    switch (rng_below(t->pg ? 2 : 3)) {
    case 0:
        tpl_add(t, " -- ");
        tpl_add(t, text);
        tpl_add(t, "\n");
        break;
    case 1:
        tpl_add(t, " /* ");
        tpl_add(t, text);
        tpl_add(t, " */");
        break;
    default:
        tpl_add(t, " # ");
        tpl_add(t, text);
        tpl_add(t, "\n");
        break;
    }
}

static void tpl_lit(template *t, const char *prefix, bool like)
{
    if (t->literals >= MAX_LITERALS)
        return;
    t->prefix[t->literals] = prefix;
    t->like[t->literals] = like;
    t->literals++;
    tpl_add(t, "?");
    if (rng_chance(t->prose_percent))
        tpl_prose(t);
}

/* `prefixes`: for the attack side, the PG string forms a template may use. */
static void gen_template(template *t, qg_dialect dialect, unsigned flags, bool prefixes)
{
    bool pg = dialect == QG_DIALECT_POSTGRES;
    memset(t, 0, sizeof *t);
    t->pg = pg;
    /* a third of the templates are commented by hand, before and after
     * their literals */
    if (rng_chance(33)) {
        t->prose_percent = 50;
        if (rng_chance(40))
            tpl_prose(t);
    }
    unsigned k = 1 + rng_below(MAX_LITERALS);
    static const char *const cols[] = {"a", "b", "name", "note", "path", "body", "title", "tag"};
    const char *q = pg || (flags & QG_ANSI_QUOTES) ? "\"" : "`";
    /* U&'' only where standard_conforming_strings is on: PostgreSQL
     * refuses the whole statement otherwise (0A000) */
    bool unicode_strings = flags & QG_STD_STRINGS;
#define LIT()                                                                                   \
    tpl_lit(t,                                                                                  \
            prefixes && pg ? PICK(((const char *[]){"", "", "", "E", unicode_strings ? "U&" : "E", \
                                                    "N", "e"}))                                 \
                           : "",                                                                \
            false)
    switch (rng_below(12)) {
    case 0:
        tpl_add(t, "INSERT INTO t VALUES (");
        for (unsigned i = 0; i < k; i++) {
            if (i)
                tpl_add(t, ", ");
            LIT();
        }
        tpl_add(t, ")");
        break;
    case 1:
        tpl_add(t, "SELECT * FROM t WHERE ");
        for (unsigned i = 0; i < k; i++) {
            if (i)
                tpl_add(t, PICK(((const char *[]){" AND ", " OR ", "\n  AND "})));
            tpl_add(t, cols[i]);
            tpl_add(t, " = ");
            LIT();
        }
        break;
    case 2:
        tpl_add(t, "UPDATE t SET ");
        for (unsigned i = 0; i < k; i++) {
            if (i)
                tpl_add(t, ", ");
            tpl_add(t, cols[i]);
            tpl_add(t, "=");
            LIT();
        }
        tpl_add(t, " WHERE id = 42");
        break;
    case 3:
        tpl_add(t, "SELECT id FROM t WHERE name LIKE ");
        tpl_lit(t, "", true);
        tpl_add(t, pg ? " ESCAPE '!' ORDER BY id" : " ORDER BY id LIMIT 10");
        break;
    case 4:
        tpl_add(t, "SELECT id FROM t WHERE name IN (");
        for (unsigned i = 0; i < k; i++) {
            if (i)
                tpl_add(t, ",");
            LIT();
        }
        tpl_add(t, ")");
        break;
    case 5:
        tpl_add(t, pg ? "SELECT lower(" : "SELECT concat(");
        LIT();
        tpl_add(t, pg ? ") || " : ", ");
        LIT();
        tpl_add(t, pg ? ", replace(" : ", replace(");
        LIT();
        tpl_add(t, ", 'a', 'b')");
        if (!pg)
            tpl_add(t, ")");
        break;
    case 6:
        tpl_add(t, "INSERT INTO t (a, b) VALUES (");
        LIT();
        tpl_add(t, ", ");
        LIT();
        tpl_add(t, "); UPDATE t SET note = ");
        LIT();
        tpl_add(t, " WHERE kind = 'user';");
        break;
    case 7:
        tpl_add(t, "SELECT *\nFROM t\nWHERE a = ");
        LIT();
        tpl_add(t, "\n  AND kind = 'user'\n  AND b = ");
        LIT();
        tpl_add(t, "\nORDER BY 1");
        break;
    case 8:
        tpl_add(t, "/* svc:api */ SELECT * FROM t WHERE a = ");
        LIT();
        tpl_add(t, " AND b = ");
        LIT();
        break;
    case 9:
        tpl_add(t, "SELECT * FROM t WHERE a = ");
        LIT();
        tpl_add(t, " /*action='list',route='/users'*/");
        break;
    case 10:
        tpl_add(t, "SELECT * FROM ");
        tpl_add(t, q);
        tpl_add(t, "t");
        tpl_add(t, q);
        tpl_add(t, " WHERE ");
        tpl_add(t, q);
        tpl_add(t, "a");
        tpl_add(t, q);
        tpl_add(t, " = ");
        LIT();
        tpl_add(t, pg ? " AND b = " : " AND b = ");
        LIT();
        tpl_add(t, " LIMIT 1");
        break;
    default:
        tpl_add(t, pg ? "SELECT " : "SELECT ");
        for (unsigned i = 0; i < k; i++) {
            if (i)
                tpl_add(t, ", ");
            LIT();
            if (pg && rng_chance(30))
                tpl_add(t, "::text");
        }
        break;
    }
#undef LIT
}

/* ------------------------------------------------------------- statements */

typedef struct statement {
    unsigned char sql[MAX_SQL];
    size_t len;
} statement;

/* Where a literal's body is in a statement: between its quotes. */
typedef struct span {
    size_t start, end;
} span;

/* Builds the statement: template code and literals[i] in place of each
 * '?'; `bodies` (may be NULL) gets where each literal's body went. */
static void build(statement *st, const template *t, unsigned char (*lits)[2 * MAX_VALUE + 16],
                  const size_t *lit_len, span *bodies)
{
    st->len = 0;
    unsigned i = 0;
    for (const char *p = t->text; *p; p++) {
        if (*p == '?' && i < t->literals) {
            size_t pl = strlen(t->prefix[i]);
            memcpy(st->sql + st->len, t->prefix[i], pl);
            st->len += pl;
            memcpy(st->sql + st->len, lits[i], lit_len[i]);
            if (bodies) {
                size_t q = 0; /* the escaper's opening quote, after its prefix */
                while (q < lit_len[i] && lits[i][q] != '\'' && lits[i][q] != '"')
                    q++;
                bodies[i] = (span){st->len + q + 1, st->len + lit_len[i] - 1};
            }
            st->len += lit_len[i];
            i++;
        } else {
            st->sql[st->len++] = (unsigned char)*p;
        }
    }
}

typedef struct reading {
    qg_token tok[96];
    unsigned count;
    bool overflow;
} reading;

static void read_server(const qg_context *ctx, const statement *st, reading *r)
{
    qg_lexer lx;
    qg_token tok;
    r->count = 0;
    r->overflow = false;
    qg_lexer_init(&lx, ctx, (const char *)st->sql, st->len, QG_READ_SERVER, NULL);
    while (qg_lexer_next(&lx, &tok)) {
        if (r->count == sizeof r->tok / sizeof r->tok[0]) {
            r->overflow = true;
            return;
        }
        r->tok[r->count++] = tok;
    }
}

/* The structure of a statement in S, as the server runs it: the kinds of
 * its tokens and the code between them, comments and whitespace left out
 * (a comment runs nothing; whitespace only separates).  Code bytes are
 * 0-255, a token 256 + kind * 16 + form.  Returns the length, or 0 when S
 * found more tokens than the reading holds or one is unterminated. */
static size_t skeleton(const statement *st, const reading *r, uint16_t *out)
{
    if (r->overflow)
        return 0;
    size_t n = 0, from = 0;
    for (unsigned i = 0; i <= r->count; i++) {
        size_t to = i < r->count ? r->tok[i].start : st->len;
        for (size_t p = from; p < to; p++)
            if (!strchr(" \t\n\r\f\v", st->sql[p]) || !st->sql[p])
                out[n++] = st->sql[p];
        if (i == r->count)
            break;
        const qg_token *t = &r->tok[i];
        if (t->unterminated)
            return 0;
        if (t->kind != QG_TOK_COMMENT)
            out[n++] = (uint16_t)(256 + t->kind * 16 + t->form);
        from = t->end;
    }
    return n ? n : 1;
}

/* Whether two statements have the same structure in S: the same kinds of
 * tokens and the same code between them, comments and whitespace aside. */
static bool same_structure(const statement *a, const reading *ra, const statement *b,
                           const reading *rb)
{
    static uint16_t ka[MAX_SQL + 1], kb[MAX_SQL + 1];
    size_t na = skeleton(a, ra, ka), nb = skeleton(b, rb, kb);
    return na && na == nb && memcmp(ka, kb, na * sizeof ka[0]) == 0;
}

/* Whether S runs some of the input the escaper put in the literal body
 * `b`: a byte of it (not white space) outside every token of S, or a
 * comment of S that begins in it and hides what follows it.  Where the
 * input runs nothing, a changed structure comes from the template's own
 * text (its prose comment read as a literal after a quote the input
 * escaped for another reading): no injection. */
static bool input_runs(const statement *st, const reading *r, const span *b)
{
    size_t from = 0;
    for (unsigned i = 0; i <= r->count; i++) {
        size_t to = i < r->count ? r->tok[i].start : st->len;
        for (size_t p = from > b->start ? from : b->start; p < to && p < b->end; p++)
            if (!strchr(" \t\n\r\f\v", st->sql[p]))
                return true;
        if (i == r->count)
            break;
        const qg_token *t = &r->tok[i];
        if (t->kind == QG_TOK_COMMENT && t->start >= b->start && t->start < b->end &&
            t->end > b->end)
            return true;
        from = t->end;
    }
    return false;
}

/* Whether S finds a backslash in code, which both servers reject as a
 * syntax error (MySQL's \N, NULL, aside). */
static bool backslash_in_server_code(qg_dialect d, const statement *st, const reading *r)
{
    size_t from = 0;
    for (unsigned i = 0; i <= r->count; i++) {
        size_t to = i < r->count ? r->tok[i].start : st->len;
        for (size_t p = from; p < to; p++)
            if (st->sql[p] == '\\' && !(d == QG_DIALECT_MYSQL && p + 1 < to && st->sql[p + 1] == 'N'))
                return true;
        if (i < r->count)
            from = r->tok[i].end;
    }
    return false;
}

/* ------------------------------------------------------------------- report */

typedef struct example {
    unsigned shown_legit, shown_attack, shown_both, shown_history;
    unsigned limit;
    FILE *sample;              /* --sample: effective attacks for the servers */
    uint64_t sample_per_setting;
} example;

static void print_bytes(FILE *f, const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = s[i];
        if (c == '\\')
            fputs("\\\\", f);
        else if (c >= 0x20 && c < 0x7f)
            fputc(c, f);
        else
            fprintf(f, "\\x%02x", c);
    }
}

static void show(const char *what, const setting *s, const char *esc, const statement *st,
                 const qg_result *res)
{
    fprintf(stderr, "%s [%s %s %s, %s]", what, s->dialect == QG_DIALECT_POSTGRES ? "pg" : "mysql",
            s->encoding, s->mode, esc);
    if (res && res->count)
        fprintf(stderr, " %s@%zu", qg_reason_name(res->findings[0].reason), res->findings[0].offset);
    fputs(": ", stderr);
    print_bytes(stderr, st->sql, st->len);
    fputc('\n', stderr);
}

static void put_hex(FILE *f, const statement *st)
{
    for (size_t i = 0; i < st->len; i++)
        fprintf(f, "%02x", st->sql[i]);
}

/* One line of --sample: "pg|mysql ENCODING FLAGS ESCAPER ATTACK TEMPLATE",
 * the attack and the template with harmless values in hex, for
 * tests/measure/attacks_on_servers.py. */
static void write_sample(FILE *f, const setting *s, const char *esc, const statement *attack,
                         const statement *benign)
{
    fprintf(f, "%s %s %u %s ", s->dialect == QG_DIALECT_POSTGRES ? "pg" : "mysql", s->encoding,
            s->flags, esc);
    put_hex(f, attack);
    fputc(' ', f);
    put_hex(f, benign);
    fputc('\n', f);
}

/* --------------------------------------------------------------- the runs */

/* The checker's verdict, which the reference implementation (no vector
 * scans, no block skip, the readings compared whenever S saw an ambiguous
 * byte) must share. */
static qg_verdict check_both(const setting *s, const qg_context *ctx, const statement *st,
                             qg_result *res, stats *out)
{
    qg_verdict fast = qg_check(ctx, (const char *)st->sql, st->len, res);
    int fast_build = qg_vectors_in_use();
    qg_allow_vectors(QG_VECTORS_REFERENCE);
    qg_verdict ref = qg_check(ctx, (const char *)st->sql, st->len, NULL);
    qg_allow_vectors(fast_build);
    if (fast != ref && out->differ++ < 3)
        show(fast == QG_VERDICT_BLOCK ? "fast blocks, reference not" : "reference blocks, fast not",
             s, "", st, res);
    return fast;
}

typedef unsigned char literal_buf[2 * MAX_VALUE + 16];

static const qg_encoding *wrong_multibyte(qg_dialect d, const qg_encoding *enc)
{
    static const char *const pg[] = {"SJIS", "GBK", "BIG5", "GB18030", "UTF8"};
    static const char *const my[] = {"sjis", "gbk", "big5", "gb18030", "utf8mb4"};
    for (int tries = 0; tries < 8; tries++) {
        const qg_encoding *e = qg_encoding_find(d, d == QG_DIALECT_POSTGRES ? PICK(pg) : PICK(my));
        if (e && e != enc)
            return e;
    }
    return NULL;
}

/* Whether some character of enc has 0x5c as its second byte. */
static bool has_backslash_trail(const qg_encoding *enc)
{
    for (unsigned lead = 0x81; lead <= 0xfe; lead++) {
        unsigned char c[2] = {(unsigned char)lead, 0x5c};
        if (qg_encoding_char_len(enc, c, 2) == 2)
            return true;
    }
    return false;
}

/* The escapers a program on this connection may use correctly (DBD::Pg's
 * quote, byte by byte, only where no character has a trail byte 0x5c). */
static escaper legit_escaper(const setting *s, const qg_encoding *enc)
{
    if (s->dialect == QG_DIALECT_POSTGRES) {
        escaper e = (escaper)PICK(((const int[]){ESC_PQ_STRING, ESC_PQ_LITERAL, ESC_PSYCOPG2, ESC_DBD_PG}));
        return e == ESC_DBD_PG && has_backslash_trail(enc) ? ESC_PQ_LITERAL : e;
    }
    unsigned r = rng_below(100);
    if (!(s->flags & (QG_ANSI_QUOTES | QG_NO_BACKSLASH_ESCAPES)) && r < 20)
        return ESC_MY_REAL_DQ;
    /* mysqlnd knows no gb18030 */
    if (r < 60 && strcmp(s->encoding, "gb18030") != 0)
        return ESC_MYSQLND;
    return ESC_MY_REAL;
}

/* Whether the call site's history would let a blocked statement through:
 * the site (one template) sent the same template with harmless values
 * before, and it passed; the history keeps the shapes (src/core/shape.c) of
 * what passed, and a statement of a known shape passes. */
static bool history_passes(const qg_context *ctx, const statement *st, const statement *benign)
{
    return qg_shape_compute(ctx, (const char *)st->sql, st->len, NULL, 0) ==
           qg_shape_compute(ctx, (const char *)benign->sql, benign->len, NULL, 0);
}

/* Text that is both (PostgreSQL): a literal, then an E'' literal written by
 * an encoding-aware backslash escaper (correct in E'' whatever
 * standard_conforming_strings says), whose value holds a quote (\'), then
 * the program's own dollar quote holding a quote.  A quote doubler's
 * reading takes the \' for the end of its literal and the dollar quote's
 * quote for the start of the next, and is in step. */
static void run_both(const setting *s, const qg_context *ctx, stats *st_out, example *ex)
{
    template t;
    memset(&t, 0, sizeof t);
    tpl_add(&t, "SELECT ");
    tpl_lit(&t, "", false);
    tpl_add(&t, ", ");
    tpl_lit(&t, "E", false);
    tpl_add(&t, ", $q$");
    tpl_add(&t, PICK(((const char *[]){"it's", "x'y", "'", "a''b", "O'Brien -- x"})));
    tpl_add(&t, "$q$");
    tpl_add(&t, PICK(((const char *[]){"", " FROM t", ", 1", " AS c WHERE true"})));
    literal_buf lits[2], benign[2];
    size_t lit_len[2], benign_len[2];
    escaper first = legit_escaper(s, ctx->encoding);
    for (unsigned i = 0; i < 2; i++) {
        value v;
        gen_value(&v, ctx->encoding, false);
        if (i == 1 && rng_chance(60)) { /* a quote, between characters */
            size_t at = rng_below((unsigned)v.n + 1);
            while (at > 0 && v.b[at - 1] >= 0x80)
                at--;
            memmove(v.b + at + 1, v.b + at, v.n - at);
            v.b[at] = '\'';
            v.n++;
        }
        escaper e = i == 0 ? first : ESC_AWARE_BACKSLASH;
        lit_len[i] = escape_literal(e, s->dialect, ctx->encoding, NULL, s->flags, v.b, v.n, lits[i]);
        benign_len[i] = escape_literal(e, s->dialect, ctx->encoding, NULL, s->flags,
                                       (const unsigned char *)"x", 1, benign[i]);
    }
    statement st, ref;
    build(&st, &t, lits, lit_len, NULL);
    build(&ref, &t, benign, benign_len, NULL);
    st_out->both++;
    qg_result res;
    if (check_both(s, ctx, &st, &res, st_out) != QG_VERDICT_BLOCK)
        return;
    st_out->both_blocked++;
    if (history_passes(ctx, &st, &ref))
        st_out->both_history++;
    if (ex->shown_both++ < ex->limit)
        show("both, blocked", s, escaper_name[first], &st, &res);
}

static void run_legit(const setting *s, const qg_context *ctx, stats *st_out, example *ex)
{
    template t;
    value v;
    literal_buf lits[MAX_LITERALS], benign[MAX_LITERALS];
    size_t lit_len[MAX_LITERALS], benign_len[MAX_LITERALS];
    statement st, ref;
    bool nul_ok = s->dialect == QG_DIALECT_MYSQL && !(s->flags & QG_NO_BACKSLASH_ESCAPES);
    gen_template(&t, s->dialect, s->flags, false);
    escaper e = legit_escaper(s, ctx->encoding);
    for (unsigned i = 0; i < t.literals; i++) {
        gen_value(&v, ctx->encoding, nul_ok);
        if (t.like[i]) {
            memmove(v.b + 1, v.b, v.n);
            v.b[0] = '%';
            v.b[++v.n] = '%';
            v.n++;
        }
        lit_len[i] = escape_literal(e, s->dialect, ctx->encoding, NULL, s->flags, v.b, v.n, lits[i]);
        unsigned char x[2] = {'x', '\\'};
        benign_len[i] = escape_literal(e, s->dialect, ctx->encoding, NULL, s->flags, x,
                                       has_backslash_char(ctx->encoding, v.b, v.n) ? 2 : 1, benign[i]);
    }
    build(&st, &t, lits, lit_len, NULL);
    build(&ref, &t, benign, benign_len, NULL);
    st_out->legit++;
    qg_result res;
    qg_verdict verdict = check_both(s, ctx, &st, &res, st_out);
    reading rs, rr;
    read_server(ctx, &st, &rs);
    read_server(ctx, &ref, &rr);
    if (!same_structure(&st, &rs, &ref, &rr)) {
        fprintf(stderr, "generator error: a correctly escaped statement reads otherwise\n");
        show("  statement", s, escaper_name[e], &st, &res);
        exit(2);
    }
    if (verdict == QG_VERDICT_BLOCK) {
        st_out->legit_blocked++;
        st_out->legit_history += history_passes(ctx, &st, &ref);
        if (ex->shown_legit++ < ex->limit)
            show("legitimate blocked", s, escaper_name[e], &st, &res);
    } else if (verdict == QG_VERDICT_LOG) {
        st_out->legit_logged++;
    }
}

/* A byte that makes a character with 0x5c after it, or 0 when the
 * encoding has none. */
static unsigned char lead_for_backslash(const qg_encoding *enc)
{
    for (int tries = 0; tries < 200; tries++) {
        unsigned char c[2] = {(unsigned char)(0x81 + rng_below(0x7e)), 0x5c};
        if (qg_encoding_char_len(enc, c, 2) == 2)
            return c[0];
    }
    return 0;
}

/* An attacker's input: bytes before the breakout, the breakout, code, end.
 * `step`: first a lead byte of `other` before a quote, which an escaper
 * believing `other` steps over alone (the pair is no character of it),
 * escaping the quote: `lead \ q`, also a character `lead 5c` and the
 * literal's end. */
static void gen_payload(value *v, const qg_encoding *enc, const qg_encoding *other, bool swallow,
                        bool step)
{
    v->n = 0;
    if (rng_chance(40))
        puts_v(v, PICK(((const char *[]){"x", "admin", "1", "", "a b"})));
    unsigned char step_lead = step ? lead_for_backslash(other) : 0;
    if (step_lead) {
        put(v, &step_lead, 1);
        puts_v(v, rng_chance(80) ? "'" : "\"");
    }
    switch (rng_below(6)) {
    case 0:
    case 1: {
        unsigned char lead = lead_for_backslash(rng_chance(70) || !other ? enc : other);
        if (lead)
            put(v, &lead, 1);
        break;
    }
    case 2: { /* an invalid or ill-formed sequence */
        static const unsigned char bad[][3] = {{0xc8}, {0xe8, 0xa1}, {0xf0, 0x90, 0x80}, {0xbf}, {0x81}, {0xa5}};
        const unsigned char *b = bad[rng_below(6)];
        put(v, b, b[1] ? (b[2] ? 3 : 2) : 1);
        break;
    }
    case 3:
        puts_v(v, "\\");
        break;
    default:
        break;
    }
    if (swallow)
        return; /* the next literal holds the code */
    puts_v(v, PICK(((const char *[]){"'", "'", "\\'", "\"", "''", "\\", "'\\", "\\\\'"})));
    puts_v(v, PICK(((const char *[]){" OR 1=1", " OR 'a'='a", " UNION SELECT password FROM users",
                                     "; DROP TABLE users", ") OR (1=1", "), ('x', 'y'",
                                     " AND sleep(5)", " OR ''='", "||(SELECT 1)||", " OR x=",
                                     "; SELECT 1; SELECT '", ""})));
    puts_v(v, PICK(((const char *[]){" -- ", " --", "#", "/*", " -- '", "", "-- x\n", " --\n",
                                     " /* */", "'"})));
}

static void gen_code_payload(value *v)
{
    v->n = 0;
    /* rows added to a VALUES list, without quotes (which a doubler
     * doubles): as wide as the template's own, they keep its shape */
    puts_v(v, PICK(((const char *[]){" OR 1=1 -- ", " OR 1=1#", " UNION SELECT password FROM users -- ",
                                     "; DROP TABLE users; -- ", ") OR 1=1 /*", " OR 1=1 OR ''='",
                                     " OR name=", "x", ", 0), (1, 2) -- ", ", 0), (1, 2)#",
                                     ", 0, 0), (1, 2, 3) -- "})));
}

static const escaper naive_escapers[] = {ESC_ADDSLASHES, ESC_MY_ESCAPE, ESC_BACKSLASH_QUOTE,
                                         ESC_DOUBLER, ESC_DOUBLE_BOTH, ESC_AWARE_BACKSLASH,
                                         ESC_WRONG_MB, ESC_LEAD_TRUSTING};

/* One attack input; `stepped`: by the escaper believing another encoding,
 * its input starting with a step (gen_payload). */
static void run_attack(const setting *s, const qg_context *ctx, stats *st_out, example *ex,
                       bool stepped)
{
    template t;
    value v;
    literal_buf lits[MAX_LITERALS], benign[MAX_LITERALS];
    size_t lit_len[MAX_LITERALS], benign_len[MAX_LITERALS];
    statement st, ref;
    gen_template(&t, s->dialect, s->flags, true);
    escaper e = stepped ? ESC_WRONG_MB : PICK(naive_escapers);
    const qg_encoding *other = wrong_multibyte(s->dialect, ctx->encoding);
    unsigned target = rng_below(t.literals);
    bool swallow = target + 1 < t.literals && rng_chance(30);
    for (unsigned i = 0; i < t.literals; i++) {
        if (i == target)
            gen_payload(&v, ctx->encoding, other, swallow, stepped && other);
        else if (swallow && i == target + 1)
            gen_code_payload(&v);
        else if (rng_chance(70))
            gen_value(&v, ctx->encoding, false);
        else {
            v.n = 0;
            puts_v(&v, PICK(((const char *[]){"alice", "bob", "x", "42", "hello world"})));
        }
        lit_len[i] = escape_literal(e, s->dialect, ctx->encoding, other, s->flags, v.b, v.n, lits[i]);
        benign_len[i] = escape_literal(e, s->dialect, ctx->encoding, other, s->flags,
                                       (const unsigned char *)"x", 1, benign[i]);
    }
    span bodies[MAX_LITERALS];
    build(&st, &t, lits, lit_len, bodies);
    build(&ref, &t, benign, benign_len, NULL);
    st_out->attacks_generated++;
    qg_result res;
    qg_verdict verdict = check_both(s, ctx, &st, &res, st_out);
    /* The server refuses what S finds invalid (PG) or unterminated. */
    qg_context plain;
    qg_context_init(&plain, ctx->dialect, ctx->encoding, ctx->flags);
    plain.action[QG_REASON_STRUCTURE_MISMATCH] = QG_ACTION_IGNORE;
    plain.action[QG_REASON_ILLFORMED_QUOTE] = QG_ACTION_IGNORE;
    plain.action[QG_REASON_ILLFORMED] = QG_ACTION_IGNORE;
    qg_result server_res;
    int fast_build = qg_vectors_in_use();
    qg_allow_vectors(QG_VECTORS_REFERENCE); /* S as differential-tested against the servers */
    qg_verdict refused = qg_check(&plain, (const char *)st.sql, st.len, &server_res);
    qg_allow_vectors(fast_build);
    if (refused == QG_VERDICT_BLOCK) {
        st_out->attacks_rejected++;
        return;
    }
    reading rs, rr;
    read_server(ctx, &st, &rs);
    read_server(ctx, &ref, &rr);
    if (same_structure(&st, &rs, &ref, &rr)) {
        st_out->same_structure++;
        return;
    }
    bool runs = input_runs(&st, &rs, &bodies[target]) ||
                (swallow && input_runs(&st, &rs, &bodies[target + 1]));
    if (!runs) {
        st_out->inert++; /* the template's own text moved, none of the input runs */
        return;
    }
    if (backslash_in_server_code(s->dialect, &st, &rs)) {
        st_out->attacks_rejected++; /* a syntax error: nothing runs */
        return;
    }
    st_out->attacks++;
    if (ex->sample && st_out->attacks <= ex->sample_per_setting)
        write_sample(ex->sample, s, escaper_name[e], &st, &ref);
    if (verdict == QG_VERDICT_BLOCK && history_passes(ctx, &st, &ref)) {
        st_out->attacks_history++;
        if (ex->shown_history++ < ex->limit)
            show("attack the call site's history would pass", s, escaper_name[e], &st, &res);
    }
    if (verdict != QG_VERDICT_BLOCK) {
        st_out->attacks_passed++;
        if (ex->shown_attack++ < ex->limit)
            show("attack passed", s, escaper_name[e], &st, &res);
    }
}

/* ------------------------------------------------------------------- main */

static void settings_of(qg_dialect d, setting *out, unsigned *count)
{
    *count = 0;
    if (d == QG_DIALECT_POSTGRES) {
        for (size_t i = 0; i < sizeof pg_encodings / sizeof *pg_encodings; i++) {
            out[(*count)++] = (setting){d, pg_encodings[i], QG_STD_STRINGS, "scs=on"};
            out[(*count)++] = (setting){d, pg_encodings[i], 0, "scs=off"};
        }
    } else {
        for (size_t i = 0; i < sizeof my_encodings / sizeof *my_encodings; i++) {
            out[(*count)++] = (setting){d, my_encodings[i], 0, "default"};
            out[(*count)++] = (setting){d, my_encodings[i], QG_NO_BACKSLASH_ESCAPES, "NBE"};
            out[(*count)++] = (setting){d, my_encodings[i], QG_ANSI_QUOTES, "ANSI_QUOTES"};
            out[(*count)++] = (setting){d, my_encodings[i], QG_ANSI_QUOTES | QG_NO_BACKSLASH_ESCAPES,
                                        "NBE+ANSI"};
        }
    }
}

static size_t unhex(const char *h, unsigned char *out, size_t cap)
{
    size_t n = 0;
    for (; h[0] && h[1] && n < cap; h += 2) {
        unsigned v;
        if (sscanf(h, "%2x", &v) != 1)
            break;
        out[n++] = (unsigned char)v;
    }
    return n;
}

/* --verify: reads "value literal" lines (hex) that a real escaper wrote and
 * prints how many there were and how many the model writes otherwise. */
static int verify(const char *name, const char *dialect, const char *encoding, unsigned flags)
{
    qg_dialect d = !strcmp(dialect, "pg") ? QG_DIALECT_POSTGRES : QG_DIALECT_MYSQL;
    const qg_encoding *enc = qg_encoding_find(d, encoding);
    int e = -1;
    for (int i = 0; i < ESC_COUNT; i++)
        if (!strcmp(escaper_name[i], name))
            e = i;
    if (!enc || e < 0) {
        fprintf(stderr, "unknown encoding or escaper\n");
        return 2;
    }
    static char line[4 * MAX_SQL];
    unsigned long lines = 0, bad = 0;
    while (fgets(line, sizeof line, stdin)) {
        char *space = strchr(line, ' ');
        if (!space)
            continue;
        *space = '\0';
        unsigned char value[MAX_SQL], real[2 * MAX_SQL], model[2 * MAX_SQL + 8];
        size_t vn = unhex(line, value, sizeof value), rn = unhex(space + 1, real, sizeof real);
        if (vn * 2 + 8 > sizeof model)
            continue;
        size_t mn = escape_literal((escaper)e, d, enc, NULL, flags, value, vn, model);
        lines++;
        if (mn != rn || memcmp(model, real, mn) != 0) {
            if (bad++ < 3) {
                fputs("real:  ", stderr);
                print_bytes(stderr, real, rn);
                fputs("\nmodel: ", stderr);
                print_bytes(stderr, model, mn);
                fputc('\n', stderr);
            }
        }
    }
    printf("%lu %lu\n", lines, bad);
    return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 6 && !strcmp(argv[1], "--verify"))
        return verify(argv[2], argv[3], argv[4], (unsigned)strtoul(argv[5], NULL, 10));
    uint64_t per_dialect = 100000, seed = 20261205;
    unsigned show_limit = 5;
    int only = -1;
    uint64_t sample_per_dialect = 0;
    const char *sample_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--per-dialect") && i + 1 < argc)
            per_dialect = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--sample") && i + 2 < argc) {
            sample_path = argv[++i];
            sample_per_dialect = strtoull(argv[++i], NULL, 10);
        } else if (!strcmp(argv[i], "--show") && i + 1 < argc)
            show_limit = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--dialect") && i + 1 < argc) {
            i++;
            only = !strcmp(argv[i], "pg") ? QG_DIALECT_POSTGRES : QG_DIALECT_MYSQL;
        } else {
            fprintf(stderr, "usage: %s [--per-dialect N] [--seed S] [--show K] [--dialect pg|mysql] "
                            "[--sample FILE K]\n",
                    argv[0]);
            return 2;
        }
    }
    load_catalogs();
    printf("values: %zu translations from %zu gettext catalogs (/usr/share/locale)\n", text_count,
           catalog_count);
    rng_state ^= seed * 0x9e3779b97f4a7c15ull;
    if (!rng_state)
        rng_state = 1;
    uint64_t both_state = rng_state ^ 0x5bd1e9955bd1e995ull;
    uint64_t stepped_state = rng_state ^ 0xc2b2ae3d27d4eb4full;
    example ex = {0, 0, 0, 0, show_limit, NULL, 0};
    if (sample_path && !(ex.sample = fopen(sample_path, "w"))) {
        perror(sample_path);
        return 2;
    }
    uint64_t total_blocked = 0, total_passed = 0, total_differ = 0;
    printf("%-6s %-15s %-12s %9s %8s %8s %9s %8s %8s\n", "dial", "encoding", "mode", "legit",
           "blocked", "logged", "attacks", "passed", "refused");
    for (int d = 0; d < 2; d++) {
        if (only >= 0 && only != d)
            continue;
        setting settings[80];
        unsigned count;
        settings_of((qg_dialect)d, settings, &count);
        uint64_t per_setting = per_dialect / count + 1;
        ex.sample_per_setting = (sample_per_dialect + count - 1) / count;
        stats sum = {0}, stepped = {0};
        for (unsigned i = 0; i < count; i++) {
            const setting *s = &settings[i];
            const qg_encoding *enc = qg_encoding_find(s->dialect, s->encoding);
            if (!enc) {
                fprintf(stderr, "unknown encoding %s\n", s->encoding);
                return 2;
            }
            qg_context ctx;
            qg_context_init(&ctx, s->dialect, enc, s->flags);
            stats st = {0};
            for (uint64_t n = 0; n < per_setting; n++) {
                run_legit(s, &ctx, &st, &ex);
                run_attack(s, &ctx, &st, &ex, false);
                if (n % 4 == 0) {
                    /* a random sequence of its own, as below */
                    uint64_t main_state = rng_state;
                    rng_state = stepped_state;
                    run_attack(s, &ctx, &stepped, &ex, true);
                    stepped_state = rng_state;
                    rng_state = main_state;
                }
                if (s->dialect == QG_DIALECT_POSTGRES && n % 20 == 0) {
                    /* a random sequence of its own: the other sets stay as they were */
                    uint64_t main_state = rng_state;
                    rng_state = both_state;
                    run_both(s, &ctx, &st, &ex);
                    both_state = rng_state;
                    rng_state = main_state;
                }
            }
            printf("%-6s %-15s %-12s %9" PRIu64 " %8" PRIu64 " %8" PRIu64 " %9" PRIu64 " %8" PRIu64
                   " %8" PRIu64 "\n",
                   d ? "mysql" : "pg", s->encoding, s->mode, st.legit, st.legit_blocked,
                   st.legit_logged, st.attacks, st.attacks_passed, st.attacks_rejected);
            sum.legit += st.legit;
            sum.legit_blocked += st.legit_blocked;
            sum.legit_logged += st.legit_logged;
            sum.attacks += st.attacks;
            sum.attacks_passed += st.attacks_passed;
            sum.attacks_rejected += st.attacks_rejected;
            sum.attacks_generated += st.attacks_generated;
            sum.same_structure += st.same_structure;
            sum.inert += st.inert;
            sum.differ += st.differ;
            sum.both += st.both;
            sum.both_blocked += st.both_blocked;
            sum.both_history += st.both_history;
            sum.legit_history += st.legit_history;
            sum.attacks_history += st.attacks_history;
        }
        printf("%-6s %-15s %-12s %9" PRIu64 " %8" PRIu64 " %8" PRIu64 " %9" PRIu64 " %8" PRIu64
               " %8" PRIu64 "   (attack inputs generated %" PRIu64 ", structure unchanged %" PRIu64
               ", input runs nothing %" PRIu64 ", fast and reference differ %" PRIu64 ")\n",
               d ? "mysql" : "pg", "all", "all", sum.legit, sum.legit_blocked, sum.legit_logged,
               sum.attacks, sum.attacks_passed, sum.attacks_rejected, sum.attacks_generated,
               sum.same_structure, sum.inert, sum.differ);
        if (sum.both)
            printf("%-6s %-15s %-12s %9" PRIu64 " %8" PRIu64
                   "   (text that is both: a literal, E'' with \\', a dollar quote with ')\n",
                   d ? "mysql" : "pg", "both", "all", sum.both, sum.both_blocked);
        printf("%-6s %-15s %-12s %9s %8s %8s %9" PRIu64 " %8" PRIu64 " %8" PRIu64
               "   (a wrong-encoding escaper's input with a step: a lead byte before a quote; %" PRIu64
               " generated)\n",
               d ? "mysql" : "pg", "stepped", "all", "", "", "", stepped.attacks,
               stepped.attacks_passed, stepped.attacks_rejected, stepped.attacks_generated);
        printf("%-6s with the call site's history: legitimate blocked %" PRIu64 ", both blocked %" PRIu64
               ", attacks passed %" PRIu64 "\n",
               d ? "mysql" : "pg", sum.legit_blocked - sum.legit_history,
               sum.both_blocked - sum.both_history, sum.attacks_passed + sum.attacks_history);
        total_blocked += sum.legit_blocked;
        total_differ += sum.differ;
        total_passed += sum.attacks_passed + stepped.attacks_passed;
        total_differ += stepped.differ;
    }
    if (ex.sample)
        fclose(ex.sample);
    printf("legitimate blocked: %" PRIu64 "; attacks passed: %" PRIu64
           "; fast and reference differ: %" PRIu64 "\n",
           total_blocked, total_passed, total_differ);
    return total_blocked || total_passed ? 1 : 0;
}
