/*
 * In-process benchmark of the checker.  Not a test: it never fails
 * on speed; it prints a table and writes JSON.
 *
 * For every corpus it times, over the same bytes:
 *   qg_check           the checker alone, one call per query;
 *   scalar             the same with the lexer's byte-at-a-time reference scan
 *                      instead of its SSE2 one;
 *   guard              qg_guard_query_with(): encoding lookup + context + check,
 *                      i.e. everything the shim does for a clean query except
 *                      asking libpq / libmariadb for the connection state;
 *   memchr             memchr for a byte that never occurs (NUL): the floor,
 *                      what touching each byte costs with SIMD;
 *   byteloop           one table lookup per byte, not vectorized: what a
 *                      plain scalar lexer loop costs at best;
 *   strings_floor      where backslashes escape, on ASCII text: the least a
 *                      scan does to know where strings end (strings_floor.h);
 *   pg_query_scan      PostgreSQL's own lexer (libpg_query), for PG corpora in
 *                      UTF8 (the server lexes after converting to its encoding).
 * Corpora are generated with a fixed seed (short OLTP statements of 60-200
 * bytes, 1 MiB INSERT ... VALUES batches; ASCII-only or multibyte-heavy
 * literals; both dialects; PG's with parameters, $1, for literals) plus the
 * PostgreSQL regression SQL, split into statements and as whole files.
 * Each figure is the median of --runs runs.
 * malloc & co. are interposed to count heap allocations per query.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <pg_query.h>

#include "guard.h"
#include "lexer_internal.h"
#include "quoteguard.h"

#include "../tests/agree.h"
#include "strings_floor.h"

/* ------------------------------------------------------ allocation counting */

/* glibc's own entry points: forwarding to them needs no dlsym (which would
 * itself allocate while malloc is being resolved). */
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);

static unsigned long long heap_allocations;

/* Default visibility: the build hides symbols, and a hidden malloc in the
 * executable would not interpose for libpg_query. */
#define INTERPOSE __attribute__((visibility("default")))

INTERPOSE void *malloc(size_t size)
{
    heap_allocations++;
    return __libc_malloc(size);
}

INTERPOSE void *calloc(size_t n, size_t size)
{
    heap_allocations++;
    return __libc_calloc(n, size);
}

INTERPOSE void *realloc(void *p, size_t size)
{
    heap_allocations++;
    return __libc_realloc(p, size);
}

INTERPOSE void *memalign(size_t align, size_t size)
{
    heap_allocations++;
    return __libc_memalign(align, size);
}

INTERPOSE void *aligned_alloc(size_t align, size_t size)
{
    heap_allocations++;
    return __libc_memalign(align, size);
}

