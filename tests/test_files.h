/* Reading what the code under test wrote, for the C unit tests. */
#ifndef QG_TEST_FILES_H
#define QG_TEST_FILES_H

#include <fcntl.h>
#include <stddef.h>
#include <unistd.h>

/* The whole file, NUL-terminated, in a static buffer (one per test file,
 * overwritten by the next call); "" when it cannot be read.  *len gets its
 * size when len is not NULL. */
static const char *read_whole_file(const char *path, size_t *len) __attribute__((unused));
static const char *read_whole_file(const char *path, size_t *len)
{
    static char buf[4 * 1024 * 1024];
    size_t used = 0;
    int fd = open(path, O_RDONLY);
    if (fd >= 0) {
        ssize_t n;
        while ((n = read(fd, buf + used, sizeof buf - 1 - used)) > 0)
            used += (size_t)n;
        close(fd);
    }
    buf[used] = '\0';
    if (len)
        *len = used;
    return buf;
}

#endif
