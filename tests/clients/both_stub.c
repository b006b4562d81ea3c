/* Calls the client-library entries by name, the way a program linked to
 * them would reach the preloaded shim, with a stand-in library loaded (or
 * none), so that the shim meets missing real symbols and encodings it
 * cannot know (tests/t/74-failsafe.t).
 *
 * both_stub pq STUB_PQ SQL...   PQexec(SQL) of each with stub_pq.c loaded
 * both_stub my STUB_MY SQL...   mysql_real_query(SQL) of each with stub_mariadb.c loaded
 * both_stub none SQL            PQexec and mysql_real_query, no library at all
 *
 * Prints, for PQexec: "PQEXEC: null|result", "PQERRORMESSAGE: …"; for
 * mysql_real_query: "MYSQL_REAL_QUERY: rc", "MYSQL_ERRNO: n", "MYSQL_ERROR: …";
 * with a stub, after the last: "SENT: n", the queries that reached it.
 * Exit status: 0, or 2 on usage or loading errors.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef void *(*pqexec_fn)(void *, const char *);
typedef char *(*pqerror_fn)(const void *);
typedef int (*real_query_fn)(void *, const char *, unsigned long);
typedef unsigned (*my_errno_fn)(void *);
typedef const char *(*my_error_fn)(void *);
typedef int (*sent_fn)(void);

/* Handles the stand-ins take as connections: only their address matters. */
static char pg_conn[64], my_conn[1024];

static void one_line(const char *label, const char *text)
{
    fputs(label, stdout);
    for (; text && *text; text++)
        putchar(*text == '\n' ? ' ' : *text);
    putchar('\n');
}

static void run_pq(const char *sql)
{
    pqexec_fn exec = (pqexec_fn)dlsym(RTLD_DEFAULT, "PQexec");
    pqerror_fn error = (pqerror_fn)dlsym(RTLD_DEFAULT, "PQerrorMessage");
    if (!exec || !error) {
        printf("PQEXEC: no such symbol\n");
        return;
    }
    void *res = exec(pg_conn, sql);
    printf("PQEXEC: %s\n", res ? "result" : "null");
    one_line("PQERRORMESSAGE: ", error(pg_conn));
}

static void run_my(const char *sql)
{
    real_query_fn query = (real_query_fn)dlsym(RTLD_DEFAULT, "mysql_real_query");
    my_errno_fn errnum = (my_errno_fn)dlsym(RTLD_DEFAULT, "mysql_errno");
    my_error_fn error = (my_error_fn)dlsym(RTLD_DEFAULT, "mysql_error");
    if (!query || !errnum || !error) {
        printf("MYSQL_REAL_QUERY: no such symbol\n");
        return;
    }
    printf("MYSQL_REAL_QUERY: %d\n", query(my_conn, sql, (unsigned long)strlen(sql)));
    printf("MYSQL_ERRNO: %u\n", errnum(my_conn));
    one_line("MYSQL_ERROR: ", error(my_conn));
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "none") == 0) {
        run_pq(argv[2]);
        run_my(argv[2]);
        return 0;
    }
    if (argc < 4 || (strcmp(argv[1], "pq") != 0 && strcmp(argv[1], "my") != 0)) {
        fprintf(stderr, "usage: both_stub pq|my STUB SQL... | both_stub none SQL\n");
        return 2;
    }
    void *stub = dlopen(argv[2], RTLD_NOW | RTLD_GLOBAL);
    if (!stub) {
        fprintf(stderr, "both_stub: %s\n", dlerror());
        return 2;
    }
    int is_pq = strcmp(argv[1], "pq") == 0;
    for (int i = 3; i < argc; i++) {
        if (is_pq)
            run_pq(argv[i]);
        else
            run_my(argv[i]);
    }
    sent_fn sent = (sent_fn)dlsym(stub, is_pq ? "stub_pq_sent" : "stub_my_sent");
    printf("SENT: %d\n", sent ? sent() : -1);
    return 0;
}