INTERPOSE int posix_memalign(void **out, size_t align, size_t size)
{
    heap_allocations++;
    void *p = __libc_memalign(align, size);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

/* ------------------------------------------------------------------ helpers */

static void *xrealloc(void *p, size_t size)
{
    void *q = realloc(p, size);
    if (!q) {
        fprintf(stderr, "bench_checker: out of memory\n");
        exit(1);
    }
    return q;
}

/* CPU time of this thread: the machine may be shared (CI, other jobs), and
 * time spent descheduled is not the checker's. */
static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long peak_rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* splitmix64: small, fast, and the same sequence everywhere. */
static uint64_t rng_state;

static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static unsigned rng_range(unsigned lo, unsigned hi)
{
    return lo + (unsigned)(rng_next() % (uint64_t)(hi - lo + 1));
}

/* ------------------------------------------------------------------ corpora */

typedef enum literal_kind {
    LIT_ASCII,
    LIT_UTF8,
    LIT_SJIS,
    LIT_GBK,
    LIT_BIG5,
    LIT_GB18030
} literal_kind;

typedef struct corpus {
    char shape[24];       /* oltp, batch-1MiB, literal-4KB, regress-stmt, regress-file */
    char literals[24];    /* ascii, multibyte, mixed */
    qg_dialect dialect;
    const char *encoding; /* client encoding name as the server reports it */
    unsigned flags;
    literal_kind kind;
    bool params; /* each literal of a template sent as a parameter: $1, $2, ... */
    char *buf; /* the queries, each followed by a NUL (pg_query_scan wants C strings) */
    size_t used, cap;
    size_t *off, *len;
    size_t count, count_cap;
    size_t bytes; /* sum of query lengths, NULs excluded */
    size_t query_start;
} corpus;

static void corpus_put(corpus *c, const void *bytes, size_t n)
{
    if (c->used + n + 1 > c->cap) {
        c->cap = (c->used + n + 1) * 2;
        c->buf = xrealloc(c->buf, c->cap);
    }
    memcpy(c->buf + c->used, bytes, n);
    c->used += n;
}

static void corpus_byte(corpus *c, unsigned char b)
{
    corpus_put(c, &b, 1);
}

static void corpus_str(corpus *c, const char *s)
{
    corpus_put(c, s, strlen(s));
}

static void corpus_begin_query(corpus *c)
{
    c->query_start = c->used;
}

static size_t corpus_query_len(const corpus *c)
{
    return c->used - c->query_start;
}

static void corpus_drop_query(corpus *c)
{
    c->used = c->query_start;
}

static void corpus_end_query(corpus *c)
{
    if (c->count == c->count_cap) {
        c->count_cap = c->count_cap ? c->count_cap * 2 : 1024;
        c->off = xrealloc(c->off, c->count_cap * sizeof *c->off);
        c->len = xrealloc(c->len, c->count_cap * sizeof *c->len);
    }
    size_t n = c->used - c->query_start;
    c->off[c->count] = c->query_start;
    c->len[c->count] = n;
    c->count++;
    c->bytes += n;
    corpus_byte(c, '\0');
}

static const char *corpus_query(const corpus *c, size_t i)
{
    return c->buf + c->off[i];
}

static void emit_utf8(corpus *c, uint32_t cp)
{
    unsigned char b[4];
    size_t n;
    if (cp < 0x800) {
        b[0] = (unsigned char)(0xc0 | (cp >> 6));
        b[1] = (unsigned char)(0x80 | (cp & 0x3f));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (unsigned char)(0xe0 | (cp >> 12));
        b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
        b[2] = (unsigned char)(0x80 | (cp & 0x3f));
        n = 3;
    } else {
        b[0] = (unsigned char)(0xf0 | (cp >> 18));
        b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
        b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
        b[3] = (unsigned char)(0x80 | (cp & 0x3f));
        n = 4;
    }
    corpus_put(c, b, n);
}

/* A trail byte from [lo1, hi1] or [lo2, hi2], the ASCII part included. */
static unsigned char pick_trail(unsigned lo1, unsigned hi1, unsigned lo2, unsigned hi2)
{
    unsigned span1 = hi1 - lo1 + 1, span2 = hi2 - lo2 + 1;
    unsigned r = rng_range(0, span1 + span2 - 1);
    return (unsigned char)(r < span1 ? lo1 + r : lo2 + r - span1);
}

/* One multibyte character of the literal kind.  One in fifty of the
 * double-byte encodings' characters has the trail byte 0x5c (SJIS 表 ソ 能,
 * GBK/BIG5 likewise; uniform trails would give about one in 190): the bytes
 * a byte-wise escaper misreads. */
static void emit_multibyte_char(corpus *c, literal_kind kind)
{
    bool backslash_trail = rng_range(0, 49) == 0;
    unsigned char b[4];
    switch (kind) {
    case LIT_ASCII:
        corpus_byte(c, (unsigned char)rng_range('a', 'z'));
        return;
    case LIT_UTF8: {
        unsigned r = rng_range(0, 9);
        if (r < 3)
            emit_utf8(c, rng_range(0xc0, 0x24f)); /* Latin accents */
        else if (r < 9)
            emit_utf8(c, rng_range(0x4e00, 0x9fff)); /* CJK */
        else
            emit_utf8(c, rng_range(0x1f300, 0x1f64f)); /* emoji */
        return;
    }
    case LIT_SJIS:
        if (rng_range(0, 19) == 0) {
            corpus_byte(c, (unsigned char)rng_range(0xa1, 0xdf)); /* half-width kana */
            return;
        }
        b[0] = (unsigned char)(rng_range(0, 1) ? rng_range(0x88, 0x9f) : rng_range(0xe0, 0xea));
        b[1] = backslash_trail ? 0x5c : pick_trail(0x40, 0x7e, 0x80, 0xfc);
        corpus_put(c, b, 2);
        return;
    case LIT_GBK:
        b[0] = (unsigned char)rng_range(0x81, 0xfe);
        b[1] = backslash_trail ? 0x5c : pick_trail(0x40, 0x7e, 0x80, 0xfe);
        corpus_put(c, b, 2);
        return;
    case LIT_BIG5:
        b[0] = (unsigned char)rng_range(0xa4, 0xf9);
        b[1] = backslash_trail ? 0x5c : pick_trail(0x40, 0x7e, 0xa1, 0xfe);
        corpus_put(c, b, 2);
        return;
    case LIT_GB18030:
        if (rng_range(0, 3) == 0) {
            b[0] = (unsigned char)rng_range(0x81, 0x84);
            b[1] = (unsigned char)rng_range(0x30, 0x39);
            b[2] = (unsigned char)rng_range(0x81, 0xfe);
            b[3] = (unsigned char)rng_range(0x30, 0x39);
            corpus_put(c, b, 4);
            return;
        }
        b[0] = (unsigned char)rng_range(0x81, 0xfe);
        b[1] = backslash_trail ? 0x5c : pick_trail(0x40, 0x7e, 0x80, 0xfe);
        corpus_put(c, b, 2);
        return;
    }
}

/* Literal body of about `target` bytes: 85 % multibyte characters when the
 * kind is multibyte, else ASCII letters, digits and punctuation; one character
 * in a hundred is an escaped quote, as a correct, encoding-aware escaper
 * writes it: doubled (PG) or backslashed (MySQL).  An escaped
 * quote and the closing quote always follow an ASCII letter: after a 0x5c
 * trail byte they would be exactly what the checker exists to block. */
static void emit_literal_body(corpus *c, size_t target)
{
    size_t start = c->used;
    bool multibyte = c->kind != LIT_ASCII;
    while (c->used - start < target) {
        unsigned r = rng_range(0, 99);
        if (multibyte && r < 85) {
            emit_multibyte_char(c, c->kind);
        } else if (r < 99 || c->used - start + 3 > target) {
            static const char ascii[] = "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,-";
            corpus_byte(c, (unsigned char)ascii[rng_range(0, sizeof ascii - 2)]);
        } else {
            corpus_byte(c, (unsigned char)rng_range('a', 'z'));
            corpus_str(c, c->dialect == QG_DIALECT_POSTGRES ? "''" : "\\'");
        }
    }
    corpus_byte(c, (unsigned char)rng_range('a', 'z'));
}

/* Expands a template: '?' becomes a quoted literal of `lit_bytes` (or a
 * parameter), '#' a number. */
static void emit_template(corpus *c, const char *tpl, size_t lit_bytes)
{
    char num[24];
    unsigned param = 0;
    for (const char *p = tpl; *p; p++) {
        if (*p == '?' && c->params) {
            snprintf(num, sizeof num, "$%u", ++param);
            corpus_str(c, num);
        } else if (*p == '?') {
            corpus_byte(c, '\'');
            emit_literal_body(c, lit_bytes);
            corpus_byte(c, '\'');
        } else if (*p == '#') {
            snprintf(num, sizeof num, "%u", rng_range(1, 999999));
            corpus_str(c, num);
        } else {
            corpus_byte(c, (unsigned char)*p);
        }
    }
}

static const char *const oltp_templates[] = {
    "SELECT id, k, c, pad FROM sbtest# WHERE id = # AND c = ?",
    "UPDATE sbtest# SET c = ?, k = k + 1 WHERE id = #",
    "INSERT INTO customer (id, name, city, note) VALUES (#, ?, ?, ?)",
    "SELECT o.id, o.total FROM orders o JOIN customer c ON c.id = o.customer_id "
    "WHERE c.name = ? ORDER BY o.created_at DESC LIMIT 10",
    "DELETE FROM sessions WHERE token = ? AND expires_at < now()",
    "/* app:checkout */ SELECT price FROM items WHERE sku = ? AND store_id = #",
    "SELECT count(*) FROM events WHERE kind = ? AND created_at > ? -- dashboard\n",
};

#define OLTP_QUERIES 20000
#define OLTP_MIN 60
#define OLTP_MAX 200
#define BATCH_BYTES (1u << 20)
#define BATCHES 3

/* Short statements of OLTP_MIN..OLTP_MAX bytes. */
static void fill_oltp(corpus *c)
{
    size_t ntpl = sizeof oltp_templates / sizeof oltp_templates[0];
    while (c->count < OLTP_QUERIES) {
        const char *tpl = oltp_templates[rng_range(0, (unsigned)ntpl - 1)];
        size_t lits = 0, fixed = 0;
        for (const char *p = tpl; *p; p++) {
            lits += *p == '?';
            fixed += *p == '#' ? 6 : *p == '?' ? 2 : 1;
        }
        size_t target = rng_range(OLTP_MIN, OLTP_MAX);
        size_t lit = target > fixed + lits ? (target - fixed) / lits : 1;
        corpus_begin_query(c);
        emit_template(c, tpl, lit > 1 ? lit - 1 : 1);
        size_t n = corpus_query_len(c);
        if (n < OLTP_MIN || n > OLTP_MAX)
            corpus_drop_query(c);
        else
            corpus_end_query(c);
    }
}

/* The same templates as a client sends them with parameters (PQexecParams,
 * PQprepare). */
static void fill_params(corpus *c)
{
    size_t ntpl = sizeof oltp_templates / sizeof oltp_templates[0];
    while (c->count < OLTP_QUERIES) {
        corpus_begin_query(c);
        emit_template(c, oltp_templates[rng_range(0, (unsigned)ntpl - 1)], 0);
        corpus_end_query(c);
    }
}

/* Binary columns as mysqldump writes them without --hex-blob (MySQL's
 * since 8.0 with the _binary introducer): random bytes escaped as
 * mysql_real_escape_string does, in INSERTs of about DUMP_BYTES each. */
#define DUMP_BYTES (64u << 10)
static void fill_binary_dump(corpus *c)
{
    char row[64];
    for (int b = 0; b < BATCHES; b++) {
        corpus_begin_query(c);
        corpus_str(c, "INSERT INTO `files` VALUES ");
        for (unsigned id = 1; corpus_query_len(c) < DUMP_BYTES; id++) {
            snprintf(row, sizeof row, "%s(%u,_binary '", id > 1 ? "," : "", id);
            corpus_str(c, row);
            for (unsigned n = rng_range(100, 2000); n > 0; n--) {
                unsigned char byte = (unsigned char)rng_range(0, 255);
                const char *escaped = byte == 0      ? "\\0"
                                      : byte == '\n' ? "\\n"
                                      : byte == '\r' ? "\\r"
                                      : byte == 0x1a ? "\\Z"
                                      : byte == '\\' ? "\\\\"
                                      : byte == '\'' ? "\\'"
                                      : byte == '"'  ? "\\\""
                                                     : NULL;
                if (escaped)
                    corpus_str(c, escaped);
                else
                    corpus_byte(c, byte);
            }
            corpus_str(c, "')");
        }
        corpus_end_query(c);
    }
}

/* INSERT ... VALUES batches of about BATCH_BYTES each. */
static void fill_batches(corpus *c)
{
    char row[64];
    for (int b = 0; b < BATCHES; b++) {
        corpus_begin_query(c);
        corpus_str(c, "INSERT INTO items (id, sku, name, description, price) VALUES ");
        for (unsigned id = 1; corpus_query_len(c) < BATCH_BYTES; id++) {
            snprintf(row, sizeof row, "%s(%u, 'SKU-%06u', ", id > 1 ? ",\n" : "", id,
                     rng_range(0, 999999));
            corpus_str(c, row);
            corpus_byte(c, '\'');
            emit_literal_body(c, rng_range(8, 40));
            corpus_str(c, "', '");
            emit_literal_body(c, rng_range(40, 200));
            snprintf(row, sizeof row, "', %u.%02u)", rng_range(1, 9999), rng_range(0, 99));
            corpus_str(c, row);
        }
        corpus_end_query(c);
    }
}

/* Long literals, a post's or a description's body: LONG_QUERIES updates
 * of one literal of about LONG_BYTES each. */
#define LONG_QUERIES 100
#define LONG_BYTES 4000
static void fill_long(corpus *c)
{
    char tail[64];
    while (c->count < LONG_QUERIES) {
        corpus_begin_query(c);
        corpus_str(c, "UPDATE posts SET body = '");
        emit_literal_body(c, LONG_BYTES);
        snprintf(tail, sizeof tail, "' WHERE id = %u", rng_range(1, 999999));
        corpus_str(c, tail);
        corpus_end_query(c);
    }
}

/* ------------------------------------------------------------ pg-regress */

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The .sql files of `dir`, sorted, as malloc'ed paths appended to *paths. */
static void list_sql_files(const char *dir, char ***paths, size_t *n, size_t *cap)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    size_t first = *n;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".sql") != 0)
            continue;
        if (*n == *cap) {
            *cap = *cap ? *cap * 2 : 256;
            *paths = xrealloc(*paths, *cap * sizeof **paths);
        }
        size_t plen = strlen(dir) + len + 2;
        char *path = xrealloc(NULL, plen);
        snprintf(path, plen, "%s/%s", dir, e->d_name);
        (*paths)[(*n)++] = path;
    }
    closedir(d);
    qsort(*paths + first, *n - first, sizeof **paths, compare_names);
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t used = 0, cap = 0, got;
    do {
        if (cap - used < 65536) {
            cap = cap ? cap * 2 : 131072;
            buf = xrealloc(buf, cap);
        }
        got = fread(buf + used, 1, cap - used - 1, f);
        used += got;
    } while (got > 0);
    fclose(f);
    buf[used] = '\0';
    *len = used;
    return buf;
}

