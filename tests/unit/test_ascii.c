/* The ASCII helpers, and the shim's name look-ups through them, under a
 * Turkish locale: there the C library folds 'I' to the dotless 'ı' (so
 * tolower('I') stays 'I'), and nothing the shim compares may change.  The
 * locale is built with localedef (package locales) into a temporary
 * directory; without it the test fails. */
#include <ctype.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ascii.h"
#include "client_libraries.h"
#include "config.h"
#include "quoteguard.h"
#include "tap.h"

/* Sets LC_ALL to tr_TR.UTF-8, built into dir when the system lacks it. */
static int turkish_locale(char *dir)
{
    if (setlocale(LC_ALL, "tr_TR.UTF-8"))
        return 1;
    if (!mkdtemp(dir))
        return 0;
    char cmd[256];
    snprintf(cmd, sizeof cmd, "localedef -i tr_TR -f UTF-8 %s/tr_TR.UTF-8 >/dev/null 2>&1", dir);
    if (system(cmd) != 0)
        return 0;
    setenv("LOCPATH", dir, 1);
    return setlocale(LC_ALL, "tr_TR.UTF-8") != NULL;
}

static void helpers(void)
{
    tap_ok(qg_ascii_lower('I') == 'i' && qg_ascii_lower('Z') == 'z' && qg_ascii_lower('a') == 'a',
           "qg_ascii_lower folds A-Z only, I to i");
    int high_kept = 1;
    for (int c = 0x80; c <= 0xff; c++)
        high_kept &= qg_ascii_lower((unsigned char)c) == c && !qg_ascii_is_alnum((unsigned char)c);
    tap_ok(high_kept, "bytes 0x80-0xff are neither folded nor letters");
    tap_ok(qg_ascii_lower('@') == '@' && qg_ascii_lower('[') == '[', "the neighbours of A-Z stay");
    tap_ok(qg_ascii_casecmp("CHARACTER_SET_CLIENT", "character_set_client") == 0,
           "casecmp: CHARACTER_SET_CLIENT equals character_set_client");
    tap_ok(qg_ascii_casecmp("latin1", "LATIN2") < 0 && qg_ascii_casecmp("b", "A") > 0,
           "casecmp orders like strcasecmp in the C locale");
    tap_ok(qg_ascii_casecmp("gbk", "gbk_bin") < 0 && qg_ascii_casecmp("GBK_BIN", "gbk") > 0,
           "casecmp: a prefix sorts first");
    tap_ok(qg_ascii_casecmp("\xc4", "\xe4") != 0, "casecmp: Latin-1 \xc3\x84/\xc3\xa4 are not folded");
    tap_ok(qg_ascii_ncasecmp("SESSION.x", "session.y", 8) == 0 &&
               qg_ascii_ncasecmp("SESSION.x", "session.y", 9) != 0,
           "ncasecmp compares n bytes");
    tap_ok(qg_ascii_ncasecmp("ab", "AB", 10) == 0, "ncasecmp stops at the end of equal strings");
    tap_ok(qg_ascii_is_alpha('i') && qg_ascii_is_alpha('I') && !qg_ascii_is_alpha('1') &&
               qg_ascii_is_alnum('9') && !qg_ascii_is_alnum('_'),
           "is_alpha / is_alnum");
}

static void lookups(void)
{
    const qg_encoding *latin1 = qg_encoding_find(QG_DIALECT_MYSQL, "latin1");
    tap_ok(latin1 && qg_encoding_find(QG_DIALECT_MYSQL, "LATIN1") == latin1,
           "MySQL charset LATIN1 is latin1");
    const qg_encoding *sjis = qg_encoding_find(QG_DIALECT_POSTGRES, "SJIS");
    tap_ok(sjis && qg_encoding_find(QG_DIALECT_POSTGRES, "Shift_JIS") == sjis &&
               qg_encoding_find(QG_DIALECT_POSTGRES, "WIN932") == sjis,
           "PG encodings Shift_JIS and WIN932 are SJIS");
    qg_mode mode = QG_MODE_OFF;
    tap_ok(qg_mode_parse("AUDIT", &mode) && mode == QG_MODE_AUDIT, "mode AUDIT is audit");
    tap_ok(qg_mode_parse("Enforce", &mode) && mode == QG_MODE_ENFORCE, "mode Enforce is enforce");
    tap_ok(qg_is_client_library("libmysqlclient.so.24", 20) &&
               qg_is_client_library("/usr/lib/libperconaserverclient.so.21", 37) &&
               qg_is_client_library("libpq-2a4e6b1c.so.5.16", 22) &&
               qg_is_client_library("libmariadb.so", 13),
           "client libraries by soname, path, auditwheel tag, dev name");
    tap_ok(!qg_is_client_library("libpqxx.so.7", 12) && !qg_is_client_library("libpq-xyz.so.5", 14) &&
               !qg_is_client_library("libmariadb.sox", 14) && !qg_is_client_library("libpq", 5),
           "other libraries are not client libraries");
}

int main(void)
{
    helpers();
    lookups();
    char dir[] = "/tmp/qg-locale.XXXXXX";
    if (!tap_ok(turkish_locale(dir), "tr_TR.UTF-8 is set (localedef, package locales)"))
        return tap_done();
    tap_ok(tolower('I') != 'i', "under tr_TR.UTF-8 the C library does not fold I to i");
    helpers();
    lookups();
    if (strcmp(dir, "/tmp/qg-locale.XXXXXX") != 0) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        tap_ok(system(cmd) == 0, "the locale directory is removed");
    }
    return tap_done();
}
