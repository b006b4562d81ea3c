/* The client libraries the shim interposes, by the sonames programs link:
 * the one list the fronts, the attach line, the dlopen front and the wrapper
 * (scripts/quoteguard, through `make`) read.  One row a line,
 * QG_CLIENT_LIBRARY(api, "soname"), api PG (libpq) or MYSQL (the MySQL C
 * API: MariaDB Connector/C, Oracle's libmysqlclient, Percona's build). */
#ifndef QG_CLIENT_LIBRARIES_H
#define QG_CLIENT_LIBRARIES_H

#include <stdbool.h>
#include <stddef.h>

#define QG_CLIENT_LIBRARIES(QG_CLIENT_LIBRARY)                                    \
    QG_CLIENT_LIBRARY(PG, "libpq.so.5")                                           \
    QG_CLIENT_LIBRARY(MYSQL, "libmariadb.so.3")                                   \
    QG_CLIENT_LIBRARY(MYSQL, "libmariadbclient.so.18")                            \
    QG_CLIENT_LIBRARY(MYSQL, "libmysqlclient.so.24")                              \
    QG_CLIENT_LIBRARY(MYSQL, "libmysqlclient.so.23")                              \
    QG_CLIENT_LIBRARY(MYSQL, "libmysqlclient.so.22")                              \
    QG_CLIENT_LIBRARY(MYSQL, "libmysqlclient.so.21")                              \
    QG_CLIENT_LIBRARY(MYSQL, "libmysqlclient.so.20")                              \
    QG_CLIENT_LIBRARY(MYSQL, "libmysqlclient.so.18")                              \
    QG_CLIENT_LIBRARY(MYSQL, "libmysqlclient_r.so.18")                            \
    QG_CLIENT_LIBRARY(MYSQL, "libperconaserverclient.so.21")                      \
    QG_CLIENT_LIBRARY(MYSQL, "libperconaserverclient.so.20")                      \
    QG_CLIENT_LIBRARY(MYSQL, "libperconaserverclient.so.18")

/* NULL-terminated soname lists, for qg_real_resolve: libpq, the MySQL C
 * API, and every row. */
extern const char *const qg_libpq_sonames[];
extern const char *const qg_mysql_sonames[];
extern const char *const qg_client_sonames[];

/* True when `name` (len bytes, a DT_NEEDED entry or a file name) is one of
 * the libraries above in any version: a row's name up to ".so", optionally
 * with the "-<hex>" tag auditwheel gives libraries bundled in Python wheels,
 * then ".so". */
bool qg_is_client_library(const char *name, size_t len);

#endif
