/*
 * The MySQL front's state reader: sql_mode values, session-tracking reports,
 * the statement reader for multi-statement texts, and the escaper.
 * Input: selector byte (low 2 bits: which part; the rest: which MySQL
 * encoding the reader and the escaper use), a flags byte, then the text.
 * Invariants: sql_mode flags are only the quoting flags and read the same
 * twice; a charset taken from a report is NUL-terminated, lower-case and
 * fits; the reader always advances and never past the end, and whether a
 * text may change the state unreported is what its statements say (one
 * statement whose first word changes nothing names @@ only to read); the escaper's
 * output fits 2n + 1 bytes and the server's reading of it (MariaDB's
 * get_text, modelled below) gives the input back.
 */
#include "fuzz_common.h"
#include "mysql_escape.h"
#include "mysql_state.h"
#include "mysql_statements.h"

static void fuzz_sql_mode(const char *text, size_t len)
{
    unsigned a = 0, b = 0;
    bool ok = qg_my_sql_mode_flags(text, len, &a);
    FUZZ_CHECK(ok == qg_my_sql_mode_flags(text, len, &b) && (!ok || a == b), "not deterministic");
    FUZZ_CHECK(!ok || (a & ~(unsigned)(QG_NO_BACKSLASH_ESCAPES | QG_ANSI_QUOTES)) == 0,
               "flags %u", a);
}

/* The text as NUL-separated name/value pairs, as a report lists them. */
static void fuzz_report(const char *text, size_t len)
{
    qg_my_state st = {.charset = "latin1", .flags = 0};
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *name = p;
        const char *name_end = memchr(p, 0, (size_t)(end - p));
        if (!name_end)
            break;
        const char *value = name_end + 1;
        const char *value_end = memchr(value, 0, (size_t)(end - value));
        if (!value_end)
            value_end = end;
        bool list;
        qg_my_state_apply(&st, name, (size_t)(name_end - name), value,
                          (size_t)(value_end - value), &list);
        if (list)
            qg_my_tracking_covers(value, (size_t)(value_end - value));
        size_t n = strnlen(st.charset, sizeof st.charset);
        FUZZ_CHECK(n < sizeof st.charset, "charset not terminated");
        for (size_t i = 0; i < n; i++)
            FUZZ_CHECK(st.charset[i] < 'A' || st.charset[i] > 'Z', "charset not lower-case");
        p = value_end + 1;
    }
}

static void fuzz_reader(const qg_encoding *enc, unsigned flags, const char *text, size_t len)
{
    qg_my_state st = {.flags = flags};
    qg_my_state_set_charset(&st, qg_encoding_name(enc), strlen(qg_encoding_name(enc)));
    const qg_my_state start = st;
    bool runs_other = false;
    for (size_t pos = 0; pos < len;) {
        qg_my_effect fx;
        size_t step = qg_my_read_statement(&st, text + pos, len - pos, &fx);
        FUZZ_CHECK(step > 0 && step <= len - pos, "step %zu at %zu of %zu", step, pos, len);
        runs_other |= fx.runs_other;
        pos += step;
    }
    /* its shortcut for a text of one statement agrees with the reader; one
     * statement whose first word changes nothing only reads what it names */
    size_t at, n;
    qg_my_word_kind kind;
    bool lone_inert = qg_my_first_word(text, len, &at, &n, &kind) && kind == QG_MY_WORD_INERT &&
                      !memchr(text + at + n, ';', len - at - n);
    FUZZ_CHECK(qg_my_may_change_unreported(&start, text, len) ==
                   (runs_other || (!lone_inert && memmem(text, len, "@@", 2) != NULL)),
               "may_change_unreported disagrees with the statements read");
    FUZZ_CHECK(strnlen(st.charset, sizeof st.charset) < sizeof st.charset, "charset not terminated");
}

/* The server's reading of a string literal's body, without the quotes. */
static size_t server_reading(const qg_encoding *enc, bool no_backslash_escapes,
                             const unsigned char *s, size_t len, unsigned char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        size_t n = s[i] >= 0x80 ? qg_encoding_char_len(enc, s + i, len - i) : 0;
        if (n >= 2) {
            memcpy(out + o, s + i, n);
            o += n, i += n;
        } else if (s[i] == '\\' && !no_backslash_escapes) {
            FUZZ_CHECK(i + 1 < len, "a backslash ends the literal");
            unsigned char c = s[i + 1];
            out[o++] = c == '0' ? 0 : c == 'n' ? '\n' : c == 'r' ? '\r' : c == 'Z' ? 0x1a : c;
            i += 2;
        } else if (s[i] == '\'') {
            FUZZ_CHECK(i + 1 < len && s[i + 1] == '\'', "a quote ends the literal at %zu", i);
            out[o++] = '\'';
            i += 2;
        } else {
            out[o++] = s[i++];
        }
    }
    return o;
}

static void fuzz_escape(const qg_encoding *enc, bool quotes_only, const char *text, size_t len)
{
    char *escaped = malloc(2 * len + 1);
    unsigned char *read_back = malloc(2 * len + 1);
    if (!escaped || !read_back)
        abort();
    size_t n = qg_my_escape(enc, quotes_only, escaped, text, len);
    FUZZ_CHECK(n <= 2 * len && escaped[n] == '\0', "length %zu of %zu", n, len);
    size_t m = server_reading(enc, quotes_only, (const unsigned char *)escaped, n, read_back);
    FUZZ_CHECK(m == len && memcmp(read_back, text, len) == 0,
               "%s%s: the server reads back other bytes", qg_encoding_name(enc),
               quotes_only ? " NO_BACKSLASH_ESCAPES" : "");
    free(escaped);
    free(read_back);
}

/* The n-th MySQL row of the encoding table (modulo their number). */
static const qg_encoding *mysql_encoding(unsigned n)
{
    unsigned count = 0;
    for (size_t i = 0; i < FUZZ_ENCODING_COUNT; i++)
        count += fuzz_encodings[i].dialect == QG_DIALECT_MYSQL;
    n %= count;
    for (size_t i = 0;; i++) {
        if (fuzz_encodings[i].dialect != QG_DIALECT_MYSQL || n-- > 0)
            continue;
        qg_dialect dialect;
        return fuzz_pick_encoding((uint8_t)i, &dialect);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    unsigned part = data[0] & 3;
    unsigned flags = data[1] & (QG_NO_BACKSLASH_ESCAPES | QG_ANSI_QUOTES);
    const char *text = (const char *)data + 2;
    size_t len = size - 2;
    const qg_encoding *enc = mysql_encoding(data[0] >> 2);
    switch (part) {
    case 0:
        fuzz_sql_mode(text, len);
        break;
    case 1:
        fuzz_report(text, len);
        break;
    case 2:
        fuzz_reader(enc, flags, text, len);
        break;
    default:
        fuzz_escape(enc, flags & QG_NO_BACKSLASH_ESCAPES, text, len);
        break;
    }
    return 0;
}
