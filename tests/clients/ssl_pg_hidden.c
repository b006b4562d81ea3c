/* A PostgreSQL client on the system OpenSSL whose TLS the shim cannot tie to
 * its socket: "bio" gives the SSL object a BIO of its own that writes the
 * socket but does not say which (SSL_get_fd answers -1); "handle" uses
 * SSL_set_fd but writes its query through the SSL_write it looks up in
 * libssl's own handle, past the preloaded one.  Runs one query and prints
 * its row.
 *   ssl_pg_hidden PORT USER DATABASE bio|handle */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <openssl/ssl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int fd;

static void die(const char *what)
{
    fprintf(stderr, "ssl_pg_hidden: %s\n", what);
    exit(1);
}

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

static int bio_write(BIO *b, const char *p, int n)
{
    (void)b;
    return (int)send(fd, p, (size_t)n, 0);
}

static int bio_read(BIO *b, char *p, int n)
{
    (void)b;
    return (int)recv(fd, p, (size_t)n, 0);
}

static long bio_ctrl(BIO *b, int cmd, long l, void *p)
{
    (void)b, (void)l, (void)p;
    return cmd == BIO_CTRL_FLUSH;
}

/* Reads until a message of type `type` has come (a crude scan, enough for
 * these short answers); returns whether `want` was in what came. */
static int read_until(SSL *ssl, char type, const char *want)
{
    static char buf[1 << 16];
    int found = 0;
    for (;;) {
        int n = SSL_read(ssl, buf, sizeof buf);
        if (n <= 0)
            die("SSL_read failed");
        if (want && memmem(buf, (size_t)n, want, strlen(want)))
            found = 1;
        for (int i = 0; i + 5 <= n; i++)
            if (buf[i] == type && buf[i + 1] == 0 && buf[i + 2] == 0 && buf[i + 3] == 0 &&
                buf[i + 4] == 5)
                return found;
    }
}

int main(int argc, char **argv)
{
    if (argc != 5)
        die("usage: ssl_pg_hidden PORT USER DATABASE bio|handle");
    int own_bio = strcmp(argv[4], "bio") == 0;
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
    SSL *ssl = ctx ? SSL_new(ctx) : NULL;
    if (!ssl)
        die("no SSL object");
    if (own_bio) {
        BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "own socket");
        BIO *bio = m ? BIO_new(m) : NULL;
        if (!bio || !BIO_meth_set_write(m, bio_write) || !BIO_meth_set_read(m, bio_read) ||
            !BIO_meth_set_ctrl(m, bio_ctrl))
            die("no BIO");
        BIO_set_init(bio, 1);
        SSL_set_bio(ssl, bio, bio);
    } else if (SSL_set_fd(ssl, fd) != 1) {
        die("SSL_set_fd failed");
    }
    if (SSL_connect(ssl) != 1)
        die("TLS handshake failed");
    printf("SSL_get_fd: %s\n", SSL_get_fd(ssl) == fd ? "the socket" : "none");

    unsigned char msg[256];
    size_t len = 8;
    len += (size_t)snprintf((char *)msg + 8, sizeof msg - 8, "user%c%s%cdatabase%c%s%c", 0,
                            argv[2], 0, 0, argv[3], 0) + 1;
    msg[len - 1] = 0;
    put_be32(msg, (uint32_t)len);
    put_be32(msg + 4, 196608);
    if (SSL_write(ssl, msg, (int)len) != (int)len)
        die("SSL_write failed");
    read_until(ssl, 'Z', NULL);

    static const char sql[] = "SELECT 'hidden_' || 42";
    msg[0] = 'Q';
    put_be32(msg + 1, (uint32_t)(4 + sizeof sql));
    memcpy(msg + 5, sql, sizeof sql);
    typedef int (*write_fn)(SSL *, const void *, int);
    write_fn write_query = SSL_write;
    if (!own_bio) {
        void *libssl = dlopen("libssl.so.3", RTLD_NOW | RTLD_NOLOAD);
        write_query = libssl ? (write_fn)dlsym(libssl, "SSL_write") : NULL;
        if (!write_query)
            die("no SSL_write in libssl's handle");
    }
    if (write_query(ssl, msg, (int)(5 + sizeof sql)) != (int)(5 + sizeof sql))
        die("SSL_write failed");
    printf("ROW: %s\n", read_until(ssl, 'Z', "hidden_42") ? "hidden_42" : "none");
    SSL_shutdown(ssl);
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    close(fd);
    return 0;
}
