/*
 * What the wire front costs, measured in pairs.  Run under
 * LD_PRELOAD=libquoteguard.so (bench/bench_wire.sh runs it).
 *
 *   bench_wire fd ROUNDS        non-database descriptors
 *   bench_wire pg PAIRS         one query, libpq front vs wire front
 *   bench_wire cpu ROUNDS       the wire front's own work per query, no server
 *
 * fd: each round times a batch of 1-byte write(2)s to /dev/null, read(2)s
 * from /dev/zero, and send(2)/recv(2) over a connected unix stream socket
 * (a socket the shim saw created, dropped from its table at the first
 * write), once through the entry points the shim interposes and once
 * through libc's own (dlsym on libc's handle); the order alternates.  The
 * median difference per call is what the shim adds to a descriptor that is
 * not a database connection.
 *
 * pg: two connections to the same server (PG* variables; with
 * PGSSLMODE=require over TLS, where the wire front reads the second one's
 * queries in libpq's SSL_write).  The first is
 * used through libpq's entry points the shim interposes, so the libpq front
 * checks its queries and hands its socket over; the second only through
 * libpq's own PQsendQuery and PQclear (asked of the C library's dlsym:
 * the shim answers dlsym on libpq's handle with its own functions), so the
 * wire front checks its queries at the socket.  Each
 * pair sends the same query on both (order alternating); a third, direct
 * connection opened with the wire front off would need another process, so
 * the baseline is bench_wire.sh's run without the shim.  Prints the median
 * latency of each and the median of the pair differences, and the same for
 * the client thread's CPU time per query.  Two connections
 * differ by their server processes' placement on the CPUs, by microseconds
 * either way (bench_wire.sh runs it without the shim too): this bounds the
 * wire front's cost from above on a quiet machine only.
 *
 * cpu: the work the wire front adds to the check itself, without a server:
 * rounds of 20000 PostgreSQL "SELECT 1" round trips through
 * qg_wire_write (a sink that takes every byte, the check the shim runs) and
 * qg_wire_read (the server's RowDescription, DataRow, CommandComplete,
 * ReadyForQuery), against the check alone (qg_guard_query_with) on the same
 * text, alternating; prints the medians per query.  Built with the shim's
 * objects.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "paired.h"
#include "guard.h"
#include "settings.h"
#include "wire_stream.h"

static void die(const char *what)
{
    fprintf(stderr, "bench_wire: %s\n", what);
    exit(1);
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ------------------------------------------------------------------- fds */

typedef ssize_t (*io_fn)(int, void *, size_t);
typedef ssize_t (*sock_fn)(int, void *, size_t, int);

#define BATCH 2000

static double time_io(io_fn fn, int fd, char *byte)
{
    uint64_t t0 = now_ns();
    for (int i = 0; i < BATCH; i++)
        fn(fd, byte, 1);
    return (double)(now_ns() - t0) / BATCH;
}

/* send then recv of one byte on a connected pair. */
static double time_sock(sock_fn send_fn, sock_fn recv_fn, int a, int b, char *byte)
{
    uint64_t t0 = now_ns();
    for (int i = 0; i < BATCH; i++) {
        send_fn(a, byte, 1, 0);
        recv_fn(b, byte, 1, 0);
    }
    return (double)(now_ns() - t0) / BATCH / 2;
}

/* A connected unix stream pair made with socket(2), as a program makes one. */
static void stream_pair(int *client, int *server)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/bench_wire.%d", (int)getpid());
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path);
    int listener = socket(AF_UNIX, SOCK_STREAM, 0);
    unlink(path);
    if (listener < 0 || bind(listener, (struct sockaddr *)&addr, sizeof addr) < 0 ||
        listen(listener, 1) < 0)
        die("cannot listen on a unix socket");
    *client = socket(AF_UNIX, SOCK_STREAM, 0);
    if (*client < 0 || connect(*client, (struct sockaddr *)&addr, sizeof addr) < 0)
        die("cannot connect");
    *server = accept(listener, NULL, NULL);
    close(listener);
    unlink(path);
}

