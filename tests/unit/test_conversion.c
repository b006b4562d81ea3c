/* The server's reading after its conversion to the server encoding
 * (qg_server_view_build, qg_context.view): SHIFT_JIS_2004 81 5f is a
 * backslash and 81 b0 a tilde once converted to UTF8. */
#include <stdlib.h>
#include <string.h>

#include "encoding_tables.h"
#include "quoteguard.h"
#include "tap.h"

static const qg_encoding *sjis2004;

/* The verdict for sql as the server reads it after converting it to
 * `server`; *reason the first finding's. */
static qg_verdict check_converted(const char *server, unsigned flags, const char *sql,
                                  qg_reason *reason)
{
    size_t len = strlen(sql);
    const qg_ascii_conversion *table = qg_conversion_to_ascii(sjis2004, server);
    size_t count = qg_server_view_count(sjis2004, table, sql, len);
    char *text = malloc(len + 1);
    qg_converted_char *chars = calloc(count + 1, sizeof *chars);
    qg_server_view view;
    qg_server_view_build(sjis2004, table, sql, len, text, chars, &view);
    qg_context ctx;
    qg_context_init(&ctx, QG_DIALECT_POSTGRES, sjis2004, flags);
    ctx.view = count ? &view : NULL;
    qg_result res;
    qg_verdict v = qg_check(&ctx, sql, len, &res);
    *reason = res.count ? res.findings[0].reason : QG_REASON_NONE;
    free(text);
    free(chars);
    return v;
}

static void test_view(void)
{
    const char *sql = "SELECT 'a\x81\x5f' || '\x81\xb0\x83\x5c'";
    size_t len = strlen(sql);
    const qg_ascii_conversion *table = qg_conversion_to_ascii(sjis2004, "UTF8");
    tap_ok(table != NULL, "SHIFT_JIS_2004 to UTF8 makes ASCII");
    tap_ok(qg_conversion_to_ascii(sjis2004, "EUC_JIS_2004") == NULL,
           "SHIFT_JIS_2004 to EUC_JIS_2004 makes none");
    tap_ok(qg_encoding_converts_to_ascii(sjis2004) &&
               !qg_encoding_converts_to_ascii(qg_encoding_find(QG_DIALECT_POSTGRES, "SJIS")),
           "only SHIFT_JIS_2004 converts to ASCII");
    size_t count = qg_server_view_count(sjis2004, table, sql, len);
    char text[64];
    qg_converted_char chars[4];
    qg_server_view view;
    qg_server_view_build(sjis2004, table, sql, len, text, chars, &view);
    tap_ok(count == 2 && view.count == 2, "two converted characters (the trail 5c of 83 5c is none)");
    tap_ok(view.len == len - 2 && memcmp(view.text, "SELECT 'a\\' || '~\x83\x5c'", view.len) == 0,
           "the view holds their ASCII bytes");
    tap_ok(chars[0].view == 9 && chars[0].start == 9 && chars[0].end == 11 && chars[1].view == 16 &&
               chars[1].start == 17 && chars[1].end == 19,
           "and where they are in both texts");
}

static void test_rule(void)
{
    qg_reason reason;
    /* PQescapeStringConn's output for 81 5f ' OR 1=1 -- under scs off */
    const char *attack = "SELECT * FROM t WHERE name = '\x81\x5f'' OR 1=1 --'";
    tap_ok(check_converted("UTF8", 0, attack, &reason) == QG_VERDICT_BLOCK &&
               reason == QG_REASON_STRUCTURE_MISMATCH,
           "scs off, server UTF8: a converted backslash that escapes the doubled quote blocks");
    tap_ok(check_converted("EUC_JIS_2004", 0, attack, &reason) == QG_VERDICT_CLEAN,
           "the same text for an EUC_JIS_2004 server, where 81 5f stays a character, passes");
    tap_ok(check_converted("UTF8", QG_STD_STRINGS, attack, &reason) == QG_VERDICT_CLEAN,
           "scs on: the backslash means nothing, the text passes");
    const char *swallow = "SELECT * FROM t WHERE a = E'\x81\x5f' AND b = ' OR 1=1 --'";
    tap_ok(check_converted("UTF8", QG_STD_STRINGS, swallow, &reason) == QG_VERDICT_BLOCK &&
               reason == QG_REASON_STRUCTURE_MISMATCH,
           "a converted backslash before a closing quote swallows it (two literals)");
    tap_ok(check_converted("UTF8", 0, "SELECT '\x81\x5f\x81\x5f', 'x'", &reason) == QG_VERDICT_CLEAN,
           "two converted backslashes are one escaped backslash");
    tap_ok(check_converted("UTF8", 0, "SELECT '\x81\x5f'", &reason) == QG_VERDICT_BLOCK &&
               reason == QG_REASON_UNTERMINATED,
           "a converted backslash before the last quote leaves the literal open");
    tap_ok(check_converted("UTF8", QG_STD_STRINGS, "SELECT '\x81\x5f' AS \"\x81\xb0\"", &reason) ==
               QG_VERDICT_CLEAN,
           "scs on: a backslash and a tilde in a name pass");
    tap_ok(check_converted("UTF8", 0, "SELECT $a\x81\xb0$ '$a\x81\xb0$", &reason) == QG_VERDICT_BLOCK &&
               reason == QG_REASON_UNTERMINATED,
           "a tilde in a dollar tag makes it no tag: the quote after it opens a literal");
}

/* A SQL_ASCII server refuses every byte of 0x80 or more from a client
 * encoding it cannot convert from: so does the encoding the shim reads
 * such text in, wherever the byte is. */
static void test_ascii_only(void)
{
    const qg_encoding *ascii = qg_encoding_find(QG_DIALECT_POSTGRES, QG_PG_ASCII_ONLY);
    tap_ok(ascii && qg_encoding_pg_client_only(sjis2004) &&
               !qg_encoding_pg_client_only(qg_encoding_find(QG_DIALECT_POSTGRES, "EUC_JP")),
           "the ASCII-only reading exists; SHIFT_JIS_2004 is client-only, EUC_JP is not");
    static const char long_tail[] = "0123456789012345678901234567890123456789012345678901234567890123456789";
    char texts[4][256];
    snprintf(texts[0], sizeof texts[0], "SELECT '\x95\x5c'");
    snprintf(texts[1], sizeof texts[1], "SELECT '%s\x81\x40%s'", long_tail, long_tail);
    snprintf(texts[2], sizeof texts[2], "SELECT 1 -- \xe9\n");
    snprintf(texts[3], sizeof texts[3], "SELECT \"\xa4\xa2\" FROM t");
    qg_context ctx;
    qg_context_init(&ctx, QG_DIALECT_POSTGRES, ascii, 0);
    for (int i = 0; i < 4; i++) {
        qg_result res;
        qg_verdict v = qg_check(&ctx, texts[i], strlen(texts[i]), &res);
        tap_ok(v == QG_VERDICT_BLOCK && res.findings[0].reason == QG_REASON_INVALID_SEQUENCE,
               "ASCII only: a high byte blocks (text %d)", i);
    }
    snprintf(texts[0], sizeof texts[0], "SELECT '%s''%s'", long_tail, long_tail);
    tap_ok(qg_check(&ctx, texts[0], strlen(texts[0]), NULL) == QG_VERDICT_CLEAN,
           "ASCII only: ASCII text passes");
}

int main(void)
{
    sjis2004 = qg_encoding_find(QG_DIALECT_POSTGRES, "SHIFT_JIS_2004");
    test_view();
    test_rule();
    test_ascii_only();
    return tap_done();
}
