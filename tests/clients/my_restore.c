/* A legacy-style restore tool for mysqldump files, on libmariadb.
 *
 * my_restore SOCKET DATABASE [DUMPFILE]
 *
 * Reads the dump (DUMPFILE, or standard input) and sends it statement by
 * statement with mysql_real_query, the way old in-house restore scripts do:
 * no client-side charset handling, the dump's own SET NAMES does that.
 *
 * Splitting: a statement ends at a line that ends with the delimiter (`;`,
 * or what a DELIMITER line sets).  mysqldump writes every newline inside a
 * literal as \n, so a line end is never inside a string and no literal has
 * to be scanned here — which matters, because a byte-wise scanner would
 * read the 0x5c trail byte of a GBK character as a backslash and lose its
 * place.  Lines starting with `--` or `#`, and blank lines, are skipped
 * between statements.  The first line of a MariaDB 10.11.8+ dump, the
 * sandbox-mode marker (an M-bang executable comment for version 999999),
 * has no delimiter: the mysql client takes it as a command of its own, an
 * older tool sends it in front of the next statement, where the server
 * reads it as a comment, and so does this one.
 *
 * Output, one item per line:
 *   ERROR: ERRNO SQLSTATE MESSAGE   a failed statement (the restore goes on,
 *                                   like mysql --force)
 *   STATEMENTS: N ERRORS: M         at the end: statements sent, failures
 * Exit status: 0 when every statement succeeded, 1 when some failed, 2 on
 * usage, input or connection errors.
 */
#include <mysql.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "my_print.h"

typedef struct buffer {
    char *data;
    size_t len, cap;
} buffer;

static void append(buffer *b, const char *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *grown = realloc(b->data, cap);
        if (!grown) {
            fprintf(stderr, "my_restore: out of memory\n");
            exit(2);
        }
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

/* Sends one statement and drains whatever it returns; false on failure. */
static bool send_statement(MYSQL *mysql, const char *sql, size_t len)
{
    if (mysql_real_query(mysql, sql, (unsigned long)len)) {
        print_error(mysql);
        return false;
    }
    do {
        MYSQL_RES *res = mysql_store_result(mysql);
        if (res) {
            mysql_free_result(res);
        } else if (mysql_field_count(mysql) != 0) {
            print_error(mysql);
            return false;
        }
    } while (mysql_next_result(mysql) == 0);
    if (mysql_errno(mysql)) {
        print_error(mysql);
        return false;
    }
    return true;
}

static bool is_blank(const char *line, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (line[i] != ' ' && line[i] != '\t')
            return false;
    return true;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: my_restore SOCKET DATABASE [DUMPFILE]\n");
        return 2;
    }
    MYSQL *mysql = mysql_init(NULL);
    if (!mysql) {
        fprintf(stderr, "my_restore: mysql_init failed\n");
        return 2;
    }
    if (!mysql_real_connect(mysql, NULL, "root", "", argv[2], 0, argv[1], 0)) {
        printf("CONNERR: %u %s\n", mysql_errno(mysql), mysql_error(mysql));
        mysql_close(mysql);
        return 2;
    }
    FILE *in = stdin;
    if (argc == 4 && !(in = fopen(argv[3], "rb"))) {
        perror(argv[3]);
        mysql_close(mysql);
        return 2;
    }

    char delimiter[32] = ";";
    buffer stmt = {0};
    char *line = NULL;
    size_t line_cap = 0;
    ssize_t got;
    unsigned long statements = 0, errors = 0;
    while ((got = getline(&line, &line_cap, in)) != -1) {
        size_t len = (size_t)got;
        /* trailing \r too: a dump that passed through a Windows machine */
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            len--;
        if (stmt.len == 0) {
            if (is_blank(line, len) || line[0] == '#' ||
                (len >= 2 && line[0] == '-' && line[1] == '-'))
                continue;
            /* DELIMITER is a client command, never sent */
            if (len > 10 && strncmp(line, "DELIMITER ", 10) == 0) {
                size_t n = len - 10;
                if (n >= sizeof delimiter)
                    n = sizeof delimiter - 1;
                memcpy(delimiter, line + 10, n);
                delimiter[n] = '\0';
                continue;
            }
        } else {
            append(&stmt, "\n", 1);
        }
        append(&stmt, line, len);

        size_t dlen = strlen(delimiter);
        if (stmt.len < dlen || memcmp(stmt.data + stmt.len - dlen, delimiter, dlen) != 0)
            continue;
        stmt.len -= dlen;
        stmt.data[stmt.len] = '\0';
        statements++;
        if (!send_statement(mysql, stmt.data, stmt.len))
            errors++;
        stmt.len = 0;
    }
    int status;
    if (ferror(in)) {
        perror("my_restore: reading the dump");
        status = 2;
    } else {
        /* a last statement without its delimiter: mysql sends it too */
        if (!is_blank(stmt.data ? stmt.data : "", stmt.len)) {
            statements++;
            if (!send_statement(mysql, stmt.data, stmt.len))
                errors++;
        }
        printf("STATEMENTS: %lu ERRORS: %lu\n", statements, errors);
        status = errors ? 1 : 0;
    }
    free(line);
    free(stmt.data);
    if (in != stdin)
        fclose(in);
    mysql_close(mysql);
    return status;
}
