/* The wire front's other ways to a socket (front_wire.c): calls whose bytes
 * the C library or the kernel move without passing them through the calls
 * front_wire_io.c follows.
 *
 * stdio: glibc's streams reach the kernel through internal calls no
 * preloaded library sees.  A stream opened with fdopen on a socket the
 * wire front has an entry for, or on a socket made in another process, is
 * made with fopencookie instead, and its reads and writes go through the
 * followed read and write; dprintf formats first and writes the same way.
 * The stream is fully buffered as glibc's own for a socket, cannot seek
 * (ESPIPE, as a socket), and fileno() gives the descriptor; it is
 * byte-oriented (the wide-character functions fail on it, as on every
 * fopencookie stream).  A client library front's socket gets no stream:
 * bytes written through it would reach the server past the library
 * (refused).
 *
 * splice and sendfile move bytes between a socket and a pipe or a file
 * inside the kernel, where the shim cannot read them: refused on a database
 * connection's socket (qg_wire_refuse_unread_call).  vmsplice and tee reach
 * only pipes, and copy_file_range only regular files (the kernel refuses a
 * socket), so none of them is interposed.
 *
 * Every other descriptor costs one load from the table per call. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include "front_wire_fd.h"
#include "real.h"

QG_WIRE_NEXT(splice)
QG_WIRE_NEXT(sendfile)
QG_WIRE_NEXT(fdopen)
QG_WIRE_NEXT(vdprintf)

/* glibc's fortified forms (declared only under _FORTIFY_SOURCE). */
extern int __vasprintf_chk(char **out, int flag, const char *fmt, va_list ap);
extern int __vdprintf_chk(int fd, int flag, const char *fmt, va_list ap);
QG_WIRE_NEXT(__vdprintf_chk)

/* ------------------------------------------------------------- writing */

/* Writes all of p[0, n) through the followed write, as glibc's stdio does
 * through its own: the count written before a failure.  `caller` is the
 * program's call the bytes come from, NULL where it is not known. */
static size_t write_all(int fd, const char *p, size_t n, const void *caller)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = qg_wire_write_from(fd, p + done, n - done, caller);
        if (r <= 0)
            break;
        done += (size_t)r;
    }
    return done;
}

/* ---------------------------------------------------------------- stdio */

/* A stream's cookie: its descriptor, allocated with the stream, freed when
 * it closes. */
static int cookie_fd(void *cookie)
{
    return *(int *)cookie;
}

static ssize_t stream_read(void *cookie, char *buf, size_t n)
{
    return read(cookie_fd(cookie), buf, n);
}

static ssize_t stream_write(void *cookie, const char *buf, size_t n)
{
    /* the program's fwrite or fflush is not known here */
    return (ssize_t)write_all(cookie_fd(cookie), buf, n, NULL);
}

/* A socket cannot seek; glibc's stdio ignores ESPIPE where a socket's own
 * stream would meet it (fflush of a read stream). */
static int stream_seek(void *cookie, off64_t *offset, int whence)
{
    (void)cookie, (void)offset, (void)whence;
    errno = ESPIPE;
    return -1;
}

static int stream_close(void *cookie)
{
    int fd = cookie_fd(cookie);
    free(cookie);
    return close(fd);
}

/* fdopen's stream on fd, read and written through the followed calls; the
 * mode is read and the descriptor checked as glibc's fdopen does. */
static FILE *followed_stream(int fd, const char *mode)
{
    char cookie_mode[3] = {mode[0], '\0', '\0'};
    if (mode[0] != 'r' && mode[0] != 'w' && mode[0] != 'a') {
        errno = EINVAL;
        return NULL;
    }
    for (int i = 1; i < 5 && mode[i] != '\0'; i++)
        if (mode[i] == '+') {
            cookie_mode[1] = '+';
            break;
        }
    bool reads = mode[0] == 'r' || cookie_mode[1] == '+';
    bool writes = mode[0] != 'r' || cookie_mode[1] == '+';
    int flags = fcntl(fd, F_GETFL);
    if (flags == -1)
        return NULL;
    if (((flags & O_ACCMODE) == O_RDONLY && writes) || ((flags & O_ACCMODE) == O_WRONLY && reads)) {
        errno = EINVAL;
        return NULL;
    }
    if (mode[0] == 'a' && !(flags & O_APPEND) && fcntl(fd, F_SETFL, flags | O_APPEND) == -1)
        return NULL;
    int *cookie = malloc(sizeof *cookie);
    if (!cookie)
        return NULL;
    *cookie = fd;
    cookie_io_functions_t io = {stream_read, stream_write, stream_seek, stream_close};
    FILE *f = fopencookie(cookie, cookie_mode, io);
    if (!f) {
        free(cookie);
        return NULL;
    }
    /* glibc marks a cookie stream with descriptor -2, which fileno()
     * refuses; its cookie calls never read the field, and a stream with
     * one is open to fclose just as with -2. */
    f->_fileno = fd;
    return f;
}