static bool contains_ci(const char *line, size_t len, const char *word)
{
    size_t w = strlen(word);
    for (size_t i = 0; i + w <= len; i++)
        if (strncasecmp(line + i, word, w) == 0)
            return true;
    return false;
}

/* What a server would receive from the file: psql meta-command lines (\set …)
 * and COPY … FROM stdin data lines dropped. */
static size_t strip_psql(char *text, size_t len)
{
    size_t out = 0;
    bool copy_data = false;
    for (size_t p = 0; p < len;) {
        const char *line = text + p;
        const char *nl = memchr(line, '\n', len - p);
        size_t n = nl ? (size_t)(nl - line) + 1 : len - p;
        size_t body = nl ? n - 1 : n;
        bool keep;
        if (copy_data) {
            keep = false;
            if (body >= 2 && line[0] == '\\' && line[1] == '.')
                copy_data = false;
        } else {
            keep = line[0] != '\\';
            while (body > 0 && isspace((unsigned char)line[body - 1]))
                body--;
            if (keep && body > 0 && line[body - 1] == ';' && contains_ci(line, body, "copy") &&
                contains_ci(line, body, "stdin"))
                copy_data = true;
        }
        if (keep) {
            memmove(text + out, line, n);
            out += n;
        }
        p += n;
    }
    return out;
}

