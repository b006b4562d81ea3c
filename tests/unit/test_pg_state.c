/* What a PostgreSQL statement does to the client encoding and
 * standard_conforming_strings (src/core/pg_state.c), and the states a
 * pipeline's statements may meet. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lexer_internal.h"
#include "pg_state.h"
#include "tap.h"

static qg_pg_effect effect(const char *sql)
{
    return qg_pg_statement_effect(sql, strlen(sql));
}

static void encoding_is(const char *sql, qg_pg_change change, const char *name)
{
    qg_pg_effect e = effect(sql);
    tap_ok(e.encoding == change && (change != QG_PG_SETS || strcmp(e.encoding_name, name) == 0),
           "%s: encoding %s%s", sql,
           change == QG_PG_SETS ? "set to " : change == QG_PG_KEEPS ? "kept" : "unknown",
           change == QG_PG_SETS ? name : "");
}

static void scs_is(const char *sql, qg_pg_change change, bool on)
{
    qg_pg_effect e = effect(sql);
    tap_ok(e.scs == change && (change != QG_PG_SETS || e.scs_on == on), "%s: scs %s", sql,
           change == QG_PG_SETS ? (on ? "on" : "off") : change == QG_PG_KEEPS ? "kept" : "unknown");
}

/* The filter that reads a text for what it sets only when a word may name
 * a setting finds the words 16 bytes at a time: each word at every offset
 * of a text of every length around those blocks, the word itself (the
 * text then read: not kept) and two that are not it, one longer and one
 * that starts with another byte (kept, unread).  Count of texts read
 * wrong. */
static int wrong_at_offsets(const char *word)
{
    int wrong = 0;
    char sql[128], longer[64], other[64];
    snprintf(longer, sizeof longer, "%sx", word);
    snprintf(other, sizeof other, "x%s", word);
    for (int pad = 0; pad < 40; pad++)
        for (int after = 0; after < 20; after++) {
            const char *words[3] = {word, longer, other};
            for (int k = 0; k < 3; k++) {
                int len = snprintf(sql, sizeof sql, "SELECT %*s\"%s\" %*s", pad, "", words[k],
                                   after, "");
                qg_pg_effect e = qg_pg_statement_effect(sql, (size_t)len);
                bool kept = e.encoding == QG_PG_KEEPS && e.scs == QG_PG_KEEPS;
                wrong += k == 0 ? kept : !kept;
            }
        }
    return wrong;
}

/* The filter before the PostgreSQL setting reader: every text the reader
 * finds a setting in passes it (texts of the reader's words, near misses
 * and other words, at every length and offset), and it reads every pair,
 * the last ones included, in each build the CPU runs as its byte-wise
 * reference does. */
static void test_pg_may_set(void)
{
    static const char *const pieces[] = {
        "SET ", "set_config(", "Reset ", "DISCARD ", " all", "NAMES ", "Client_Encoding",
        "standard_conforming_strings", "SESSION ", "LOCAL ", "'SJIS'", " TO ", " = ",
        "SELECT ", "c ", "FROM ", "qg_bench ", "WHERE ", "id = 1", ";", "$$", "\\", "\xc3\xa9",
        "sel", "ec", "t", "e", "d", "i", "a", "m", "n", "f", "_", " ", "(", ")", "'", "\"\""};
    const size_t count = sizeof pieces / sizeof pieces[0];
    char buf[160];
    unsigned long seed = 12345;
    unsigned missed = 0, differ = 0, filtered = 0, settings = 0;
    for (unsigned round = 0; round < 200000; round++) {
        size_t len = 0;
        seed = seed * 6364136223846793005UL + 1442695040888963407UL;
        unsigned pieces_here = (unsigned)(seed >> 60);
        for (unsigned k = 0; k < pieces_here; k++) {
            seed = seed * 6364136223846793005UL + 1442695040888963407UL;
            const char *piece = pieces[(seed >> 33) % count];
            size_t n = strlen(piece);
            if (len + n > 120)
                break;
            memcpy(buf + len, piece, n);
            len += n;
        }
        /* at an offset from a larger buffer, for loads across its end */
        char *copy = malloc(len ? len : 1);
        memcpy(copy, buf, len);
        bool may = qg_pg_may_set(copy, len);
        bool reference = qg_scans_of(QG_VECTORS_REFERENCE)->pg_may_set(copy, len);
        for (int build = QG_VECTORS_SSE2; build < QG_IMPLEMENTATIONS; build++)
            differ += qg_scans_of(build)->pg_may_set(copy, len) != reference;
        qg_pg_effect e = qg_pg_statement_effect(copy, len);
        bool sets = e.encoding != QG_PG_KEEPS || e.scs != QG_PG_KEEPS;
        settings += sets;
        filtered += !may;
        missed += sets && !may;
        differ += may != reference;
        free(copy);
    }
    tap_ok(missed == 0 && settings > 1000 && filtered > 1000,
           "pg: every text the setting reader finds a setting in passes the filter (%u missed; "
           "%u with a setting, %u filtered out)",
           missed, settings, filtered);
    tap_ok(differ == 0, "pg: the filter finds the pairs a byte-wise reading finds (%u differ)",
           differ);
    const char *point = "SELECT c FROM qg_bench WHERE id = 123";
    const char *set = "SET client_encoding TO 'SJIS'";
    const char *last = "select 1 from t where x = 1 or y = 2 discarD";
    tap_ok(!qg_pg_may_set(point, strlen(point)) && qg_pg_may_set(set, strlen(set)) &&
               qg_pg_may_set(last, strlen(last)) &&
               !qg_pg_may_set(last, strlen(last) - 6),
           "pg: a point select is filtered out; a SET and a pair in the last bytes are not");
}

