/* A legacy-style libpq client: pastes an escaped string into SQL text.
 *
 * pg_legacy [--encoding ENC] [--scs on|off] [--escape naive|conn|literal|none]
 *           [--api exec|send|params|prepare] [--after SQL]... TEMPLATE HEX
 *
 * Connects with the PG* environment, SETs client_encoding and
 * standard_conforming_strings (and, when scs is off, backslash_quote = on so
 * the server accepts \', and escape_string_warning = off), decodes HEX into
 * the input bytes, escapes them — naive: a backslash before ' and \ byte by
 * byte (addslashes), conn: PQescapeStringConn, literal: PQescapeLiteral (quotes
 * included), none: raw — replaces the first
 * %s of TEMPLATE with the result and runs it through the chosen API (params:
 * a TEMPLATE using $1 also gets the raw input as the value of $1).  Each
 * --after statement then runs with PQexec on the same connection.
 * Output: see pg_print.h; a refused PQsendQuery prints
 * "ERROR: - <PQerrorMessage>".
 * Exit status: 0 when the connection worked, 2 on usage or connection errors.
 */
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg_print.h"

static void usage(void)
{
    fprintf(stderr, "usage: pg_legacy [--encoding ENC] [--scs on|off] [--escape naive|conn|literal|none]\n"
                    "                 [--api exec|send|params|prepare] [--after SQL]... TEMPLATE HEX\n");
    exit(2);
}

/* Runs one statement with PQexec; returns false when it failed. */
static int exec_plain(PGconn *conn, const char *sql)
{
    PGresult *res = PQexec(conn, sql);
    print_result(conn, res);
    int ok = PQresultStatus(res) == PGRES_COMMAND_OK || PQresultStatus(res) == PGRES_TUPLES_OK;
    PQclear(res);
    return ok;
}

static void run_send(PGconn *conn, const char *sql)
{
    if (!PQsendQuery(conn, sql)) {
        print_line("ERROR: - ", PQerrorMessage(conn));
        return;
    }
    PGresult *res;
    while ((res = PQgetResult(conn)) != NULL) {
        print_result(conn, res);
        PQclear(res);
    }
}

static void run_prepare(PGconn *conn, const char *sql)
{
    PGresult *res = PQprepare(conn, "pg_legacy_stmt", sql, 0, NULL);
    print_result(conn, res);
    int prepared = PQresultStatus(res) == PGRES_COMMAND_OK;
    PQclear(res);
    if (!prepared)
        return;
    res = PQexecPrepared(conn, "pg_legacy_stmt", 0, NULL, NULL, NULL, 0);
    print_result(conn, res);
    PQclear(res);
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Decodes HEX into a new buffer; *len gets the byte count. */
static char *decode_hex(const char *hex, size_t *len)
{
    size_t n = strlen(hex);
    if (n % 2)
        usage();
    char *out = malloc(n / 2 + 1);
    if (!out)
        exit(2);
    for (size_t i = 0; i < n / 2; i++) {
        int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            usage();
        out[i] = (char)(hi << 4 | lo);
    }
    out[n / 2] = '\0';
    *len = n / 2;
    return out;
}

/* The byte-wise escaper legacy code used: blind to multibyte characters. */
static char *escape_naive(const char *in, size_t len)
{
    char *out = malloc(2 * len + 1), *p = out;
    if (!out)
        exit(2);
    for (size_t i = 0; i < len; i++) {
        if (in[i] == '\'' || in[i] == '\\')
            *p++ = '\\';
        *p++ = in[i];
    }
    *p = '\0';
    return out;
}

static char *escape_conn(PGconn *conn, const char *in, size_t len)
{
    char *out = malloc(2 * len + 1);
    int error = 0;
    if (!out)
        exit(2);
    PQescapeStringConn(conn, out, in, len, &error);
    if (error)
        print_line("ESCAPE-ERROR: ", PQerrorMessage(conn));
    return out;
}

/* TEMPLATE with its first %s replaced by value. */
static char *paste(const char *template, const char *value)
{
    const char *hole = strstr(template, "%s");
    if (!hole)
        usage();
    size_t head = (size_t)(hole - template);
    char *sql = malloc(strlen(template) + strlen(value) + 1);
    if (!sql)
        exit(2);
    memcpy(sql, template, head);
    strcpy(sql + head, value);
    strcat(sql, hole + 2);
    return sql;
}

int main(int argc, char **argv)
{
    const char *encoding = NULL, *scs = NULL, *escape = "naive", *api = "exec";
    const char *after[16];
    int after_count = 0, i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
        if (i + 1 >= argc)
            usage();
        if (strcmp(argv[i], "--encoding") == 0)
            encoding = argv[i + 1];
        else if (strcmp(argv[i], "--scs") == 0)
            scs = argv[i + 1];
        else if (strcmp(argv[i], "--escape") == 0)
            escape = argv[i + 1];
        else if (strcmp(argv[i], "--api") == 0)
            api = argv[i + 1];
        else if (strcmp(argv[i], "--after") == 0 && after_count < 16)
            after[after_count++] = argv[i + 1];
        else
            usage();
    }
    if (argc - i != 2)
        usage();
    const char *template = argv[i], *hex = argv[i + 1];

    PGconn *conn = PQconnectdb("");
    if (PQstatus(conn) != CONNECTION_OK) {
        print_line("CONNECT-FAILED: ", PQerrorMessage(conn));
        return 2;
    }
    char set[128];
    if (encoding) {
        snprintf(set, sizeof set, "SET client_encoding TO '%s'", encoding);
        if (!exec_plain(conn, set))
            return 2;
    }
    if (scs) {
        snprintf(set, sizeof set, "SET standard_conforming_strings TO %s", scs);
        if (!exec_plain(conn, set))
            return 2;
        if (strcmp(scs, "off") == 0 &&
            (!exec_plain(conn, "SET backslash_quote TO on") ||
             !exec_plain(conn, "SET escape_string_warning TO off")))
            return 2;
    }

    size_t len;
    char *input = decode_hex(hex, &len);
    char *escaped;
    if (strcmp(escape, "naive") == 0)
        escaped = escape_naive(input, len);
    else if (strcmp(escape, "conn") == 0)
        escaped = escape_conn(conn, input, len);
    else if (strcmp(escape, "literal") == 0) {
        char *literal = PQescapeLiteral(conn, input, len);
        if (!literal) {
            print_line("ESCAPE-ERROR: ", PQerrorMessage(conn));
            return 2;
        }
        escaped = strdup(literal);
        PQfreemem(literal);
    } else if (strcmp(escape, "none") == 0)
        escaped = strdup(input);
    else
        usage();
    char *sql = paste(template, escaped);

    if (strcmp(api, "exec") == 0)
        exec_plain(conn, sql);
    else if (strcmp(api, "send") == 0)
        run_send(conn, sql);
    else if (strcmp(api, "params") == 0) {
        /* A template that uses $1 also gets the raw input as its value:
         * parameters travel apart from the text and are not checked. */
        const char *values[1] = {input};
        int count = strstr(template, "$1") ? 1 : 0;
        PGresult *res = PQexecParams(conn, sql, count, NULL, values, NULL, NULL, 0);
        print_result(conn, res);
        PQclear(res);
    } else if (strcmp(api, "prepare") == 0)
        run_prepare(conn, sql);
    else
        usage();

    for (int a = 0; a < after_count; a++)
        exec_plain(conn, after[a]);

    free(sql);
    free(escaped);
    free(input);
    PQfinish(conn);
    return 0;
}
