/* The lists and the name test behind client_libraries.h. */
#include "client_libraries.h"

#include <string.h>

#include "ascii.h"

#define QG_SONAME_IF_PG_PG(soname) soname,
#define QG_SONAME_IF_PG_MYSQL(soname)
#define QG_SONAME_IF_MYSQL_PG(soname)
#define QG_SONAME_IF_MYSQL_MYSQL(soname) soname,
#define QG_LIBPQ_ROW(api, soname) QG_SONAME_IF_PG_##api(soname)
#define QG_MYSQL_ROW(api, soname) QG_SONAME_IF_MYSQL_##api(soname)
#define QG_ANY_ROW(api, soname) soname,

const char *const qg_libpq_sonames[] = {QG_CLIENT_LIBRARIES(QG_LIBPQ_ROW) NULL};
const char *const qg_mysql_sonames[] = {QG_CLIENT_LIBRARIES(QG_MYSQL_ROW) NULL};
const char *const qg_client_sonames[] = {QG_CLIENT_LIBRARIES(QG_ANY_ROW) NULL};

/* Bytes of `name` before its ".so", or len when it has none. */
static size_t stem_length(const char *name, size_t len)
{
    for (size_t i = 0; i + 3 <= len; i++)
        if (memcmp(name + i, ".so", 3) == 0 && (i + 3 == len || name[i + 3] == '.'))
            return i;
    return len;
}

bool qg_is_client_library(const char *name, size_t len)
{
    /* A path names the library by its last component. */
    for (size_t i = len; i-- > 0;)
        if (name[i] == '/') {
            name += i + 1;
            len -= i + 1;
            break;
        }
    size_t stem = stem_length(name, len);
    if (stem == len)
        return false;
    for (const char *const *row = qg_client_sonames; *row; row++) {
        /* The row's stem must be the part both share: most names part
         * from every row within a few bytes ("libc" against "libp" and
         * "libm"), before the row's ".so" is looked for.  Every process
         * the shim is preloaded into asks this for each object it links. */
        size_t want = 0;
        while (want < stem && name[want] == (*row)[want])
            want++;
        if ((*row)[want] != '.' || stem_length(*row, strlen(*row)) != want)
            continue;
        if (stem == want)
            return true;
        /* auditwheel's tag: "-" and hex digits. */
        size_t i = want + 1;
        if (name[want] != '-' || i == stem)
            continue;
        while (i < stem && qg_hex_digit((unsigned char)name[i]) >= 0)
            i++;
        if (i == stem)
            return true;
    }
    return false;
}