int main(void)
{
    test_pg_may_set();
    tap_ok(wrong_at_offsets("client_encoding") == 0 &&
               wrong_at_offsets("standard_conforming_strings") == 0 &&
               wrong_at_offsets("Client_Encoding") == 0,
           "a setting's name is found at every offset of texts of every length, and a longer "
           "word or one that starts otherwise is not");
    encoding_is("SET client_encoding TO 'SJIS'", QG_PG_SETS, "SJIS");
    encoding_is("set Client_Encoding = sjis", QG_PG_SETS, "sjis");
    encoding_is("SET SESSION client_encoding TO \"UTF8\";", QG_PG_SETS, "UTF8");
    encoding_is("/* c */ SET LOCAL /* d */ client_encoding TO 'BIG5'", QG_PG_SETS, "BIG5");
    encoding_is("SET NAMES 'GBK'", QG_PG_SETS, "GBK");
    encoding_is("SET client_encoding TO DEFAULT", QG_PG_UNKNOWN, "");
    encoding_is("SET client_encoding TO 'SJIS'; SET client_encoding TO 'UTF8'", QG_PG_UNKNOWN, "");
    encoding_is("RESET client_encoding", QG_PG_UNKNOWN, "");
    encoding_is("RESET ALL", QG_PG_UNKNOWN, "");
    /* what the shared tokens read: comments, prefixed strings, operators */
    encoding_is("SET client_encoding = 'UTF8' /* c */ ; -- d", QG_PG_SETS, "UTF8");
    encoding_is("SET client_encoding = E'UTF8'", QG_PG_UNKNOWN, "");
    encoding_is("SET client_encoding = $$UTF8$$", QG_PG_UNKNOWN, "");
    encoding_is("SET client_encoding = 'UT''F8'", QG_PG_SETS, "UT'F8");
    encoding_is("SET client_encoding = 'UTF\\8'", QG_PG_UNKNOWN, "");
    encoding_is("SET client_encoding =-1", QG_PG_UNKNOWN, "");
    encoding_is("SET client_encoding = utf$8", QG_PG_UNKNOWN, "");
    encoding_is("SET names = 1.5", QG_PG_UNKNOWN, "");
    encoding_is("DISCARD ALL", QG_PG_UNKNOWN, "");
    encoding_is("SELECT set_config('client_encoding', 'EUC_JP', false)", QG_PG_SETS, "EUC_JP");
    encoding_is("SELECT set_config('client_encoding', $1, false)", QG_PG_UNKNOWN, "");
    encoding_is("DO $$BEGIN EXECUTE 'SET client_encoding TO ' || x; END$$", QG_PG_UNKNOWN, "");
    encoding_is("SELECT 'client_encoding'", QG_PG_UNKNOWN, "");
    encoding_is("SELECT name FROM users WHERE name = 'a'", QG_PG_KEEPS, "");
    encoding_is("SELECT names FROM people WHERE names = 'first names'", QG_PG_KEEPS, "");
    encoding_is("DO $$BEGIN EXECUTE 'SET  NAMES ' || x; END$$", QG_PG_UNKNOWN, "");
    encoding_is("SELECT 1; RESET ALL", QG_PG_UNKNOWN, "");
    encoding_is("DO $$BEGIN EXECUTE 'DISCARD\nALL'; END$$", QG_PG_UNKNOWN, "");
    encoding_is("SET search_path TO public", QG_PG_KEEPS, "");
    encoding_is("SELECT set_config('search_path', 'public', false)", QG_PG_KEEPS, "");
    /* texts without a word a setting needs are not read; one with a word
     * that only begins like one is read whole */
    encoding_is("SELECT c FROM qg_bench WHERE id = 839", QG_PG_KEEPS, "");
    encoding_is("SELECT settings FROM t", QG_PG_KEEPS, "");
    encoding_is("SELECT 1 -- Set_Config(x)", QG_PG_UNKNOWN, "");
    encoding_is("SELECT 1 AS CLIENT_ENCODING", QG_PG_UNKNOWN, "");
    /* SET is read as the first word only: UPDATE's is not a setting's,
     * and a SET after another statement names its setting */
    encoding_is("UPDATE t SET c = 'x' WHERE id = 1", QG_PG_KEEPS, "");
    encoding_is("UPDATE t SET c = 'x'; SET client_encoding TO 'SJIS'", QG_PG_UNKNOWN, "");
    encoding_is(" \n\tSET \"client_encoding\" TO 'SJIS'", QG_PG_SETS, "SJIS");
    encoding_is("SELECT set_config_x(1)", QG_PG_UNKNOWN, "");
    /* a name or value in Unicode escapes, which PostgreSQL decodes: not
     * known in advance where the text may set something; kept elsewhere */
    encoding_is("SET U&\"\\0063lient_encoding\" TO 'SJIS'", QG_PG_UNKNOWN, "");
    encoding_is("SET client_encoding TO U&'\\0045UC_JP'", QG_PG_UNKNOWN, "");
    encoding_is("SET u&\"c!006cient_encoding\" UESCAPE '!' TO 'BIG5'", QG_PG_UNKNOWN, "");
    scs_is("SET U&\"standard_conforming_string\\0073\" TO on", QG_PG_UNKNOWN, false);
    encoding_is("SELECT U&'\\00e9t\\00e9' FROM t", QG_PG_KEEPS, "");
    encoding_is("SELECT a&'x' FROM t WHERE b = 1", QG_PG_KEEPS, "");

    scs_is("SET standard_conforming_strings = on", QG_PG_SETS, true);
    scs_is("SET standard_conforming_strings TO 'off'", QG_PG_SETS, false);
    scs_is("SET standard_conforming_strings TO tr", QG_PG_SETS, true);
    scs_is("SET standard_conforming_strings TO 0", QG_PG_SETS, false);
    scs_is("SET standard_conforming_strings TO o", QG_PG_UNKNOWN, false);
    scs_is("SELECT set_config('standard_conforming_strings', 'on', false)", QG_PG_SETS, true);
    scs_is("RESET standard_conforming_strings", QG_PG_UNKNOWN, false);
    scs_is("SELECT 1; RESET ALL", QG_PG_UNKNOWN, false);
    scs_is("SET client_encoding TO 'SJIS'", QG_PG_KEEPS, false);

    qg_pg_pending p = {0};
    qg_pg_pending_add_reported(&p, "LATIN1", false);
    qg_pg_effect e = effect("SET client_encoding TO 'SJIS'");
    qg_pg_pending_add_effect(&p, &e);
    e = effect("SET standard_conforming_strings = on");
    qg_pg_pending_add_effect(&p, &e);
    qg_pg_pending_add_reported(&p, "LATIN1", false);
    tap_ok(p.encoding_count == 2 && strcmp(p.encodings[0], "LATIN1") == 0 &&
               strcmp(p.encodings[1], "SJIS") == 0 && p.scs_off && p.scs_on && !p.encoding_unknown,
           "a pipeline's states: the reported one and each queued SET's, once each");
    e = effect("RESET ALL");
    qg_pg_pending_add_effect(&p, &e);
    tap_ok(p.encoding_unknown, "a statement with an effect not known in advance marks it unknown");
    qg_pg_pending full = {0};
    char name[16];
    for (int i = 0; i <= QG_PG_MAX_ENCODINGS; i++) {
        snprintf(name, sizeof name, "ENC%d", i);
        qg_pg_pending_add_reported(&full, name, true);
    }
    tap_ok(full.encoding_count == QG_PG_MAX_ENCODINGS && full.encoding_unknown,
           "more encodings than can be checked each: unknown");
    return tap_done();
}