QG_EXPORT FILE *fdopen(int fd, const char *mode)
{
    wire_fd *w = qg_wire_fd_entry(fd);
    if (__builtin_expect(!w, 1) && (!mode || !qg_wire_foreign_socket(fd)))
        return next_fdopen()(fd, mode);
    if (!mode)
        return next_fdopen()(fd, mode);
    if (w == QG_WIRE_LIBRARY) {
        static bool told;
        if (qg_wire_refuse(&told, "wire_write_refused",
                           "stdio (fdopen) on the socket of a connection that a client "
                           "library's front checks")) {
            errno = EACCES;
            return NULL;
        }
        return next_fdopen()(fd, mode);
    }
    return followed_stream(fd, mode);
}

QG_EXPORT FILE *_IO_fdopen(int fd, const char *mode)
{
    return fdopen(fd, mode);
}

/* dprintf on a socket with an entry or made in another process: formatted
 * (n bytes of text, n < 0 when that failed), then written through the
 * followed write; -1 unless all of it was written, as glibc's. */
static int formatted_write(int fd, char *text, int n, const void *caller)
{
    if (n < 0)
        return -1;
    int r = write_all(fd, text, (size_t)n, caller) == (size_t)n ? n : -1;
    free(text);
    return r;
}

/* vdprintf, or when `fortified` __vdprintf_chk with its flag, called from
 * `caller`. */
static int vdprintf_from(int fd, bool fortified, int flag, const char *fmt, va_list ap,
                         const void *caller)
{
    if (__builtin_expect(!qg_wire_fd_entry(fd), 1) && !qg_wire_foreign_socket(fd))
        return fortified ? next___vdprintf_chk()(fd, flag, fmt, ap) : next_vdprintf()(fd, fmt, ap);
    char *text;
    int n = fortified ? __vasprintf_chk(&text, flag, fmt, ap) : vasprintf(&text, fmt, ap);
    return formatted_write(fd, text, n, caller);
}

QG_EXPORT int vdprintf(int fd, const char *fmt, va_list ap)
{
    return vdprintf_from(fd, false, 0, fmt, ap, __builtin_return_address(0));
}

QG_EXPORT int dprintf(int fd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = vdprintf_from(fd, false, 0, fmt, ap, __builtin_return_address(0));
    va_end(ap);
    return r;
}

QG_EXPORT int __vdprintf_chk(int fd, int flag, const char *fmt, va_list ap)
{
    return vdprintf_from(fd, true, flag, fmt, ap, __builtin_return_address(0));
}

QG_EXPORT int __dprintf_chk(int fd, int flag, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = vdprintf_from(fd, true, flag, fmt, ap, __builtin_return_address(0));
    va_end(ap);
    return r;
}

/* --------------------------------------------------- splice and sendfile */

/* A move from `from` into `to` that must fail (EACCES). */
static bool refused_move(int from, int to, const char *call)
{
    return (qg_wire_fd_entry(from) && qg_wire_refuse_unread_call(from, false, call)) ||
           (qg_wire_fd_entry(to) && qg_wire_refuse_unread_call(to, true, call));
}

QG_EXPORT ssize_t splice(int fd_in, loff_t *off_in, int fd_out, loff_t *off_out, size_t len,
                         unsigned int flags)
{
    if (__builtin_expect(!qg_wire_fd_entry(fd_in) && !qg_wire_fd_entry(fd_out), 1) ||
        !refused_move(fd_in, fd_out, "splice"))
        return next_splice()(fd_in, off_in, fd_out, off_out, len, flags);
    errno = EACCES;
    return -1;
}

QG_EXPORT ssize_t sendfile(int out_fd, int in_fd, off_t *offset, size_t count)
{
    if (__builtin_expect(!qg_wire_fd_entry(in_fd) && !qg_wire_fd_entry(out_fd), 1) ||
        !refused_move(in_fd, out_fd, "sendfile"))
        return next_sendfile()(out_fd, in_fd, offset, count);
    errno = EACCES;
    return -1;
}

QG_EXPORT ssize_t sendfile64(int out_fd, int in_fd, off64_t *offset, size_t count)
{
    return sendfile(out_fd, in_fd, (off_t *)offset, count);
}