static void bench_fds(int rounds)
{
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    io_fn libc_write = libc ? (io_fn)dlsym(libc, "write") : NULL;
    io_fn libc_read = libc ? (io_fn)dlsym(libc, "read") : NULL;
    sock_fn libc_send = libc ? (sock_fn)dlsym(libc, "send") : NULL;
    sock_fn libc_recv = libc ? (sock_fn)dlsym(libc, "recv") : NULL;
    if (!libc_write || !libc_read || !libc_send || !libc_recv)
        die("cannot find libc's own entries");
    if ((void *)libc_write == (void *)write)
        die("the shim is not preloaded: run under LD_PRELOAD=libquoteguard.so");
    int null_fd = open("/dev/null", O_WRONLY), zero_fd = open("/dev/zero", O_RDONLY);
    int a, b;
    stream_pair(&a, &b);
    char byte = 'x';
    write(a, &byte, 1); /* the first write drops the socket from the shim's table */
    read(b, &byte, 1);
    double *dw = calloc((size_t)rounds, sizeof(double));
    double *dr = calloc((size_t)rounds, sizeof(double));
    double *ds = calloc((size_t)rounds, sizeof(double));
    double *bw = calloc((size_t)rounds, sizeof(double));
    for (int r = 0; r < rounds; r++) {
        double shim_w, own_w, shim_r, own_r, shim_s, own_s;
        if (r % 2) {
            own_w = time_io(libc_write, null_fd, &byte);
            shim_w = time_io((io_fn)write, null_fd, &byte);
            own_r = time_io(libc_read, zero_fd, &byte);
            shim_r = time_io(read, zero_fd, &byte);
            own_s = time_sock(libc_send, libc_recv, a, b, &byte);
            shim_s = time_sock((sock_fn)send, recv, a, b, &byte);
        } else {
            shim_w = time_io((io_fn)write, null_fd, &byte);
            own_w = time_io(libc_write, null_fd, &byte);
            shim_r = time_io(read, zero_fd, &byte);
            own_r = time_io(libc_read, zero_fd, &byte);
            shim_s = time_sock((sock_fn)send, recv, a, b, &byte);
            own_s = time_sock(libc_send, libc_recv, a, b, &byte);
        }
        dw[r] = shim_w - own_w;
        dr[r] = shim_r - own_r;
        ds[r] = shim_s - own_s;
        bw[r] = own_w;
    }
    printf("fd\trounds=%d\tcalls_per_round=%d\twrite_devnull_ns=%.1f\tadded_write_ns=%.1f\t"
           "added_read_ns=%.1f\tadded_send_recv_ns=%.1f\n",
           rounds, BATCH, median(bw, (size_t)rounds), median(dw, (size_t)rounds),
           median(dr, (size_t)rounds), median(ds, (size_t)rounds));
}

/* ------------------------------------------------------------------- pg */

typedef PGresult *(*exec_fn)(PGconn *, const char *);
typedef void (*clear_fn)(PGresult *);

static uint64_t thread_cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* One query: its latency (us), and the client thread's CPU time (us) in *cpu. */
static double timed_query(exec_fn exec, clear_fn clear, PGconn *conn, const char *sql,
                          double *cpu)
{
    uint64_t c0 = thread_cpu_ns(), t0 = now_ns();
    PGresult *res = exec(conn, sql);
    uint64_t t1 = now_ns(), c1 = thread_cpu_ns();
    if (PQresultStatus(res) != PGRES_TUPLES_OK)
        die(PQresultErrorMessage(res));
    clear(res);
    *cpu = (double)(c1 - c0) / 1000.0;
    return (double)(t1 - t0) / 1000.0;
}

