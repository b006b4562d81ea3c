/* The statements sent in place of a blocked one (replacement.h). */
#include "replacement.h"

#include <stdio.h>
#include <string.h>

/* MySQL's MESSAGE_TEXT holds 128 characters. */
enum { MYSQL_MESSAGE_MAX = 128 };

size_t qg_replacement_message(char *out, size_t cap, const char *message, size_t max)
{
    size_t len = strlen(message);
    const char *cut = strstr(message, "): ");
    if (len > max && cut && (size_t)(cut - message) < max)
        max = (size_t)(cut - message) + 1;
    size_t o = 0;
    for (size_t i = 0; message[i] && o + 1 < cap && o < max; i++) {
        unsigned char ch = (unsigned char)message[i];
        char safe_ch = (char)ch;
        if (ch == '\'' || ch == '\\' || ch == '`')
            safe_ch = '"';
        else if (ch == '$' || ch < 0x20 || ch > 0x7e)
            safe_ch = '?';
        out[o++] = safe_ch;
    }
    if (cap)
        out[o] = '\0';
    return o;
}

static size_t written(int n, size_t cap)
{
    return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

size_t qg_replacement_pg_raise(char *out, size_t cap, const char *message, const char *sqlstate)
{
    static const char sqlstate_chars[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    const char *code = "42501";
    if (sqlstate && strlen(sqlstate) == 5 && strspn(sqlstate, sqlstate_chars) == 5)
        code = sqlstate;
    char safe[QG_REPLACEMENT_MESSAGE_MAX + 1];
    qg_replacement_message(safe, sizeof safe, message, QG_REPLACEMENT_MESSAGE_MAX);
    return written(snprintf(out, cap,
                            "DO $quoteguard$BEGIN RAISE EXCEPTION USING MESSAGE = '%s', "
                            "ERRCODE = '%s'; END$quoteguard$",
                            safe, code),
                   cap);
}

size_t qg_replacement_mysql_signal(char *out, size_t cap, const char *message)
{
    char safe[MYSQL_MESSAGE_MAX + 1];
    qg_replacement_message(safe, sizeof safe, message, MYSQL_MESSAGE_MAX);
    return written(snprintf(out, cap,
                            "SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 1105, MESSAGE_TEXT = '%s'",
                            safe),
                   cap);
}
