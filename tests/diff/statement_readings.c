/*
 * What the core reads from each statement of some SQL files, in a form two
 * builds can be compared by: tests/diff/compare-readings builds this at two
 * revisions and diffs the outputs.
 *
 *   statement_readings FILE…      (or "-": the files' names from stdin, one a line)
 *
 * Each file is read as one text and line by line.  Every text is walked
 * statement by statement with the MySQL statement reader under several
 * states (character sets, quoting flags, a server known or not), and whether
 * it may change the state unreported; every statement so found, and the
 * text itself, is read for its PostgreSQL effect and its shape in both
 * dialects.  One line a text: where it is, how many statements the walks
 * read, and a hash of every reading.  The last line counts the texts and
 * the readings.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mysql_statements.h"
#include "pg_state.h"
#include "quoteguard.h"
#include "shape.h"

static unsigned long long texts, my_statements, pg_effects, shapes;

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

static uint64_t mix_u(uint64_t h, uint64_t v)
{
    return mix(h, &v, sizeof v);
}

static uint64_t mix_change(uint64_t h, const qg_my_change *c)
{
    h = mix_u(h, (uint64_t)c->charset_set | (uint64_t)c->flags_set << 1 |
                     (uint64_t)c->charset_unknown << 2 | (uint64_t)c->flags_unknown << 3 |
                     (uint64_t)c->flags_in_status << 4);
    if (c->charset_set)
        h = mix(h, c->charset, strlen(c->charset));
    return c->flags_set ? mix_u(h, c->flags) : h;
}

static uint64_t mix_effect(uint64_t h, const qg_my_effect *fx)
{
    h = mix_u(h, (uint64_t)fx->changed | (uint64_t)fx->unknown << 1 | (uint64_t)fx->nonempty << 2 |
                     (uint64_t)fx->runs_other << 3 | (uint64_t)fx->prepares << 4 |
                     (uint64_t)fx->executes << 5 | (uint64_t)fx->deallocates << 6);
    h = mix_change(h, &fx->change);
    if (fx->prepares || fx->executes || fx->deallocates)
        h = mix(h, fx->stmt_name, fx->stmt_name_len);
    return fx->prepares ? mix_change(h, &fx->prepared) : h;
}

static uint64_t read_pg(uint64_t h, const char *sql, size_t len)
{
    qg_pg_effect e = qg_pg_statement_effect(sql, len);
    pg_effects++;
    h = mix_u(h, (uint64_t)e.encoding | (uint64_t)e.scs << 4 | (uint64_t)e.scs_on << 8);
    return e.encoding == QG_PG_SETS ? mix(h, e.encoding_name, strlen(e.encoding_name)) : h;
}

static uint64_t read_shape(uint64_t h, const qg_context *ctx, const char *sql, size_t len)
{
    char sample[256];
    h = mix_u(h, qg_shape_compute(ctx, sql, len, sample, sizeof sample));
    shapes++;
    return mix(h, sample, strlen(sample));
}

static void read_text(const char *where, const char *sql, size_t len)
{
    static const char *const charsets[] = {"latin1", "gbk", "utf8mb4"};
    static const unsigned flag_sets[] = {0, QG_NO_BACKSLASH_ESCAPES | QG_ANSI_QUOTES};
    static const qg_my_server_kind mariadb = {.mariadb = true, .version = 101106};
    qg_context pg, my;
    qg_context_init(&pg, QG_DIALECT_POSTGRES, qg_encoding_find(QG_DIALECT_POSTGRES, "UTF8"),
                    QG_STD_STRINGS);
    uint64_t h = 0xcbf29ce484222325ULL;
    unsigned long long count = 0;
    texts++;
    h = read_pg(h, sql, len);
    h = read_shape(h, &pg, sql, len);
    for (size_t c = 0; c < sizeof charsets / sizeof charsets[0]; c++) {
        for (size_t f = 0; f < sizeof flag_sets / sizeof flag_sets[0]; f++) {
            for (int known = 0; known < 2; known++) {
                qg_my_state st = {.flags = flag_sets[f]};
                snprintf(st.charset, sizeof st.charset, "%s", charsets[c]);
                qg_my_state start = st;
                h = mix_u(h, qg_my_may_change_unreported(&start, sql, len));
                for (size_t pos = 0; pos < len;) {
                    qg_my_effect fx;
                    size_t step =
                        qg_my_read_statement_on(&st, known ? &mariadb : NULL, sql + pos, len - pos, &fx);
                    count++;
                    h = mix_effect(mix_u(h, step), &fx);
                    h = mix(h, st.charset, strlen(st.charset));
                    h = mix_u(h, st.flags);
                    if (c == 0 && f == 0 && !known && step) {
                        const qg_encoding *enc = qg_encoding_find(QG_DIALECT_MYSQL, "latin1");
                        qg_context_init(&my, QG_DIALECT_MYSQL, enc, 0);
                        h = read_shape(h, &my, sql + pos, step);
                        h = read_pg(h, sql + pos, step);
                    }
                    if (step == 0)
                        break;
                    pos += step;
                }
            }
        }
    }
    my_statements += count;
    printf("%s %llu %016llx\n", where, count, (unsigned long long)h);
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *bigger = realloc(buf, cap *= 2);
            if (!bigger)
                free(buf);
            buf = bigger;
        }
    }
    fclose(f);
    *len = n;
    return buf;
}

static int read_path(const char *path)
{
    size_t len;
    char *text = read_file(path, &len);
    if (!text) {
        fprintf(stderr, "statement_readings: cannot read %s\n", path);
        return 2;
    }
    char where[4096];
    snprintf(where, sizeof where, "%s:0", path);
    read_text(where, text, len);
    unsigned line = 1;
    for (size_t at = 0; at < len; line++) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - text) : len;
        snprintf(where, sizeof where, "%s:%u", path, line);
        read_text(where, text + at, end - at);
        at = end + 1;
    }
    free(text);
    return 0;
}

int main(int argc, char **argv)
{
    int status = 0;
    for (int i = 1; i < argc && status == 0; i++) {
        if (strcmp(argv[i], "-") != 0) {
            status = read_path(argv[i]);
            continue;
        }
        char path[4096];
        while (status == 0 && fgets(path, sizeof path, stdin)) {
            path[strcspn(path, "\n")] = '\0';
            if (*path)
                status = read_path(path);
        }
    }
    if (status)
        return status;
    printf("texts %llu mysql-statements %llu pg-effects %llu shapes %llu\n", texts, my_statements,
           pg_effects, shapes);
    return 0;
}