/* Splits `text` at semicolons outside literals, identifiers, comments and
 * dollar quotes, as found by the checker's own lexer. */
static void split_statements(corpus *c, const qg_context *ctx, const char *text, size_t len)
{
    qg_lexer lx;
    qg_token tok;
    qg_lexer_init(&lx, ctx, text, len, QG_READ_SERVER, NULL);
    size_t stmt = 0, gap = 0;
    for (;;) {
        bool more = qg_lexer_next(&lx, &tok);
        size_t gap_end = more ? tok.start : len;
        for (size_t p = gap; p < gap_end; p++) {
            if (text[p] != ';')
                continue;
            while (stmt < p && isspace((unsigned char)text[stmt]))
                stmt++;
            if (stmt < p) {
                corpus_begin_query(c);
                corpus_put(c, text + stmt, p + 1 - stmt);
                corpus_end_query(c);
            }
            stmt = p + 1;
        }
        if (!more)
            break;
        gap = tok.end;
    }
}

static bool load_regress(corpus *stmts, corpus *files, const char *dir)
{
    char **paths = NULL;
    size_t n = 0, cap = 0;
    list_sql_files(dir, &paths, &n, &cap);
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/plpgsql", dir);
    list_sql_files(sub, &paths, &n, &cap);
    if (n == 0)
        return false;
    qg_context ctx;
    qg_context_init(&ctx, QG_DIALECT_POSTGRES, qg_encoding_find(QG_DIALECT_POSTGRES, "UTF8"),
                    QG_STD_STRINGS);
    for (size_t i = 0; i < n; i++) {
        size_t len;
        char *text = read_file(paths[i], &len);
        if (text) {
            len = strip_psql(text, len);
            corpus_begin_query(files);
            corpus_put(files, text, len);
            corpus_end_query(files);
            split_statements(stmts, &ctx, text, len);
            free(text);
        }
        free(paths[i]);
    }
    free(paths);
    return true;
}

/* ------------------------------------------------------------- the passes */

typedef struct pass_env {
    const corpus *c;
    qg_context ctx;
    qg_settings settings;
} pass_env;

typedef uint64_t (*pass_fn)(const pass_env *env);

static uint64_t pass_check(const pass_env *env)
{
    const corpus *c = env->c;
    qg_result res;
    uint64_t sum = 0;
    for (size_t i = 0; i < c->count; i++)
        sum += qg_check(&env->ctx, corpus_query(c, i), c->len[i], &res);
    return sum;
}

static uint64_t pass_check_scalar(const pass_env *env)
{
    int fast_build = qg_vectors_in_use();
    qg_allow_vectors(QG_VECTORS_REFERENCE);
    uint64_t sum = pass_check(env);
    qg_allow_vectors(fast_build);
    return sum;
}

static uint64_t pass_guard(const pass_env *env)
{
    const corpus *c = env->c;
    qg_decision d;
    uint64_t sum = 0;
    qg_query q = {
        .dialect = c->dialect,
        .encoding_name = c->encoding,
        .flags = c->flags,
        .conn = env,
        .api = "bench",
    };
    for (size_t i = 0; i < c->count; i++) {
        q.sql = corpus_query(c, i);
        q.len = c->len[i];
        sum += qg_guard_query_with(&env->settings, &q, &d);
    }
    return sum;
}

static uint64_t pass_memchr(const pass_env *env)
{
    const corpus *c = env->c;
    uint64_t sum = 0;
    for (size_t i = 0; i < c->count; i++)
        sum += memchr(corpus_query(c, i), '\0', c->len[i]) != NULL;
    return sum;
}

/* The cheapest scalar lexer loop: a class lookup and a branch per byte. */
static unsigned char byte_class[256];

__attribute__((optimize("no-tree-vectorize"), noinline)) static uint64_t
scan_bytes(const unsigned char *s, size_t len)
{
    uint64_t stops = 0;
    for (size_t i = 0; i < len; i++)
        if (byte_class[s[i]])
            stops++;
    return stops;
}

/* A scan's results summed over the corpus's queries; inlined, so that a
 * scan named here is called directly. */
static inline __attribute__((always_inline)) uint64_t
scan_each_query(const pass_env *env, uint64_t (*scan)(const unsigned char *s, size_t len))
{
    const corpus *c = env->c;
    uint64_t sum = 0;
    for (size_t i = 0; i < c->count; i++)
        sum += scan((const unsigned char *)corpus_query(c, i), c->len[i]);
    return sum;
}

static uint64_t pass_byteloop(const pass_env *env)
{
    return scan_each_query(env, scan_bytes);
}

/* strings_floor_for the vector build in use; NULL where there is none. */
static strings_floor_fn strings_floor;

/* Whether the strings floor reads the corpus as the checker does. */
static bool strings_floor_applies(const corpus *c, const qg_context *ctx)
{
    return strings_floor && c->kind == LIT_ASCII && qg_plain_strings_escape(ctx);
}

static uint64_t pass_strings_floor(const pass_env *env)
{
    return scan_each_query(env, strings_floor);
}

static uint64_t pass_pg_query_scan(const pass_env *env)
{
    const corpus *c = env->c;
    uint64_t sum = 0;
    for (size_t i = 0; i < c->count; i++) {
        PgQueryScanResult r = pg_query_scan(corpus_query(c, i));
        sum += r.pbuf.len + (r.error != NULL);
        pg_query_free_scan_result(r);
    }
    return sum;
}

