/*
 * Differential lexing: literal, delimited-identifier and comment spans of the
 * checker's PostgreSQL reading (UTF8, standard_conforming_strings on) against
 * libpg_query's pg_query_scan (the server's own scanner) on SQL files.
 *
 *   pgquery_spans FILE…
 *
 * Each file is prepared the way psql would send it: lines that start with a
 * backslash (psql meta-commands) and COPY … FROM stdin data up to "\." are
 * dropped.  The rest is split into statements with pg_query_split_with_scanner
 * (at lines ending in ';' when the scanner cannot split the file) and both
 * lexers read every statement.  Spans are compared one by one; each
 * disagreement gets a category (see classify()).  Prints per-category counts
 * and every unexplained disagreement with its statement; exits 1 when there
 * is any.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <pg_query.h>

#include "quoteguard.h"

/* Token numbers from /usr/include/pg_query/pg_query.proto (enum Token). */
enum {
    PGQ_IDENT = 258,
    PGQ_UIDENT = 259,
    PGQ_SCONST = 261,
    PGQ_USCONST = 262,
    PGQ_BCONST = 263,
    PGQ_XCONST = 264,
    PGQ_SQL_COMMENT = 275,
    PGQ_C_COMMENT = 276
};

typedef enum span_kind { SPAN_STRING, SPAN_IDENT, SPAN_COMMENT } span_kind;
static const char *const kind_names[] = {"string", "identifier", "comment"};

typedef struct span {
    span_kind kind;
    size_t start, end;
} span;

typedef struct span_list {
    span *items;
    size_t count, cap;
} span_list;

static void push(span_list *l, span_kind kind, size_t start, size_t end)
{
    if (l->count == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->items = realloc(l->items, l->cap * sizeof *l->items);
        if (!l->items) {
            perror("realloc");
            exit(2);
        }
    }
    l->items[l->count++] = (span){kind, start, end};
}

/* ------------------------------------------------ protobuf (wire format) */

static bool read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; *p < end && shift < 64; shift += 7) {
        uint8_t b = *(*p)++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return true;
    }
    return false;
}

/* Skips a field of wire type `type`; false on malformed input. */
static bool skip_field(const uint8_t **p, const uint8_t *end, unsigned type)
{
    uint64_t v;
    switch (type) {
    case 0:
        return read_varint(p, end, &v);
    case 1:
        *p += 8;
        return *p <= end;
    case 2:
        if (!read_varint(p, end, &v) || v > (uint64_t)(end - *p))
            return false;
        *p += v;
        return true;
    case 5:
        *p += 4;
        return *p <= end;
    default:
        return false;
    }
}

/* ScanToken { int32 start = 1; int32 end = 2; Token token = 4; … } */
static bool decode_token(const uint8_t *p, const uint8_t *end, uint64_t *start, uint64_t *stop,
                         uint64_t *token)
{
    *start = *stop = *token = 0;
    while (p < end) {
        uint64_t key, v;
        if (!read_varint(&p, end, &key))
            return false;
        unsigned field = (unsigned)(key >> 3), type = (unsigned)(key & 7);
        if (type == 0 && (field == 1 || field == 2 || field == 4)) {
            if (!read_varint(&p, end, &v))
                return false;
            if (field == 1)
                *start = v;
            else if (field == 2)
                *stop = v;
            else
                *token = v;
        } else if (!skip_field(&p, end, type)) {
            return false;
        }
    }
    return true;
}

/* Spans from libpg_query; false when the scanner reported an error. */
static bool pgquery_spans(const char *sql, span_list *out, char *err, size_t errlen)
{
    PgQueryScanResult r = pg_query_scan(sql);
    bool ok = r.error == NULL;
    if (!ok)
        snprintf(err, errlen, "%s", r.error->message);
    const uint8_t *p = (const uint8_t *)r.pbuf.data, *end = p + (ok ? r.pbuf.len : 0);
    while (ok && p < end) {
        uint64_t key, len;
        if (!read_varint(&p, end, &key)) {
            ok = false;
            break;
        }
        if (key != (2 << 3 | 2)) {
            ok = skip_field(&p, end, (unsigned)(key & 7));
            continue;
        }
        if (!read_varint(&p, end, &len) || len > (uint64_t)(end - p)) {
            ok = false;
            break;
        }
        uint64_t start, stop, token;
        ok = decode_token(p, p + len, &start, &stop, &token);
        p += len;
        switch (token) {
        case PGQ_SCONST:
        case PGQ_USCONST:
        case PGQ_BCONST:
        case PGQ_XCONST:
            push(out, SPAN_STRING, start, stop);
            break;
        case PGQ_IDENT:
        case PGQ_UIDENT:
            /* Only delimited identifiers: "x" or U&"x". */
            if (sql[start] == '"' || sql[start] == 'u' || sql[start] == 'U')
                if (sql[start] == '"' || sql[start + 1] == '&')
                    push(out, SPAN_IDENT, start, stop);
            break;
        case PGQ_SQL_COMMENT:
        case PGQ_C_COMMENT:
            push(out, SPAN_COMMENT, start, stop);
            break;
        default:
            break;
        }
    }
    pg_query_free_scan_result(r);
    return ok;
}

