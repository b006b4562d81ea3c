/* A libmariadb connection whose socket is duplicated, and a COM_QUERY
 * written raw through the duplicate: the bytes libmariadb's front never
 * sees.
 *
 * my_dup SOCKET HOW SQL
 *   HOW: dup | dup2 | dup3 | F_DUPFD | F_DUPFD_CLOEXEC | SCM_RIGHTS, or fdopen |
 *   splice: the socket itself through stdio or a pipe (raw_dup.h)
 * Connects as root to database qg with character set gbk, writes
 * COM_QUERY(SQL) through the duplicate and reads the answer there (ROW: the
 * first column of each row, ERROR: message), then runs SELECT 'alive'
 * through libmariadb (ROW: alive).  WRITE-FAILED: strerror when the write
 * fails.
 */
#include <mysql.h>
#include <stdlib.h>

#include "raw_dup.h"

/* One packet's payload into buf (NUL-terminated); its length, or -1. */
static long packet(int fd, unsigned char *buf, size_t cap)
{
    unsigned char head[4];
    if (!read_exact(fd, head, 4))
        return -1;
    size_t len = head[0] | (size_t)head[1] << 8 | (size_t)head[2] << 16;
    if (len + 1 > cap || !read_exact(fd, buf, len))
        return -1;
    buf[len] = 0;
    return (long)len;
}

/* A text result set of one column, or an OK or an error. */
static void answers(int fd)
{
    static unsigned char buf[1 << 16];
    long len = packet(fd, buf, sizeof buf);
    if (len <= 0)
        return;
    if (buf[0] == 0xff) {
        printf("ERROR: %s\n", (const char *)buf + 9);
        return;
    }
    if (buf[0] == 0x00)
        return;
    packet(fd, buf, sizeof buf); /* the column definition */
    packet(fd, buf, sizeof buf); /* EOF */
    while ((len = packet(fd, buf, sizeof buf)) > 0 && !(buf[0] == 0xfe && len < 9)) {
        if (buf[0] == 0xff) {
            printf("ERROR: %s\n", (const char *)buf + 9);
            return;
        }
        if (buf[0] < 0xfb)
            printf("ROW: %.*s\n", (int)buf[0], (const char *)buf + 1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    MYSQL *db = mysql_init(NULL);
    mysql_options(db, MYSQL_SET_CHARSET_NAME, "gbk");
    if (!mysql_real_connect(db, NULL, "root", NULL, "qg", 0, argv[1], 0))
        return 2;
    int copy = duplicate(mysql_get_socket(db), argv[2]);
    if (copy < 0)
        return 2;
    size_t sql_len = strlen(argv[3]);
    unsigned char *msg = malloc(sql_len + 5);
    if (!msg)
        return 2;
    size_t len = sql_len + 1;
    msg[0] = (unsigned char)len, msg[1] = (unsigned char)(len >> 8);
    msg[2] = (unsigned char)(len >> 16), msg[3] = 0, msg[4] = 0x03;
    memcpy(msg + 5, argv[3], sql_len);
    if (raw_write(copy, argv[2], msg, sql_len + 5))
        answers(copy);
    free(msg);
    release(copy, argv[2]);
    if (mysql_query(db, "SELECT 'alive'") == 0) {
        MYSQL_RES *res = mysql_store_result(db);
        MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
        if (row)
            printf("ROW: %s\n", row[0]);
        mysql_free_result(res);
    }
    mysql_close(db);
    return 0;
}