/* ------------------------------------------------------------ measurement */

static int runs = 5;
static double min_time = 0.1;
static volatile uint64_t sink;

typedef struct measure {
    bool done;
    double sec_per_pass; /* median */
    double mbps, ns_per_query;
    double mbps_min, mbps_max; /* over the runs */
    double allocs_per_query;
} measure;

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, compare_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Per method: a warm-up pass that also sets how many passes make one run
 * (at least min_time); then `runs` rounds, each timing every method once in
 * turn, so that all methods see the same conditions; then one untimed pass
 * counting heap allocations.  fns[k] NULL: method k not measured.  Where
 * `ratio` is given, it is the median over the rounds of method num's time
 * to method den's (best timed one right after the other): on a machine
 * whose speed drifts, steadier than the ratio of the two medians. */
static void run_measures(const pass_env *env, pass_fn const *fns, measure *out, int count,
                         int num, int den, double *ratio)
{
    const corpus *c = env->c;
    long *passes = xrealloc(NULL, (size_t)count * sizeof *passes);
    double *sec = xrealloc(NULL, (size_t)count * (size_t)runs * sizeof *sec);
    for (int k = 0; k < count; k++) {
        if (!fns[k])
            continue;
        double t0 = now_seconds();
        sink += fns[k](env);
        double once = now_seconds() - t0;
        passes[k] = once > 0 ? (long)ceil(min_time / once) : 1000;
        if (passes[k] < 1)
            passes[k] = 1;
    }
    for (int r = 0; r < runs; r++) {
        for (int k = 0; k < count; k++) {
            if (!fns[k])
                continue;
            double t0 = now_seconds();
            for (long p = 0; p < passes[k]; p++)
                sink += fns[k](env);
            sec[k * runs + r] = (now_seconds() - t0) / (double)passes[k];
        }
    }
    if (ratio) {
        double *per_round = xrealloc(NULL, (size_t)runs * sizeof *per_round);
        for (int r = 0; r < runs; r++)
            per_round[r] = sec[num * runs + r] / sec[den * runs + r];
        *ratio = median(per_round, runs);
        free(per_round);
    }
    for (int k = 0; k < count; k++) {
        if (!fns[k])
            continue;
        double *s = sec + k * runs;
        measure *m = &out[k];
        m->done = true;
        m->sec_per_pass = median(s, runs);
        m->mbps = (double)c->bytes / m->sec_per_pass / 1e6;
        m->mbps_max = (double)c->bytes / s[0] / 1e6;
        m->mbps_min = (double)c->bytes / s[runs - 1] / 1e6;
        m->ns_per_query = m->sec_per_pass * 1e9 / (double)c->count;
        unsigned long long before = heap_allocations;
        sink += fns[k](env);
        m->allocs_per_query = (double)(heap_allocations - before) / (double)c->count;
    }
    free(passes);
    free(sec);
}

/* memchr right after the check: their ratio is taken round by round. */
enum { M_CHECK, M_MEMCHR, M_SCALAR, M_GUARD, M_BYTELOOP, M_FLOOR, M_PGSCAN, M_COUNT };
static const char *const method_names[M_COUNT] = {
    "qg_check", "memchr", "qg_check_scalar", "guard", "byteloop", "strings_floor", "pg_query_scan"};

typedef struct row {
    corpus *c;
    measure m[M_COUNT];
    double check_over_memchr; /* time, median of the rounds' ratios */
    size_t verdicts[3];       /* clean, log, block */
} row;

static void count_verdicts(row *r, const qg_context *ctx)
{
    qg_result res;
    for (size_t i = 0; i < r->c->count; i++)
        r->verdicts[qg_check(ctx, corpus_query(r->c, i), r->c->len[i], &res)]++;
}

static void env_init(pass_env *env, corpus *c)
{
    env->c = c;
    const qg_encoding *enc = qg_encoding_find(c->dialect, c->encoding);
    if (!enc) {
        fprintf(stderr, "bench_checker: unknown encoding %s\n", c->encoding);
        exit(1);
    }
    qg_context_init(&env->ctx, c->dialect, enc, c->flags);
    qg_settings_defaults(&env->settings);
    qg_settings_set_program(&env->settings, "bench_checker");
}

/* Everything but pg_query_scan, so that the peak RSS after this phase is
 * the checker's (plus the corpora). */
static void bench_checker_phase(row *r)
{
    pass_env env;
    env_init(&env, r->c);
    count_verdicts(r, &env.ctx);
    pass_fn fns[M_COUNT] = {
        [M_CHECK] = pass_check,
        [M_SCALAR] = pass_check_scalar,
        /* A query with findings would be logged by the guard: clean corpora only. */
        [M_GUARD] = r->verdicts[0] == r->c->count ? pass_guard : NULL,
        [M_MEMCHR] = pass_memchr,
        [M_BYTELOOP] = pass_byteloop,
        [M_FLOOR] = strings_floor_applies(r->c, &env.ctx) ? pass_strings_floor : NULL,
    };
    run_measures(&env, fns, r->m, M_COUNT, M_CHECK, M_MEMCHR, &r->check_over_memchr);
    fprintf(stderr, ".");
}

static void bench_pg_query_phase(row *r)
{
    if (r->c->dialect != QG_DIALECT_POSTGRES || strcmp(r->c->encoding, "UTF8") != 0)
        return;
    pass_env env;
    env_init(&env, r->c);
    pass_fn fns[M_COUNT] = {[M_PGSCAN] = pass_pg_query_scan};
    run_measures(&env, fns, r->m, M_COUNT, 0, 0, NULL);
    fprintf(stderr, "+");
}

/* ------------------------------------------------------------------ output */

static void cpu_model(char *out, size_t cap)
{
    snprintf(out, cap, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            const char *v = strchr(line, ':');
            if (v) {
                v++;
                while (*v == ' ' || *v == '\t')
                    v++;
                snprintf(out, cap, "%.*s", (int)strcspn(v, "\n"), v);
            }
            break;
        }
    }
    fclose(f);
}

static const char *dialect_name(qg_dialect d)
{
    return d == QG_DIALECT_POSTGRES ? "pg" : "mysql";
}