static void checker_spans(const qg_context *ctx, const char *sql, size_t len, span_list *out)
{
    qg_token t;
    qg_lexer *lx = qg_lexer_new(ctx, sql, len, QG_READ_SERVER, NULL);
    if (!lx) {
        fprintf(stderr, "pgquery_spans: no memory for a lexer\n");
        exit(1);
    }
    while (qg_lexer_next(lx, &t)) {
        span_kind kind = t.kind == QG_TOK_IDENT     ? SPAN_IDENT
                         : t.kind == QG_TOK_COMMENT ? SPAN_COMMENT
                                                    : SPAN_STRING;
        /* PG lexes N'…' as the keyword NCHAR, then a plain literal. */
        size_t start = t.form == QG_FORM_NATIONAL ? t.start + 1 : t.start;
        push(out, kind, start, t.end);
    }
    qg_lexer_free(lx);
}

/* ------------------------------------------------------------- reporting */

#define MAX_CATEGORIES 32
typedef struct category {
    const char *name; /* "explained:…" or "UNEXPLAINED" */
    unsigned long count;
} category;
static category categories[MAX_CATEGORIES];
static size_t category_count;

static void count_category(const char *name)
{
    for (size_t i = 0; i < category_count; i++)
        if (strcmp(categories[i].name, name) == 0) {
            categories[i].count++;
            return;
        }
    if (category_count < MAX_CATEGORIES)
        categories[category_count++] = (category){name, 1};
}

static bool has_prefix_ci(const char *s, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);
    return len >= n && strncasecmp(s, prefix, n) == 0;
}

/* Names the reason two span lists part at index i; NULL when unexplained.
 * `a` is the checker's list, `b` libpg_query's.  *in_step: the lists still
 * correspond one to one after this pair. */
static const char *classify(const char *sql, const span_list *a, const span_list *b, size_t i,
                            bool *in_step)
{
    const span *x = i < a->count ? &a->items[i] : NULL;
    const span *y = i < b->count ? &b->items[i] : NULL;
    *in_step = false;
    /* pg_query_scan leaves the end of U&'…' / U&"…" tokens unset (end is
     * start, or start + 1 for identifiers). */
    if (x && y && x->kind == y->kind && x->start == y->start && y->end <= y->start + 1 &&
        (sql[x->start] == 'u' || sql[x->start] == 'U') && sql[x->start + 1] == '&') {
        *in_step = true;
        return "explained:libpg_query-unicode-token-without-end (pg_query_scan gives "
               "U&'...' and U&\"...\" no end; starts agree)";
    }
    /* libpg_query ends a literal with a string continuation at its last
     * piece too; a gap with a comment ('a' -- c NEWLINE 'b') gives the
     * comment as its own token inside the literal. */
    if (x && y && x->kind == SPAN_STRING && y->kind == SPAN_STRING && x->start == y->start &&
        x->end > y->end)
        for (size_t k = i + 1; k < b->count && b->items[k].start < x->end; k++)
            if (b->items[k].end == x->end)
                return "string-continuation-token-split";
    return NULL;
}

static const char *excerpt(const char *s, size_t len, char *buf, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < len && n + 5 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\n')
            n += (size_t)snprintf(buf + n, cap - n, "\\n");
        else if (c < 0x20 || c >= 0x7f)
            n += (size_t)snprintf(buf + n, cap - n, "\\x%02x", c);
        else
            buf[n++] = (char)c;
    }
    buf[n] = '\0';
    return buf;
}

/* ------------------------------------------------------ psql preparation */

/* Drops meta-command lines and COPY FROM stdin data; returns a new string. */
static char *prepare(const char *text, size_t len)
{
    char *out = malloc(len + 1);
    size_t n = 0;
    bool copy_data = false;
    for (size_t pos = 0; pos < len;) {
        const char *line = text + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t line_len = nl ? (size_t)(nl - line) + 1 : len - pos;
        pos += line_len;
        if (copy_data) {
            if (line_len >= 2 && line[0] == '\\' && line[1] == '.')
                copy_data = false;
            continue;
        }
        size_t lead = 0;
        while (lead < line_len && (line[lead] == ' ' || line[lead] == '\t'))
            lead++;
        if (lead < line_len && line[lead] == '\\')
            continue;
        memcpy(out + n, line, line_len);
        n += line_len;
        /* "COPY … FROM stdin;" on one line: data follows. */
        char low[512];
        size_t k = 0;
        for (; k < line_len && k + 1 < sizeof low; k++)
            low[k] = (char)tolower((unsigned char)line[k]);
        low[k] = '\0';
        if (has_prefix_ci(line + lead, line_len - lead, "copy ") && strstr(low, "from stdin") &&
            strchr(low, ';'))
            copy_data = true;
    }
    out[n] = '\0';
    return out;
}

