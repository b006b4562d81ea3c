/* A libpq client that queues statements in pipeline mode (libpq 14+).
 *
 * pg_pipeline [--encoding ENC] [--scs on|off] [--input HEX] [--prepare SQL]
 *             [--after SQL]... STATEMENT...
 *
 * Connects with the PG* environment, SETs client_encoding and
 * standard_conforming_strings (with scs off also backslash_quote = on and
 * escape_string_warning = off) outside the pipeline, then enters pipeline
 * mode and queues every STATEMENT with PQsendQueryParams (no parameters;
 * libpq 15 refuses PQsendQuery in pipeline mode), the statement "@prepared"
 * with PQsendQueryPrepared of the --prepare statement (PQprepare'd before
 * the pipeline as "qg_prepared"); a "%s" in a statement is replaced by the input (HEX decoded)
 * escaped byte by byte as addslashes does.  One PQpipelineSync, then every
 * result is read and printed (pg_print.h; a statement libpq refused to queue
 * prints "QUEUE-ERROR: <PQerrorMessage>"), the pipeline is left, and each
 * --after statement runs with PQexec.
 * Exit status: 0 when the connection worked, 2 on usage or connection errors.
 */
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg_print.h"

#define MAX_STATEMENTS 32

static void usage(void)
{
    fprintf(stderr, "usage: pg_pipeline [--encoding ENC] [--scs on|off] [--input HEX] [--prepare SQL]\n"
                    "                   [--after SQL]... STATEMENT...\n");
    exit(2);
}

static void exec_print(PGconn *conn, const char *sql)
{
    PGresult *res = PQexec(conn, sql);
    print_result(conn, res);
    PQclear(res);
}

/* HEX decoded and escaped as addslashes does. */
static char *escaped_input(const char *hex)
{
    size_t n = strlen(hex);
    char *out = malloc(n + 1), *p = out;
    if (!out || n % 2)
        usage();
    for (size_t i = 0; i + 1 < n; i += 2) {
        unsigned value;
        if (sscanf(hex + i, "%2x", &value) != 1)
            usage();
        if (value == '\'' || value == '\\')
            *p++ = '\\';
        *p++ = (char)value;
    }
    *p = '\0';
    return out;
}

static char *paste(const char *statement, const char *value)
{
    const char *hole = strstr(statement, "%s");
    if (!hole || !value)
        return strdup(statement);
    size_t head = (size_t)(hole - statement);
    char *sql = malloc(strlen(statement) + strlen(value) + 1);
    if (!sql)
        exit(2);
    memcpy(sql, statement, head);
    strcpy(sql + head, value);
    strcat(sql, hole + 2);
    return sql;
}

int main(int argc, char **argv)
{
    const char *encoding = NULL, *scs = NULL, *prepare = NULL, *after[MAX_STATEMENTS];
    char *input = NULL;
    int n_after = 0, i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
        if (i + 1 >= argc)
            usage();
        if (strcmp(argv[i], "--encoding") == 0)
            encoding = argv[i + 1];
        else if (strcmp(argv[i], "--scs") == 0)
            scs = argv[i + 1];
        else if (strcmp(argv[i], "--input") == 0)
            input = escaped_input(argv[i + 1]);
        else if (strcmp(argv[i], "--prepare") == 0)
            prepare = argv[i + 1];
        else if (strcmp(argv[i], "--after") == 0 && n_after < MAX_STATEMENTS)
            after[n_after++] = argv[i + 1];
        else
            usage();
    }
    if (i >= argc || argc - i > MAX_STATEMENTS)
        usage();

    PGconn *conn = PQconnectdb("");
    if (PQstatus(conn) != CONNECTION_OK) {
        fprintf(stderr, "pg_pipeline: %s", PQerrorMessage(conn));
        return 2;
    }
    char set[256];
    if (encoding && PQsetClientEncoding(conn, encoding) != 0) {
        fprintf(stderr, "pg_pipeline: cannot set client_encoding %s\n", encoding);
        return 2;
    }
    if (scs) {
        snprintf(set, sizeof set, "SET standard_conforming_strings = %s", scs);
        PQclear(PQexec(conn, set));
        if (strcmp(scs, "off") == 0)
            PQclear(PQexec(conn, "SET backslash_quote = on; SET escape_string_warning = off"));
    }

    if (prepare) {
        PGresult *res = PQprepare(conn, "qg_prepared", prepare, 0, NULL);
        print_result(conn, res);
        PQclear(res);
    }
    if (!PQenterPipelineMode(conn)) {
        fprintf(stderr, "pg_pipeline: %s", PQerrorMessage(conn));
        return 2;
    }
    int queued = 0;
    for (; i < argc; i++) {
        char *sql = paste(argv[i], input);
        int ok = strcmp(sql, "@prepared") == 0
                     ? PQsendQueryPrepared(conn, "qg_prepared", 0, NULL, NULL, NULL, 0)
                     : PQsendQueryParams(conn, sql, 0, NULL, NULL, NULL, NULL, 0);
        if (ok)
            queued++;
        else
            print_line("QUEUE-ERROR: ", PQerrorMessage(conn));
        free(sql);
    }
    if (!PQpipelineSync(conn)) {
        fprintf(stderr, "pg_pipeline: %s", PQerrorMessage(conn));
        return 2;
    }
    /* Each queued statement's results end with a NULL; then the sync's. */
    for (int done = 0; done <= queued;) {
        PGresult *res = PQgetResult(conn);
        if (!res) {
            done++;
            continue;
        }
        int sync = PQresultStatus(res) == PGRES_PIPELINE_SYNC;
        print_result(conn, res);
        PQclear(res);
        if (sync)
            break;
    }
    if (!PQexitPipelineMode(conn))
        print_line("EXIT-ERROR: ", PQerrorMessage(conn));
    for (int k = 0; k < n_after; k++)
        exec_print(conn, after[k]);
    free(input);
    PQfinish(conn);
    return 0;
}