static void print_ratio(double num, double den, bool have)
{
    if (have && den > 0)
        printf(" %7.2f", num / den);
    else
        printf(" %7s", "-");
}

static void print_table(const row *rows, size_t n)
{
    printf("\n%-13s %-5s %-8s %-9s %6s %7s | %8s %8s %6s %7s | %8s %6s %7s %8s | %8s %8s %8s | %7s %7s | %s\n",
           "corpus", "dial", "encoding", "literals", "queries", "avg B", "check", "ns/q", "allocs",
           "scalar", "memchr", "x", "floor x", "byteloop", "pgscan", "pgscan", "x faster", "guard",
           "allocs", "verdicts");
    printf("%-13s %-5s %-8s %-9s %6s %7s | %8s %8s %6s %7s | %8s %6s %7s %8s | %8s %8s %8s | %7s %7s | %s\n",
           "", "", "", "", "", "", "MB/s", "", "/query", "MB/s", "MB/s", "slower", "memchr", "MB/s",
           "MB/s", "ns/q", "check", "ns/q", "/query", "clean/log/block");
    for (size_t i = 0; i < n; i++) {
        const row *r = &rows[i];
        const corpus *c = r->c;
        const measure *m = r->m;
        printf("%-13s %-5s %-8s %-9s %6zu %7.0f | %8.0f %8.0f %6.2f %7.0f | %8.0f", c->shape,
               dialect_name(c->dialect), c->encoding, c->literals, c->count,
               (double)c->bytes / (double)c->count, m[M_CHECK].mbps, m[M_CHECK].ns_per_query,
               m[M_CHECK].allocs_per_query, m[M_SCALAR].mbps, m[M_MEMCHR].mbps);
        printf(" %6.2f", r->check_over_memchr);
        print_ratio(m[M_FLOOR].sec_per_pass, m[M_MEMCHR].sec_per_pass, m[M_FLOOR].done);
        printf(" %8.0f |", m[M_BYTELOOP].mbps);
        if (m[M_PGSCAN].done)
            printf(" %8.1f %8.0f", m[M_PGSCAN].mbps, m[M_PGSCAN].ns_per_query);
        else
            printf(" %8s %8s", "-", "-");
        print_ratio(m[M_PGSCAN].sec_per_pass, m[M_CHECK].sec_per_pass, m[M_PGSCAN].done);
        printf("  |");
        if (m[M_GUARD].done)
            printf(" %7.0f %7.2f", m[M_GUARD].ns_per_query, m[M_GUARD].allocs_per_query);
        else
            printf(" %7s %7s", "-", "-");
        printf(" | %zu/%zu/%zu\n", r->verdicts[0], r->verdicts[1], r->verdicts[2]);
    }
}

static void json_measure(FILE *f, const char *name, const measure *m, bool comma)
{
    if (!m->done) {
        fprintf(f, "      \"%s\": null%s\n", name, comma ? "," : "");
        return;
    }
    fprintf(f,
            "      \"%s\": {\"mb_per_s\": %.1f, \"mb_per_s_min\": %.1f, \"mb_per_s_max\": %.1f, "
            "\"ns_per_query\": %.1f, \"allocs_per_query\": %.3f}%s\n",
            name, m->mbps, m->mbps_min, m->mbps_max, m->ns_per_query, m->allocs_per_query,
            comma ? "," : "");
}

static bool write_json(const char *path, const row *rows, size_t n, const char *cpu, long cores,
                       const char *vectors, uint64_t seed, long rss_corpora, long rss_checker,
                       long rss_end)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "bench_checker: %s: %s\n", path, strerror(errno));
        return false;
    }
    struct utsname u;
    uname(&u);
    fprintf(f, "{\n  \"machine\": {\"cpu\": \"%s\", \"cores\": %ld, \"kernel\": \"%s %s\", "
               "\"compiler\": \"%s\", \"vector_build\": \"%s\"},\n",
            cpu, cores, u.sysname, u.release, __VERSION__, vectors);
    fprintf(f, "  \"settings\": {\"runs\": %d, \"min_time_per_run_s\": %.3f, \"seed\": %llu, "
               "\"statistic\": \"median\", \"mb\": 1000000},\n",
            runs, min_time, (unsigned long long)seed);
    fprintf(f, "  \"peak_rss_kib\": {\"after_corpora\": %ld, \"after_checker\": %ld, "
               "\"at_end\": %ld},\n",
            rss_corpora, rss_checker, rss_end);
    fprintf(f, "  \"corpora\": [\n");
    for (size_t i = 0; i < n; i++) {
        const row *r = &rows[i];
        const corpus *c = r->c;
        fprintf(f, "    {\n      \"shape\": \"%s\", \"literals\": \"%s\", \"dialect\": \"%s\", "
                   "\"encoding\": \"%s\",\n      \"queries\": %zu, \"bytes\": %zu, "
                   "\"verdicts\": {\"clean\": %zu, \"log\": %zu, \"block\": %zu},\n",
                c->shape, c->literals, dialect_name(c->dialect), c->encoding, c->count, c->bytes,
                r->verdicts[0], r->verdicts[1], r->verdicts[2]);
        for (int k = 0; k < M_COUNT; k++)
            json_measure(f, method_names[k], &r->m[k], true);
        fprintf(f, "      \"check_over_memchr\": %.3f,\n", r->check_over_memchr);
        if (r->m[M_FLOOR].done)
            fprintf(f, "      \"strings_floor_over_memchr\": %.3f,\n",
                    r->m[M_FLOOR].sec_per_pass / r->m[M_MEMCHR].sec_per_pass);
        else
            fprintf(f, "      \"strings_floor_over_memchr\": null,\n");
        if (r->m[M_PGSCAN].done)
            fprintf(f, "      \"pg_query_scan_over_check\": %.2f\n",
                    r->m[M_PGSCAN].sec_per_pass / r->m[M_CHECK].sec_per_pass);
        else
            fprintf(f, "      \"pg_query_scan_over_check\": null\n");
        fprintf(f, "    }%s\n", i + 1 < n ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    return fclose(f) == 0;
}

/* -------------------------------------------------------------------- main */

_Noreturn static void usage(void)
{
    fprintf(stderr, "usage: bench_checker [--runs N (>= 1, default 5)] [--min-time SECONDS]\n"
                    "                     [--regress DIR] [--json PATH] [--seed N]\n"
                    "                     [--only SHAPE/DIALECT/ENCODING/LITERALS substring]\n"
                    "                     [--vectors reference|sse2|avx2|avx512: the widest to run]\n"
                    "       bench_checker --verify [--regress DIR] [--seed N] [--only …]: the fast checker\n"
                    "                     against the reference on every query of every corpus (TAP)\n");
    exit(64);
}

#define MAX_CORPORA 48

/* The vector builds by QG_VECTORS_*, as --vectors names them. */
static int vector_build(const char *name)
{
    int build = qg_vectors_named(name);
    if (build < 0)
        usage();
    return build;
}

static size_t corpora_bytes(const corpus *c, size_t n)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += c[i].bytes;
    return total;
}

