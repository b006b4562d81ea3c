/* Output of the libpq test clients, one parseable item per line:
 *   STATUS: PGRES_…     a result status
 *   ROW: v1|v2          a result row (NULL printed as \N)
 *   ERROR: SQLSTATE MSG a failed statement ("-" when no SQLSTATE)
 *   SEVERITY: S V       its severity, localized and not ("-" when none)
 *   ERRMSG: …           PQresultErrorMessage / VERBOSE: … the verbose form
 *   CONNERR: …          PQerrorMessage after a failure
 */
#ifndef PG_PRINT_H
#define PG_PRINT_H

#include <libpq-fe.h>
#include <stdio.h>
#include <string.h>

/* Prints text on one line: newlines become spaces, trailing ones go. */
static void __attribute__((unused)) print_line(const char *label, const char *text)
{
    size_t len = text ? strlen(text) : 0;
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
        len--;
    fputs(label, stdout);
    for (size_t i = 0; i < len; i++)
        putchar(text[i] == '\n' ? ' ' : text[i]);
    putchar('\n');
}

static void __attribute__((unused)) print_result(PGconn *conn, PGresult *res)
{
    ExecStatusType status = PQresultStatus(res);
    print_line("STATUS: ", PQresStatus(status));
    if (status == PGRES_TUPLES_OK) {
        for (int row = 0; row < PQntuples(res); row++) {
            fputs("ROW: ", stdout);
            for (int col = 0; col < PQnfields(res); col++) {
                if (col > 0)
                    putchar('|');
                fputs(PQgetisnull(res, row, col) ? "\\N" : PQgetvalue(res, row, col), stdout);
            }
            putchar('\n');
        }
    } else if (status != PGRES_COMMAND_OK && status != PGRES_EMPTY_QUERY) {
        const char *sqlstate = PQresultErrorField(res, PG_DIAG_SQLSTATE);
        const char *primary = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
        printf("ERROR: %s ", sqlstate ? sqlstate : "-");
        print_line("", primary ? primary : PQresultErrorMessage(res));
        const char *severity = PQresultErrorField(res, PG_DIAG_SEVERITY);
        const char *severity_c = PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED);
        printf("SEVERITY: %s %s\n", severity ? severity : "-", severity_c ? severity_c : "-");
        print_line("ERRMSG: ", PQresultErrorMessage(res));
        char *verbose = PQresultVerboseErrorMessage(res, PQERRORS_VERBOSE, PQSHOW_CONTEXT_NEVER);
        print_line("VERBOSE: ", verbose);
        PQfreemem(verbose);
        print_line("CONNERR: ", PQerrorMessage(conn));
    }
}

#endif
