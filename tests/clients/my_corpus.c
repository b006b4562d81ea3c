/* Sends mysqltest statements (tests/corpus/mysqltest_check.c --emit) to a
 * real server, one connection per script, and tells for each statement the
 * shim found something in whether the server accepted it.  Run under the
 * shim in audit mode: every statement reaches the server, and a finding
 * that would block in enforce is a line of the shim's log.
 *
 * my_corpus SOCKET LOG < records
 *   records: "F path" (a new script: a new connection on an emptied
 *   database), "C charset" (mysql_set_character_set), "S file:line HEX",
 *   "K file:line" (a statement the emitter left out: counted as skipped)
 * Output: "FINDING file:line reason accepted|rejected" for each statement
 * with a finding that blocks in enforce (every reason but
 * illformed_sequence, which the default policy only logs), then
 * "CORPUS: S statements sent, A accepted, K skipped, F findings (B on
 * accepted statements)".
 */
#include <mysql.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static MYSQL *connect_fresh(const char *socket)
{
    MYSQL *mysql = mysql_init(NULL);
    unsigned timeout = 5;
    mysql_options(mysql, MYSQL_SET_CHARSET_NAME, "latin1");
    mysql_options(mysql, MYSQL_OPT_READ_TIMEOUT, &timeout);
    mysql_options(mysql, MYSQL_OPT_WRITE_TIMEOUT, &timeout);
    mysql_options(mysql, MYSQL_INIT_COMMAND, "SET SESSION default_storage_engine = MyISAM");
    if (!mysql_real_connect(mysql, NULL, "root", "", NULL, 0, socket, 0)) {
        fprintf(stderr, "my_corpus: %s\n", mysql_error(mysql));
        exit(2);
    }
    if (mysql_query(mysql, "DROP DATABASE IF EXISTS test") ||
        mysql_query(mysql, "CREATE DATABASE test") || mysql_select_db(mysql, "test")) {
        fprintf(stderr, "my_corpus: %s\n", mysql_error(mysql));
        exit(2);
    }
    return mysql;
}

/* The reasons of the finding lines the log gained since *seen. */
static void new_findings(FILE *log, long *seen, const char *where, bool accepted,
                         unsigned long *findings, unsigned long *on_accepted)
{
    fseek(log, *seen, SEEK_SET);
    char line[8192];
    while (fgets(line, sizeof line, log)) {
        const char *r = strstr(line, "\"reason\":\"");
        if (!strstr(line, "\"action\":") || !r)
            continue;
        r += 10;
        size_t n = strcspn(r, "\"");
        if (n == 18 && strncmp(r, "illformed_sequence", 18) == 0)
            continue; /* logged only, in enforce too */
        printf("FINDING %s %.*s %s\n", where, (int)n, r, accepted ? "accepted" : "rejected");
        (*findings)++;
        *on_accepted += accepted;
    }
    clearerr(log);
    *seen = ftell(log);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: my_corpus SOCKET LOG < records\n");
        return 2;
    }
    FILE *log = fopen(argv[2], "a+");
    if (!log)
        return 2;
    fseek(log, 0, SEEK_END);
    long seen = ftell(log);
    MYSQL *mysql = NULL;
    static char record[1 << 20];
    static char sql[1 << 19];
    unsigned long sent = 0, accepted = 0, skipped = 0, findings = 0, on_accepted = 0;
    while (fgets(record, sizeof record, stdin)) {
        record[strcspn(record, "\n")] = '\0';
        if (record[0] == 'F') {
            if (mysql)
                mysql_close(mysql);
            mysql = connect_fresh(argv[1]);
        } else if (record[0] == 'C' && mysql) {
            mysql_set_character_set(mysql, record + 2);
        } else if (record[0] == 'K') {
            skipped++;
        } else if (record[0] == 'S' && mysql) {
            char *where = record + 2, *hex = strchr(where, ' ');
            if (!hex)
                continue;
            *hex++ = '\0';
            size_t len = 0;
            for (; hex[2 * len] && hex[2 * len + 1] && len + 1 < sizeof sql; len++) {
                unsigned v;
                sscanf(hex + 2 * len, "%2x", &v);
                sql[len] = (char)v;
            }
            sql[len] = '\0';
            sent++;
            bool ok = mysql_real_query(mysql, sql, (unsigned long)len) == 0;
            if (ok) {
                accepted++;
                do {
                    MYSQL_RES *res = mysql_store_result(mysql);
                    if (res)
                        mysql_free_result(res);
                } while (mysql_next_result(mysql) == 0);
            } else if (mysql_errno(mysql) == 2006 || mysql_errno(mysql) == 2013) {
                mysql_close(mysql); /* timed out or lost: go on with a new one */
                mysql = connect_fresh(argv[1]);
            }
            new_findings(log, &seen, where, ok, &findings, &on_accepted);
        }
    }
    if (mysql)
        mysql_close(mysql);
    printf("CORPUS: %lu statements sent, %lu accepted, %lu skipped, %lu findings (%lu on accepted "
           "statements)\n",
           sent, accepted, skipped, findings, on_accepted);
    return 0;
}