/* --verify replaces one byte of each query: a quote, backslash, lead,
 * trail or digit byte, at a position that moves from query to query. */
static void replace_a_byte(unsigned char *copy, const char *query, size_t len, size_t q)
{
    static const unsigned char replacements[] = {'\'', '\\', '"', 0x81, 0xe3, 0x80, '0', 0xff};
    memcpy(copy, query, len);
    copy[q * 7919 % len] = replacements[q % sizeof replacements];
}

/* --verify: every query of every corpus as it is, and again with a byte
 * replaced, through the fast checker and the reference; one TAP line a
 * corpus, numbered from `test`.  The number of lines that failed. */
static size_t verify_checker(corpus *corpora, size_t n, unsigned char *copy, size_t *test)
{
    size_t failed = 0;
    for (size_t i = 0; i < n; i++) {
        pass_env env;
        env_init(&env, &corpora[i]);
        const corpus *c = &corpora[i];
        size_t differ = 0, first = 0;
        for (size_t q = 0; q < c->count; q++) {
            const char *query = corpus_query(c, q);
            size_t len = c->len[q];
            qg_result ref;
            bool same = fast_agrees(&env.ctx, query, len, &ref);
            if (len) {
                replace_a_byte(copy, query, len, q);
                same &= fast_agrees(&env.ctx, (const char *)copy, len, &ref);
            }
            if (!same)
                first = differ++ ? first : q;
        }
        failed += differ > 0;
        printf("%s %zu - %s/%s/%s/%s: %zu queries, as they are and with a byte replaced, %zu "
               "differ from the reference",
               differ ? "not ok" : "ok", ++*test, c->shape, dialect_name(c->dialect), c->encoding,
               c->literals, c->count, differ);
        if (differ)
            printf(" (first: query %zu)", first);
        printf("\n");
    }
    return failed;
}

/* --verify: the strings floor in every vector build this CPU runs against
 * the byte-at-a-time reading, on the corpora it applies to, as they are and
 * with a byte replaced as above; one TAP line a corpus and build, numbered
 * from `test`.  The number of lines that failed. */
static size_t verify_strings_floor(corpus *corpora, size_t n, unsigned char *copy, size_t *test)
{
    size_t failed = 0;
    for (int build = QG_VECTORS_AVX2; build <= qg_cpu_vectors(); build++) {
        strings_floor = strings_floor_for(build);
        for (size_t i = 0; i < n; i++) {
            const corpus *c = &corpora[i];
            pass_env env;
            env_init(&env, &corpora[i]);
            if (!strings_floor_applies(c, &env.ctx))
                continue;
            size_t differ = 0, gave_up = 0;
            for (size_t q = 0; q < c->count; q++) {
                const unsigned char *query = (const unsigned char *)corpus_query(c, q);
                size_t len = c->len[q];
                differ += strings_floor(query, len) != strings_floor_bytewise(query, len);
                if (len) {
                    replace_a_byte(copy, (const char *)query, len, q);
                    uint64_t expected = strings_floor_bytewise(copy, len);
                    differ += strings_floor(copy, len) != expected;
                    gave_up += expected == STRINGS_FLOOR_GAVE_UP;
                }
            }
            failed += differ > 0;
            printf("%s %zu - strings floor, %s build, %s/%s/%s/%s: %zu queries, as they are and "
                   "with a byte replaced (%zu of those give up), %zu differ from the byte loop\n",
                   differ ? "not ok" : "ok", ++*test, qg_vectors_name(build), c->shape,
                   dialect_name(c->dialect), c->encoding, c->literals, c->count, gave_up, differ);
        }
    }
    strings_floor = NULL;
    return failed;
}

/* --verify: both of the above, as TAP; false when any line failed. */
static bool verify_corpora(corpus *corpora, size_t n)
{
    size_t longest = 0, test = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t q = 0; q < corpora[i].count; q++)
            longest = corpora[i].len[q] > longest ? corpora[i].len[q] : longest;
    unsigned char *copy = malloc(longest + 1);
    if (!copy)
        return false;
    printf("# the reference against every vector build up to %s\n",
           qg_vectors_name(qg_allow_vectors(QG_VECTORS_WIDEST)));
    size_t failed = verify_checker(corpora, n, copy, &test);
    failed += verify_strings_floor(corpora, n, copy, &test);
    free(copy);
    printf("1..%zu\n", test);
    return failed == 0;
}