/* --------------------------------------------------------------- driver */

static unsigned long statements, scan_errors, compared[3], disagreements, split_files;

static bool compare_statement(const qg_context *ctx, const char *file, size_t line_no,
                              const char *stmt, size_t len)
{
    span_list a = {0}, b = {0};
    char err[256] = "";
    char *copy = strndup(stmt, len);
    statements++;
    if (!pgquery_spans(copy, &b, err, sizeof err)) {
        scan_errors++;
        printf("SCAN-ERROR %s:%zu: %s\n", file, line_no, err);
        count_category("explained:scanner-error (statement not lexable; both skip it)");
        free(copy);
        free(b.items);
        return true;
    }
    checker_spans(ctx, copy, len, &a);
    bool clean = true;
    size_t n = a.count > b.count ? a.count : b.count;
    for (size_t i = 0; i < n; i++) {
        const span *x = i < a.count ? &a.items[i] : NULL;
        const span *y = i < b.count ? &b.items[i] : NULL;
        if (x && y && x->kind == y->kind && x->start == y->start && x->end == y->end) {
            compared[x->kind]++;
            continue;
        }
        disagreements++;
        bool in_step;
        const char *why = classify(copy, &a, &b, i, &in_step);
        char buf[400];
        if (why) {
            count_category(why);
            if (in_step)
                continue;
        } else {
            clean = false;
            count_category("UNEXPLAINED");
            printf("DISAGREE %s:%zu token %zu: checker %s [%zu,%zu) vs libpg_query %s [%zu,%zu) in: "
                   "%s\n",
                   file, line_no, i, x ? kind_names[x->kind] : "-", x ? x->start : 0,
                   x ? x->end : 0, y ? kind_names[y->kind] : "-", y ? y->start : 0,
                   y ? y->end : 0, excerpt(copy, len, buf, sizeof buf));
        }
        break; /* after the first difference the lists are out of step */
    }
    free(copy);
    free(a.items);
    free(b.items);
    return clean;
}

static bool run_file(const qg_context *ctx, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return false;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    char *text = malloc((size_t)size + 1);
    size_t got = fread(text, 1, (size_t)size, f);
    fclose(f);
    text[got] = '\0';
    char *sql = prepare(text, got);
    free(text);

    bool clean = true;
    const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    PgQuerySplitResult split = pg_query_split_with_scanner(sql);
    if (split.error) {
        /* The scanner stops at the first bad token of the file: split at
         * lines ending in ';' instead (a cut inside a multi-line literal
         * shows up as a scanner error of that piece). */
        split_files++;
        size_t start = 0, line_no = 1, first_line = 1;
        for (size_t k = 0; sql[k]; k++) {
            if (sql[k] != '\n')
                continue;
            size_t end = k;
            while (end > start && (sql[end - 1] == ' ' || sql[end - 1] == '\t'))
                end--;
            line_no++;
            if (end > start && sql[end - 1] == ';') {
                clean &= compare_statement(ctx, name, first_line, sql + start, end - 1 - start);
                start = k + 1;
                first_line = line_no;
            }
        }
        if (sql[start])
            clean &= compare_statement(ctx, name, first_line, sql + start, strlen(sql + start));
    } else {
        for (int i = 0; i < split.n_stmts; i++) {
            const PgQuerySplitStmt *s = split.stmts[i];
            size_t line_no = 1;
            for (int k = 0; k < s->stmt_location; k++)
                line_no += sql[k] == '\n';
            clean &= compare_statement(ctx, name, line_no, sql + s->stmt_location,
                                       (size_t)s->stmt_len);
        }
    }
    pg_query_free_split_result(split);
    free(sql);
    return clean;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: pgquery_spans FILE…\n");
        return 2;
    }
    qg_context ctx;
    qg_context_init(&ctx, QG_DIALECT_POSTGRES, qg_encoding_find(QG_DIALECT_POSTGRES, "UTF8"),
                    QG_STD_STRINGS);
    bool clean = true;
    for (int i = 1; i < argc; i++)
        clean &= run_file(&ctx, argv[i]);
    printf("files %d (split by lines: %lu) statements %lu scan-errors %lu\n", argc - 1,
           split_files, statements, scan_errors);
    printf("agreeing spans: strings %lu identifiers %lu comments %lu\n", compared[SPAN_STRING],
           compared[SPAN_IDENT], compared[SPAN_COMMENT]);
    printf("disagreements %lu (first per statement)\n", disagreements);
    for (size_t i = 0; i < category_count; i++)
        printf("category %s: %lu\n", categories[i].name, categories[i].count);
    pg_query_exit();
    return clean ? 0 : 1;
}