/* libpq's own PQsendQuery and PQclear (PQgetResult is not interposed):
 * libpq's PQexec would call PQsendQuery through its PLT, where the libpq
 * front's interposed one would check the query and hand the socket over. */
typedef int (*send_query_fn)(PGconn *, const char *);
static send_query_fn own_send_query;
static clear_fn own_clear;

static PGresult *own_exec(PGconn *conn, const char *sql)
{
    if (!own_send_query(conn, sql))
        die(PQerrorMessage(conn));
    PGresult *last = NULL, *res;
    while ((res = PQgetResult(conn)) != NULL) {
        if (last)
            own_clear(last);
        last = res;
    }
    return last;
}

static void bench_pg(int pairs)
{
    own_send_query =
        (send_query_fn)paired_own_symbol("libpq.so.5", "PQsendQuery", NULL);
    own_clear = (clear_fn)paired_own_symbol("libpq.so.5", "PQclear", NULL);
    if (!own_send_query || !own_clear)
        die("cannot find libpq's own entries");
    PGconn *front = PQconnectdb(""), *wire = PQconnectdb("");
    if (PQstatus(front) != CONNECTION_OK || PQstatus(wire) != CONNECTION_OK)
        die("cannot connect (PG* variables)");
    static const char *const shapes[][2] = {
        {"select", "SELECT 1"},
        {"string", "SELECT 'some plain text of a few words, as a query carries', 1"},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const char *sql = shapes[s][1];
        double *f = calloc((size_t)pairs, sizeof(double)), *w = calloc((size_t)pairs, sizeof(double));
        double *d = calloc((size_t)pairs, sizeof(double)), *dc = calloc((size_t)pairs, sizeof(double));
        double *fc = calloc((size_t)pairs, sizeof(double)), *wc = calloc((size_t)pairs, sizeof(double));
        for (int i = 0; i < 200; i++) { /* warm both paths */
            PQclear(PQexec(front, sql));
            own_clear(own_exec(wire, sql));
        }
        for (int i = 0; i < pairs; i++) {
            if (i % 2) {
                w[i] = timed_query(own_exec, own_clear, wire, sql, &wc[i]);
                f[i] = timed_query(PQexec, PQclear, front, sql, &fc[i]);
            } else {
                f[i] = timed_query(PQexec, PQclear, front, sql, &fc[i]);
                w[i] = timed_query(own_exec, own_clear, wire, sql, &wc[i]);
            }
            d[i] = w[i] - f[i];
            dc[i] = wc[i] - fc[i];
        }
        printf("pg\tshape=%s\tpairs=%d\tlibpq_front_us=%.2f\twire_front_us=%.2f\t"
               "wire_minus_front_us=%.3f\tlibpq_front_cpu_us=%.2f\twire_front_cpu_us=%.2f\t"
               "wire_minus_front_cpu_us=%.3f\n",
               shapes[s][0], pairs, median(f, (size_t)pairs), median(w, (size_t)pairs),
               median(d, (size_t)pairs), median(fc, (size_t)pairs), median(wc, (size_t)pairs),
               median(dc, (size_t)pairs));
        free(f), free(w), free(d), free(fc), free(wc), free(dc);
    }
    PQfinish(front);
    PQfinish(wire);
}

/* ------------------------------------------------------------------- cpu */

static ssize_t sink_all(void *ctx, const uint8_t *p, size_t n)
{
    (void)ctx, (void)p;
    return (ssize_t)n;
}

static bool check_guard(void *ctx, qg_wire_conn *c, const qg_wire_msg *m, qg_wire_buf *out)
{
    (void)out;
    const qg_settings *s = ctx;
    qg_query q = {.dialect = QG_DIALECT_POSTGRES, .encoding_name = c->session.encoding,
                  .flags = c->session.std_strings ? QG_STD_STRINGS : 0, .api = "wire:Query",
                  .sql = m->sql, .len = m->len};
    qg_decision d;
    return qg_guard_query_with(s, &q, &d);
}

