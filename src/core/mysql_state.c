/* Reading the session state from what the server reports. */
#include "mysql_state.h"

#include <stdio.h>
#include <string.h>

#include "ascii.h"
#include "quoteguard.h"

bool qg_my_word_is(const char *word, size_t len, const char *want)
{
    /* Most words compared differ in their first letter (a statement's first
     * word against the list of them): that settles it before strlen. */
    if (len == 0 || qg_ascii_lower((unsigned char)word[0]) != qg_ascii_lower((unsigned char)want[0]))
        return len == 0 && want[0] == '\0';
    return strlen(want) == len && qg_ascii_ncasecmp(word, want, len) == 0;
}

void qg_my_state_set_charset(qg_my_state *st, const char *name, size_t len)
{
    if (len >= sizeof st->charset)
        len = sizeof st->charset - 1;
    for (size_t i = 0; i < len; i++)
        st->charset[i] = (char)qg_ascii_lower((unsigned char)name[i]);
    st->charset[len] = '\0';
}

/* sql_mode names that switch ANSI_QUOTES on: the mode itself and the
 * combination modes that include it.  The server reports combinations
 * expanded, but a SET statement may name them. */
static bool mode_has_ansi_quotes(const char *word, size_t len)
{
    static const char *const modes[] = {"ANSI_QUOTES", "ANSI",   "DB2",       "MAXDB",
                                        "MSSQL",       "ORACLE", "POSTGRESQL"};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (qg_my_word_is(word, len, modes[i]))
            return true;
    return false;
}

static bool is_mode_byte(char c)
{
    return qg_ascii_is_alnum((unsigned char)c) || c == '_';
}

bool qg_my_sql_mode_flags(const char *text, size_t len, unsigned *flags)
{
    unsigned found = 0;
    size_t i = 0;
    for (;;) {
        while (i < len && text[i] == ' ')
            i++;
        size_t start = i;
        while (i < len && is_mode_byte(text[i]))
            i++;
        size_t end = i;
        while (i < len && text[i] == ' ')
            i++;
        if (end == start) {
            if (i == len && start == 0)
                break; /* the empty mode */
            return false;
        }
        size_t digits = start;
        while (digits < end && qg_ascii_is_digit((unsigned char)text[digits]))
            digits++;
        if (digits == end)
            return false; /* a number is the modes' bits: the server's to read */
        if (qg_my_word_is(text + start, end - start, "NO_BACKSLASH_ESCAPES"))
            found |= QG_NO_BACKSLASH_ESCAPES;
        else if (mode_has_ansi_quotes(text + start, end - start))
            found |= QG_ANSI_QUOTES;
        if (i == len)
            break;
        if (text[i] != ',')
            return false;
        i++;
    }
    *flags = found;
    return true;
}

bool qg_my_state_apply(qg_my_state *st, const char *name, size_t name_len, const char *value,
                       size_t value_len, bool *tracking_list)
{
    *tracking_list = false;
    if (qg_my_word_is(name, name_len, "character_set_client")) {
        if (value_len == 0 || value_len >= sizeof st->charset)
            return false;
        qg_my_state_set_charset(st, value, value_len);
        return true;
    }
    if (qg_my_word_is(name, name_len, "sql_mode")) {
        unsigned flags;
        if (!qg_my_sql_mode_flags(value, value_len, &flags))
            return false;
        st->flags = flags;
        return true;
    }
    *tracking_list = qg_my_word_is(name, name_len, "session_track_system_variables");
    return true;
}

bool qg_my_tracking_covers(const char *list, size_t len)
{
    bool charset = false, mode = false;
    size_t i = 0;
    while (i < len) {
        while (i < len && (list[i] == ' ' || list[i] == ','))
            i++;
        size_t start = i;
        while (i < len && list[i] != ',' && list[i] != ' ')
            i++;
        const char *word = list + start;
        size_t n = i - start;
        if (qg_my_word_is(word, n, "*"))
            return true;
        charset |= qg_my_word_is(word, n, "character_set_client");
        mode |= qg_my_word_is(word, n, "sql_mode");
    }
    return charset && mode;
}

bool qg_my_state_equal(const qg_my_state *a, const qg_my_state *b)
{
    return a->flags == b->flags && strcmp(a->charset, b->charset) == 0;
}

void qg_my_state_describe(const qg_my_state *st, char *out, size_t cap)
{
    snprintf(out, cap, "charset=%s no_backslash_escapes=%d ansi_quotes=%d", st->charset,
             !!(st->flags & QG_NO_BACKSLASH_ESCAPES), !!(st->flags & QG_ANSI_QUOTES));
}
