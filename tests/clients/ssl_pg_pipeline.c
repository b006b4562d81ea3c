/* A non-blocking PostgreSQL client on the system OpenSSL (SSL_set_fd), with
 * SSL_MODE_ENABLE_PARTIAL_WRITE on or off: it writes a pipeline of large
 * simple queries with an attack in the middle in as few SSL_write calls as
 * OpenSSL allows, reads the answers only when a write cannot go on
 * (SSL_ERROR_WANT_WRITE / WANT_READ), and retries with the same arguments,
 * as OpenSSL requires; with partial writes, a short count moves on past
 * what was taken.  Prints how many writes had to wait and how many were
 * short, the errors, the secret rows, and a digest of every other row.
 *   ssl_pg_pipeline PORT USER DATABASE MARKER QUERIES partial|whole
 * The SJIS / standard_conforming_strings off session makes the attack
 * (0x95 0x5c then a quote) inject when it reaches the server. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static SSL *ssl;
static int fd;
static unsigned char *in;
static size_t in_len, in_cap;
static unsigned ready;
static int alive;
static uint64_t digest = 1469598103934665603u; /* FNV-1a */

static void die(const char *what)
{
    fprintf(stderr, "ssl_pg_pipeline: %s\n", what);
    ERR_print_errors_fp(stderr);
    exit(1);
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

/* Takes the whole messages received: counts ReadyForQuery, prints errors
 * and secret rows, digests the other rows. */
static void take_messages(void)
{
    size_t off = 0;
    while (in_len - off >= 5) {
        uint32_t len = be32(in + off + 1);
        if (in_len - off < 1 + (size_t)len)
            break;
        const unsigned char *body = in + off + 5;
        size_t body_len = len - 4;
        if (in[off] == 'Z') {
            ready++;
        } else if (in[off] == 'E') {
            for (size_t i = 0; i < body_len && body[i];) { /* fields: type, text, NUL */
                size_t n = strnlen((const char *)body + i + 1, body_len - i - 1);
                if (body[i] == 'M')
                    printf("ERROR: %.*s\n", (int)n, body + i + 1);
                i += n + 2;
            }
        } else if (in[off] == 'D') {
            const unsigned char *secret = memmem(body, body_len, "secret_", 7);
            if (secret) /* the one column runs to the end of the row */
                printf("ROW: %.*s\n", (int)(body + body_len - secret), secret);
            else if (memmem(body, body_len, "alive", 5))
                alive = 1;
            else
                for (size_t i = 0; i < body_len; i++)
                    digest = (digest ^ body[i]) * 1099511628211u;
        }
        off += 1 + len;
    }
    memmove(in, in + off, in_len - off);
    in_len -= off;
}

/* Reads what is there (all of it, without waiting). */
static void read_some(void)
{
    for (;;) {
        if (in_cap - in_len < 65536) {
            in_cap = in_cap * 2 + 65536;
            in = realloc(in, in_cap);
            if (!in)
                die("out of memory");
        }
        int r = SSL_read(ssl, in + in_len, 65536);
        if (r > 0) {
            in_len += (size_t)r;
            continue;
        }
        int e = SSL_get_error(ssl, r);
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
            die("SSL_read failed");
        break;
    }
    take_messages();
}

static void wait_for(short events)
{
    struct pollfd p = {.fd = fd, .events = events};
    poll(&p, 1, 1000);
}

/* Writes all of p[0, n): retries with the same arguments after WANT_*; with
 * partial writes a short count moves on.  Counts waits and short writes. */
static void write_all(const unsigned char *p, size_t n, unsigned *waits, unsigned *shorts)
{
    size_t off = 0;
    while (off < n) {
        int want = n - off > 1 << 30 ? 1 << 30 : (int)(n - off);
        int r = SSL_write(ssl, p + off, want);
        if (r > 0) {
            if (r < want)
                (*shorts)++;
            off += (size_t)r;
            continue;
        }
        int e = SSL_get_error(ssl, r);
        if (e != SSL_ERROR_WANT_WRITE && e != SSL_ERROR_WANT_READ)
            die("SSL_write failed");
        (*waits)++;
        read_some();
        wait_for(POLLIN | POLLOUT);
    }
}

static void until_ready(unsigned count)
{
    while (ready < count) {
        read_some();
        if (ready < count)
            wait_for(POLLIN);
    }
}

static size_t query(unsigned char *out, const char *sql, size_t len)
{
    out[0] = 'Q';
    put_be32(out + 1, (uint32_t)(4 + len + 1));
    memcpy(out + 5, sql, len);
    out[5 + len] = 0;
    return 6 + len;
}

int main(int argc, char **argv)
{
    if (argc != 7)
        die("usage: ssl_pg_pipeline PORT USER DATABASE MARKER QUERIES partial|whole");
    const char *user = argv[2], *database = argv[3], *marker = argv[4];
    unsigned queries = (unsigned)atoi(argv[5]);
    int partial = strcmp(argv[6], "partial") == 0;

    fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1]))};
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0)
        die("cannot connect");
    unsigned char request[8];
    put_be32(request, 8);
    put_be32(request + 4, 80877103);
    char answer;
    if (write(fd, request, 8) != 8 || read(fd, &answer, 1) != 1 || answer != 'S')
        die("the server refused TLS");

    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    ssl = ctx ? SSL_new(ctx) : NULL;
    if (!ssl || SSL_set_fd(ssl, fd) != 1 || SSL_connect(ssl) != 1)
        die("TLS handshake failed");
    SSL_set_mode(ssl, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                          (partial ? SSL_MODE_ENABLE_PARTIAL_WRITE : 0));
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0)
        die("cannot make the socket non-blocking");

    unsigned waits = 0, shorts = 0;
    unsigned char startup[256];
    size_t len = 8;
    len += (size_t)snprintf((char *)startup + 8, sizeof startup - 8, "user%c%s%cdatabase%c%s%c",
                            0, user, 0, 0, database, 0) + 1;
    startup[len - 1] = 0;
    put_be32(startup, (uint32_t)len);
    put_be32(startup + 4, 196608);
    write_all(startup, len, &waits, &shorts);
    until_ready(1);
    static const char session[] = "SET standard_conforming_strings = off; "
                                  "SET client_encoding = 'SJIS'";
    unsigned char one[256];
    write_all(one, query(one, session, sizeof session - 1), &waits, &shorts);
    until_ready(2);
    ready = 0;
    waits = shorts = 0;

    /* the pipeline: QUERIES queries of 20 KB each way, the attack halfway */
    size_t cap = (size_t)queries * 20100 + 1024, n = 0;
    unsigned char *stream = malloc(cap);
    char *sql = malloc(20100);
    if (!stream || !sql)
        die("out of memory");
    for (unsigned i = 0; i < queries; i++) {
        int k;
        if (i == queries / 2)
            k = snprintf(sql, 20100,
                         "SELECT /*%s*/ secret FROM users WHERE name = '\x95\\' OR 1=1 --'", marker);
        else
            k = snprintf(sql, 20100, "SELECT /*%0*d*/ %u, repeat('y', 20000)", 20000, 0, i);
        n += query(stream + n, sql, (size_t)k);
    }
    write_all(stream, n, &waits, &shorts);
    until_ready(queries);
    printf("WAITED: %s\n", waits > 0 ? "yes" : "no");
    printf("SHORT WRITES: %s\n", shorts > 0 ? "yes" : "no");
    printf("READY: %u\n", ready);
    printf("DIGEST: %016llx\n", (unsigned long long)digest);
    ready = 0;
    static const char alive_sql[] = "SELECT 'alive'";
    write_all(one, query(one, alive_sql, sizeof alive_sql - 1), &waits, &shorts);
    until_ready(1);
    printf("ALIVE: %s\n", alive ? "yes" : "no");
    free(stream);
    free(sql);
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    close(fd);
    return 0;
}