/* The benchmark's stream is always read: nothing is left unread. */
static bool unread_refused(void *ctx, qg_wire_conn *c)
{
    (void)ctx, (void)c;
    return false;
}

static void put_msg(qg_wire_buf *b, char type, const void *body, uint32_t len)
{
    uint8_t h[5] = {(uint8_t)type, (uint8_t)((len + 4) >> 24), (uint8_t)((len + 4) >> 16),
                    (uint8_t)((len + 4) >> 8), (uint8_t)(len + 4)};
    qg_wire_buf_append(b, h, 5);
    qg_wire_buf_append(b, body, len);
}

#define CPU_QUERIES 20000

static void bench_cpu(int rounds)
{
    static qg_settings settings;
    qg_settings_defaults(&settings);
    settings.verbosity = 0;
    static const char sql[] = "SELECT 1";
    qg_wire_buf query = {0}, answer = {0};
    put_msg(&query, 'Q', sql, sizeof sql);
    static const uint8_t row_description[] = {0, 1, '?', 'c', 'o', 'l', 'u', 'm', 'n', '?', 0,
                                              0, 0, 0, 0, 0, 0, 0, 0, 0, 23, 0, 4, 255, 255,
                                              255, 255, 0, 0};
    static const uint8_t data_row[] = {0, 1, 0, 0, 0, 1, '1'};
    put_msg(&answer, 'T', row_description, sizeof row_description);
    put_msg(&answer, 'D', data_row, sizeof data_row);
    put_msg(&answer, 'C', "SELECT 1", 9);
    put_msg(&answer, 'Z', "I", 1);
    qg_wire_conn c;
    qg_wire_conn_init(&c, QG_WIRE_PG);
    c.out.untyped = false;
    snprintf(c.session.encoding, sizeof c.session.encoding, "UTF8");
    c.session.std_strings = true;
    qg_wire_io io = {sink_all, check_guard, unread_refused, &settings};
    qg_query q = {.dialect = QG_DIALECT_POSTGRES, .encoding_name = "UTF8",
                  .flags = QG_STD_STRINGS, .api = "PQexec", .sql = sql, .len = sizeof sql - 1};
    double *wire = calloc((size_t)rounds, sizeof(double));
    double *check = calloc((size_t)rounds, sizeof(double));
    for (int r = 0; r < rounds; r++) {
        uint64_t t0 = now_ns();
        for (int i = 0; i < CPU_QUERIES; i++) {
            qg_wire_write(&c, &io, query.data, query.len);
            qg_wire_read(&c, answer.data, answer.len);
        }
        uint64_t t1 = now_ns();
        for (int i = 0; i < CPU_QUERIES; i++) {
            qg_decision d;
            qg_guard_query_with(&settings, &q, &d);
        }
        uint64_t t2 = now_ns();
        wire[r] = (double)(t1 - t0) / CPU_QUERIES;
        check[r] = (double)(t2 - t1) / CPU_QUERIES;
    }
    printf("cpu\trounds=%d\tqueries_per_round=%d\twire_front_ns=%.1f\tcheck_alone_ns=%.1f\n",
           rounds, CPU_QUERIES, median(wire, (size_t)rounds), median(check, (size_t)rounds));
    qg_wire_conn_release(&c);
    qg_wire_buf_free(&query);
    qg_wire_buf_free(&answer);
}

int main(int argc, char **argv)
{
    if (argc != 3)
        die("usage: bench_wire fd ROUNDS | pg PAIRS | cpu ROUNDS");
    int n = atoi(argv[2]);
    if (n < 1)
        die("ROUNDS/PAIRS must be positive");
    if (strcmp(argv[1], "fd") == 0)
        bench_fds(n);
    else if (strcmp(argv[1], "pg") == 0)
        bench_pg(n);
    else if (strcmp(argv[1], "cpu") == 0)
        bench_cpu(n);
    else
        die("unknown benchmark");
    return 0;
}