int main(int argc, char **argv)
{
    const char *json_path = NULL;
    const char *regress_dir = "../shared/corpus/pg-regress";
    uint64_t seed = 20260601;
    const char *only = NULL; /* substring of "shape/dialect/encoding/literals" */
    int widest = QG_VECTORS_WIDEST; /* the widest implementation allowed */
    bool verify = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--verify") == 0) {
            verify = true;
            continue;
        }
        if (i + 1 >= argc)
            usage();
        if (strcmp(argv[i], "--runs") == 0)
            runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--min-time") == 0)
            min_time = atof(argv[++i]);
        else if (strcmp(argv[i], "--regress") == 0)
            regress_dir = argv[++i];
        else if (strcmp(argv[i], "--json") == 0)
            json_path = argv[++i];
        else if (strcmp(argv[i], "--seed") == 0)
            seed = strtoull(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "--only") == 0)
            only = argv[++i];
        else if (strcmp(argv[i], "--vectors") == 0)
            widest = vector_build(argv[++i]);
        else
            usage();
    }
    if (runs < 1 || !(min_time > 0))
        usage();
    int vectors = qg_allow_vectors(widest);
    strings_floor = strings_floor_for(vectors);
    rng_state = seed;
    /* The bytes the lexer stops at in some state: NUL, newlines, quotes,
     * backslash, dollar, dash, slash, star, hash, and every high byte. */
    byte_class[0] = 1;
    for (const unsigned char *s = (const unsigned char *)"\n\r'\"`\\$-/*#"; *s; s++)
        byte_class[*s] = 1;
    for (int b = 0x80; b < 0x100; b++)
        byte_class[b] = 1;

    static const struct {
        literal_kind kind;
        const char *literals;
        const char *pg, *my;
    } kinds[] = {
        {LIT_ASCII, "ascii", "UTF8", "utf8mb4"}, {LIT_UTF8, "multibyte", "UTF8", "utf8mb4"},
        {LIT_SJIS, "multibyte", "SJIS", "sjis"}, {LIT_GBK, "multibyte", "GBK", "gbk"},
        {LIT_BIG5, "multibyte", "BIG5", "big5"}, {LIT_GB18030, "multibyte", "GB18030", "gb18030"},
    };
    static corpus corpora[MAX_CORPORA];
    size_t n = 0;
    static const char *const shapes[] = {"oltp", "batch-1MiB", "literal-4KB"};
    for (int shape = 0; shape < 3; shape++) {
        for (int d = 0; d < 2; d++) {
            for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
                corpus *c = &corpora[n++];
                snprintf(c->shape, sizeof c->shape, "%s", shapes[shape]);
                snprintf(c->literals, sizeof c->literals, "%s", kinds[k].literals);
                c->dialect = d ? QG_DIALECT_MYSQL : QG_DIALECT_POSTGRES;
                c->encoding = d ? kinds[k].my : kinds[k].pg;
                c->flags = d ? 0 : QG_STD_STRINGS;
                c->kind = kinds[k].kind;
                if (shape == 2)
                    fill_long(c);
                else if (shape)
                    fill_batches(c);
                else
                    fill_oltp(c);
            }
        }
    }
    corpus *stmts = &corpora[n], *files = &corpora[n + 1];
    if (load_regress(stmts, files, regress_dir)) {
        for (corpus *c = stmts; c <= files; c++) {
            snprintf(c->shape, sizeof c->shape, "%s", c == stmts ? "regress-stmt" : "regress-file");
            snprintf(c->literals, sizeof c->literals, "mixed");
            c->dialect = QG_DIALECT_POSTGRES;
            c->encoding = "UTF8";
            c->flags = QG_STD_STRINGS;
        }
        n += 2;
    } else if (verify) {
        printf("Bail out! no .sql files in %s (the reference material beside the source tree)\n",
               regress_dir);
        return 1;
    } else {
        fprintf(stderr, "bench_checker: no .sql files in %s: regression corpus skipped\n",
                regress_dir);
    }
    corpus *params = &corpora[n++];
    snprintf(params->shape, sizeof params->shape, "oltp");
    snprintf(params->literals, sizeof params->literals, "params");
    params->dialect = QG_DIALECT_POSTGRES;
    params->encoding = "UTF8";
    params->flags = QG_STD_STRINGS;
    params->params = true;
    fill_params(params);
    corpus *dump = &corpora[n++];
    snprintf(dump->shape, sizeof dump->shape, "dump-64KiB");
    snprintf(dump->literals, sizeof dump->literals, "binary");
    dump->dialect = QG_DIALECT_MYSQL;
    dump->encoding = "utf8mb4";
    fill_binary_dump(dump);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        char key[128];
        snprintf(key, sizeof key, "%.24s/%s/%.24s/%.24s", corpora[i].shape,
                 dialect_name(corpora[i].dialect), corpora[i].encoding, corpora[i].literals);
        if (!only || strstr(key, only))
            corpora[kept++] = corpora[i];
    }
    n = kept;
    if (n == 0) {
        fprintf(stderr, "bench_checker: no corpus matches --only '%s'\n", only);
        return 2;
    }
    if (verify)
        return verify_corpora(corpora, n) ? 0 : 1;
    long rss_corpora = peak_rss_kib();
    size_t total_bytes = corpora_bytes(corpora, n);

    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    printf("quoteguard checker benchmark: %s, %ld cores online, %s build of the vector scans; "
           "median of %d runs, each >= %.2f s; seed %llu; MB = 10^6 bytes\n",
           cpu, cores, qg_vectors_name(vectors), runs, min_time, (unsigned long long)seed);
    fflush(stdout);

    static row rows[MAX_CORPORA];
    for (size_t i = 0; i < n; i++) {
        rows[i].c = &corpora[i];
        bench_checker_phase(&rows[i]);
    }
    long rss_checker = peak_rss_kib();
    for (size_t i = 0; i < n; i++)
        bench_pg_query_phase(&rows[i]);
    fprintf(stderr, "\n");
    long rss_end = peak_rss_kib();

    print_table(rows, n);
    printf("\ncheck = qg_check alone; scalar = qg_check with the lexer's scalar reference scan; guard = qg_guard_query_with (encoding lookup + check, enforce "
           "mode; clean corpora only);\nmemchr = floor over the same bytes; x slower = check "
           "time / memchr time, the median of the rounds' ratios (memchr timed right after the "
           "check);\nfloor x memchr = strings floor time / memchr time, medians (MySQL ASCII: the "
           "least a scan does to know where strings end where backslashes escape, "
           "bench/strings_floor.h);\nbyteloop = one table lookup per byte (scalar); pgscan = "
           "libpg_query pg_query_scan (PG, UTF8 only); x faster check = pg_query_scan time / "
           "qg_check time.\n");
    printf("peak RSS: %ld KiB after building the corpora (%zu MB of queries), %ld KiB after the "
           "checker runs, %ld KiB after pg_query_scan\n",
           rss_corpora, total_bytes / 1000000, rss_checker, rss_end);
    if (json_path && !write_json(json_path, rows, n, cpu, cores, qg_vectors_name(vectors), seed,
                                 rss_corpora, rss_checker, rss_end))
        return 1;
    return 0;
}
