/* A stand-in for libmariadb (soname libmariadb.so.3) with only
 * mysql_real_query, which counts what was sent and never talks to a server,
 * mysql_character_set_name, which reports $STUB_MY_CHARSET (NULL when
 * unset), and mysql_errno / mysql_error.  Everything the shim uses to ask
 * the server (mysql_store_result …) is missing on purpose: the shim must
 * then neither crash nor send.  stub_my_sent() tells how many queries
 * reached it. */
#include <stdlib.h>

#define EXPORT __attribute__((visibility("default")))

static int sent;

EXPORT int mysql_real_query(void *mysql, const char *query, unsigned long length)
{
    (void)mysql;
    (void)query;
    (void)length;
    sent++;
    return 0;
}

EXPORT const char *mysql_character_set_name(void *mysql)
{
    (void)mysql;
    return getenv("STUB_MY_CHARSET");
}

EXPORT unsigned int mysql_errno(void *mysql)
{
    (void)mysql;
    return 0;
}

EXPORT const char *mysql_error(void *mysql)
{
    (void)mysql;
    return "";
}

EXPORT int stub_my_sent(void)
{
    return sent;
}
