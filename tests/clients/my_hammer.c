/* Many threads, each with its own libmariadb connection, mixing attacks and
 * ordinary queries; optionally forking while they run.
 *
 * my_hammer SOCKET THREADS ROUNDS [FORKS]
 *
 * Every round of every thread (SET NAMES gbk, sent as a plain query, so
 * that the library still escapes as its default charset) sends:
 *   - an attack through mysql_real_query: addslashes output of bf 27 (GBK
 *     0xbf 0x5c swallows the backslash); it must fail with mysql_error
 *     starting "quoteguard:" and mysql_errno 1105;
 *   - the same attack through mysql_send_query: it must fail likewise;
 *   - an ordinary query with GBK text (trail bytes 0x5c included) escaped by
 *     mysql_real_escape_string after mysql_set_character_set: the server
 *     must give back its bytes (compared as HEX());
 *   - SELECT of the thread's own number.
 * Every 8 rounds a thread closes its connection and opens a new one.
 * FORKS > 0: the main thread forks that many children while the threads
 * run; each connects anew, must block an attack and answer an ordinary
 * query, within 20 s.
 * Prints "FAIL: …" lines and then
 *   "HAMMER: T threads x R rounds: A attacks blocked, C clean ok, F forks ok, N failures".
 * Exit status: 0 when nothing failed, 1 on failures, 2 on usage errors.
 */
#include <mysql.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64
/* Connections come and go while other threads query. */
#define RECONNECT_EVERY 8

static const char *socket_path;
static int rounds;
static int failures, attacks_blocked, clean_ok;

static void fail(int thread, int round, const char *what, const char *got)
{
    __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
    char line[512];
    int n = snprintf(line, sizeof line, "FAIL: [%d] thread %d round %d: %s: %.300s\n",
                     (int)getpid(), thread, round, what, got ? got : "(null)");
    fwrite(line, 1, n < (int)sizeof line ? (size_t)n : sizeof line - 1, stdout);
    fflush(stdout);
}

static int starts_with(const char *text, const char *prefix)
{
    return text && strncmp(text, prefix, strlen(prefix)) == 0;
}

/* Runs sql; on success *value gets the first column of the first row
 * (malloc'd, or NULL when there is no row).  Returns 0 on success. */
static int run(MYSQL *mysql, const char *sql, size_t len, char **value)
{
    if (value)
        *value = NULL;
    if (mysql_real_query(mysql, sql, (unsigned long)len) != 0)
        return 1;
    MYSQL_RES *res = mysql_store_result(mysql);
    if (res) {
        MYSQL_ROW row = mysql_fetch_row(res);
        if (row && row[0] && value)
            *value = strdup(row[0]);
        mysql_free_result(res);
    }
    return mysql_errno(mysql) != 0;
}

static MYSQL *open_gbk(int thread)
{
    MYSQL *mysql = mysql_init(NULL);
    if (!mysql) {
        fail(thread, 0, "mysql_init", "NULL");
        return NULL;
    }
    if (!mysql_real_connect(mysql, NULL, "root", "", NULL, 0, socket_path, 0)) {
        fail(thread, 0, "connect", mysql_error(mysql));
        mysql_close(mysql);
        return NULL;
    }
    if (run(mysql, "SET NAMES gbk", 13, NULL) != 0)
        fail(thread, 0, "SET NAMES gbk", mysql_error(mysql));
    return mysql;
}

static void hex_of(const char *bytes, size_t len, char *out)
{
    static const char digits[] = "0123456789ABCDEF";
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[(unsigned char)bytes[i] >> 4];
        out[2 * i + 1] = digits[(unsigned char)bytes[i] & 15];
    }
    out[2 * len] = '\0';
}

