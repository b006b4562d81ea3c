/* A program that loads its database modules at run time, as PHP, Perl and
 * Python do: it links neither client library and dlopen()s two extension
 * objects (tests/clients/ext/qgext_pg.c, qgext_my.c), each linked to its
 * client library, then uses both at once.
 *
 * both_ext PG_EXT MY_EXT MY_SOCKET
 *
 * Three passes; each dlopen()s both extensions (pass 1 RTLD_LOCAL, pass 2
 * RTLD_LOCAL | RTLD_DEEPBIND as PHP does, pass 3 RTLD_GLOBAL), runs an
 * attack and an ordinary query through each, then both from two threads at
 * once, and dlclose()s both.  Prints per pass
 *   "PASS n pg: blocked=B clean=C", "PASS n my: blocked=B clean=C",
 *   "PASS n both: rounds=R ok",
 * "FAIL: …" lines, and "BOTH_EXT: F failures" at the end.
 * Exit status: 0 when nothing failed, 1 on failures, 2 on usage errors.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

typedef int (*pg_query_fn)(const char *, const char *, char *, size_t);
typedef int (*my_query_fn)(const char *, const char *, const char *, char *, size_t);

#define ROUNDS 10

static const char *my_socket;
static pg_query_fn pg_query;
static my_query_fn my_query;
static int failures;

static void fail(int pass, const char *what, const char *got)
{
    __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
    printf("FAIL: pass %d: %s: %.300s\n", pass, what, got ? got : "(null)");
}

/* SJIS 0x95 0x5c and GBK 0xbf 0x5c swallow the backslash addslashes added. */
static const char pg_attack[] = "SELECT 'x\x95\x5c' OR 1=1 --'";
static const char my_attack[] = "SELECT 'x\xbf\x5c' OR 1=1 -- '";

/* Runs the attack and an ordinary query through one extension; counts. */
static void pg_pair(int pass, int *blocked, int *clean)
{
    char out[512];
    if (pg_query("SJIS", pg_attack, out, sizeof out) == 1 &&
        strncmp(out, "ERROR:  quoteguard:", 19) == 0) /* as libpq words a server error */
        ++*blocked;
    else
        fail(pass, "pg attack not blocked", out);
    if (pg_query("SJIS", "SELECT 'ok' || 42", out, sizeof out) == 0 && strcmp(out, "ok42") == 0)
        ++*clean;
    else
        fail(pass, "pg ordinary query", out);
}

static void my_pair(int pass, int *blocked, int *clean)
{
    char out[512];
    if (my_query(my_socket, "gbk", my_attack, out, sizeof out) == 1 &&
        strncmp(out, "quoteguard:", 11) == 0)
        ++*blocked;
    else
        fail(pass, "mysql attack not blocked", out);
    if (my_query(my_socket, "gbk", "SELECT CONCAT('ok', 42)", out, sizeof out) == 0 &&
        strcmp(out, "ok42") == 0)
        ++*clean;
    else
        fail(pass, "mysql ordinary query", out);
}

typedef struct lane {
    int pass;
    int is_pg;
    int blocked, clean;
} lane;

static void *run_lane(void *arg)
{
    lane *l = arg;
    for (int i = 0; i < ROUNDS; i++) {
        if (l->is_pg)
            pg_pair(l->pass, &l->blocked, &l->clean);
        else
            my_pair(l->pass, &l->blocked, &l->clean);
    }
    return NULL;
}

static void one_pass(int pass, const char *pg_path, const char *my_path, int flags)
{
    void *pg = dlopen(pg_path, flags);
    void *my = dlopen(my_path, flags);
    if (!pg || !my) {
        fail(pass, "dlopen", dlerror());
        return;
    }
    pg_query = (pg_query_fn)dlsym(pg, "qgext_pg_query");
    my_query = (my_query_fn)dlsym(my, "qgext_my_query");
    if (!pg_query || !my_query) {
        fail(pass, "dlsym", dlerror());
        return;
    }
    int blocked = 0, clean = 0;
    pg_pair(pass, &blocked, &clean);
    printf("PASS %d pg: blocked=%d clean=%d\n", pass, blocked, clean);
    blocked = clean = 0;
    my_pair(pass, &blocked, &clean);
    printf("PASS %d my: blocked=%d clean=%d\n", pass, blocked, clean);

    lane lanes[2] = {{pass, 1, 0, 0}, {pass, 0, 0, 0}};
    pthread_t ids[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&ids[i], NULL, run_lane, &lanes[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(ids[i], NULL);
    if (lanes[0].blocked == ROUNDS && lanes[0].clean == ROUNDS && lanes[1].blocked == ROUNDS &&
        lanes[1].clean == ROUNDS)
        printf("PASS %d both: rounds=%d ok\n", pass, ROUNDS);
    if (dlclose(pg) != 0 || dlclose(my) != 0)
        fail(pass, "dlclose", dlerror());
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: both_ext PG_EXT MY_EXT MY_SOCKET\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    my_socket = argv[3];
    static const int flags[] = {RTLD_NOW | RTLD_LOCAL, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND,
                                RTLD_NOW | RTLD_GLOBAL};
    for (int pass = 1; pass <= 3; pass++)
        one_pass(pass, argv[1], argv[2], flags[pass - 1]);
    printf("BOTH_EXT: %d failures\n", failures);
    return failures ? 1 : 0;
}