static void one_round(MYSQL *mysql, int thread, int round)
{
    char attack[96];
    int len = snprintf(attack, sizeof attack, "SELECT 't%d\xbf\x5c' OR 1=1 -- '", thread);

    if (mysql_real_query(mysql, attack, (unsigned long)len) != 0 &&
        starts_with(mysql_error(mysql), "quoteguard: blocked") && mysql_errno(mysql) == 1105) {
        __atomic_add_fetch(&attacks_blocked, 1, __ATOMIC_RELAXED);
    } else {
        fail(thread, round, "attack through mysql_real_query not blocked", mysql_error(mysql));
        MYSQL_RES *res = mysql_store_result(mysql);
        if (res)
            mysql_free_result(res);
    }

    if ((mysql_send_query(mysql, attack, (unsigned long)len) != 0 ||
         mysql_read_query_result(mysql) != 0) &&
        starts_with(mysql_error(mysql), "quoteguard: blocked")) {
        __atomic_add_fetch(&attacks_blocked, 1, __ATOMIC_RELAXED);
    } else {
        fail(thread, round, "attack through mysql_send_query not blocked", mysql_error(mysql));
        MYSQL_RES *res = mysql_store_result(mysql);
        if (res)
            mysql_free_result(res);
    }

    /* GBK text: 0xbf5c and 0xd55c end in 0x5c, then a quote and a backslash. */
    char text[64], escaped[140], sql[200], want[140], *got;
    int text_len = snprintf(text, sizeof text, "\xbf\x5c%d'\xd5\x5c\\%d\xbf\x5c", thread, round);
    mysql_real_escape_string(mysql, escaped, text, (unsigned long)text_len);
    int sql_len = snprintf(sql, sizeof sql, "SELECT HEX('%s')", escaped);
    hex_of(text, (size_t)text_len, want);
    if (run(mysql, sql, (size_t)sql_len, &got) == 0 && got && strcmp(got, want) == 0)
        __atomic_add_fetch(&clean_ok, 1, __ATOMIC_RELAXED);
    else
        fail(thread, round, "GBK text query", got ? got : mysql_error(mysql));
    free(got);

    char number[32];
    snprintf(number, sizeof number, "%d", thread * 100000 + round);
    sql_len = snprintf(sql, sizeof sql, "SELECT %s", number);
    if (run(mysql, sql, (size_t)sql_len, &got) == 0 && got && strcmp(got, number) == 0)
        __atomic_add_fetch(&clean_ok, 1, __ATOMIC_RELAXED);
    else
        fail(thread, round, "number query", got ? got : mysql_error(mysql));
    free(got);
}

static MYSQL *open_for_escaping(int thread)
{
    MYSQL *mysql = open_gbk(thread);
    /* mysql_real_escape_string must know the charset the server uses */
    if (mysql && mysql_set_character_set(mysql, "gbk") != 0)
        fail(thread, 0, "mysql_set_character_set", mysql_error(mysql));
    return mysql;
}

static void *worker(void *arg)
{
    int thread = (int)(long)arg;
    mysql_thread_init();
    MYSQL *mysql = open_for_escaping(thread);
    if (mysql) {
        for (int round = 0; round < rounds && mysql; round++) {
            one_round(mysql, thread, round);
            if (round % RECONNECT_EVERY == RECONNECT_EVERY - 1 && round + 1 < rounds) {
                mysql_close(mysql);
                mysql = open_for_escaping(thread);
            }
        }
        if (mysql)
            mysql_close(mysql);
    }
    mysql_thread_end();
    return NULL;
}

static void child_round(int child)
{
    failures = 0; /* the child's own: not an earlier child's, counted by the parent */
    alarm(20);
    int thread = 1000 + child;
    MYSQL *mysql = open_for_escaping(thread);
    if (mysql) {
        one_round(mysql, thread, 0);
        mysql_close(mysql);
    }
    fflush(stdout);
    _exit(failures ? 1 : 0);
}

static int child_passed(pid_t pid, int index)
{
    int status;
    if (waitpid(pid, &status, 0) != pid) {
        fail(index, 0, "forked child", "waitpid failed");
        return 0;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 1;
    char why[64];
    if (WIFSIGNALED(status))
        snprintf(why, sizeof why, "killed by signal %d%s", WTERMSIG(status),
                 WTERMSIG(status) == SIGALRM ? " (hung)" : "");
    else
        snprintf(why, sizeof why, "exit status %d", WEXITSTATUS(status));
    fail(index, 0, "forked child", why);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4 || argc > 5) {
        fprintf(stderr, "usage: my_hammer SOCKET THREADS ROUNDS [FORKS]\n");
        return 2;
    }
    socket_path = argv[1];
    int threads = atoi(argv[2]);
    rounds = atoi(argv[3]);
    int forks = argc > 4 ? atoi(argv[4]) : 0;
    if (threads < 1 || threads > MAX_THREADS || rounds < 1 || forks < 0) {
        fprintf(stderr, "usage: my_hammer SOCKET THREADS(1-%d) ROUNDS [FORKS]\n", MAX_THREADS);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (mysql_library_init(0, NULL, NULL) != 0)
        return 2;

    pthread_t ids[MAX_THREADS];
    for (int i = 0; i < threads; i++)
        if (pthread_create(&ids[i], NULL, worker, (void *)(long)i) != 0)
            return 2;
    int forks_ok = 0;
    for (int i = 0; i < forks; i++) {
        nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0)
            child_round(i);
        forks_ok += pid > 0 && child_passed(pid, i);
    }
    for (int i = 0; i < threads; i++)
        pthread_join(ids[i], NULL);
    mysql_library_end();
    printf("HAMMER: %d threads x %d rounds: %d attacks blocked, %d clean ok, %d forks ok, "
           "%d failures\n",
           threads, rounds, attacks_blocked, clean_ok, forks_ok, failures);
    return failures ? 1 : 0;
}
