/* Layout of the encoding tables, shared with the lexer so that its hot
 * loop can inline the character-length lookup. */
#ifndef QG_ENCODING_TABLES_H
#define QG_ENCODING_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quoteguard.h"

enum lead_class {
    L_ASCII = 0,   /* 0x01-0x7f: one byte */
    L_INVALID = 1, /* never valid as a first byte (NUL included) */
    L_SINGLE = 2,  /* a valid one-byte character >= 0x80 */
    L_FORM = 3     /* L_FORM + i: starts forms[i] */
};

typedef struct mb_form {
    uint8_t len;      /* bytes in the character */
    uint8_t trail[3]; /* bit masks into the encoding's trail table, bytes 2..len */
    uint8_t alt;      /* L_FORM + j: form to try when this one fails; 0 = none */
} mb_form;

struct qg_encoding {
    const char *name; /* canonical, as the server reports it */
    qg_dialect dialect;
    const char *aliases; /* NUL-separated, double-NUL-terminated, already normalized (PG) */
    const uint8_t *lead;
    const uint8_t *trail;
    const mb_form *forms;
    bool ascii_trail;
    bool utf8; /* lengths also follow the lead byte's high bits (0xc0, 0xf5 …) */
};

/* PG: the encoding the shim reads a client-only encoding's text in for a
 * SQL_ASCII server, which refuses every byte of 0x80 or more from it. */
#define QG_PG_ASCII_ONLY "SQL_ASCII server: ASCII only"

/* PG: an encoding the server can convert from but never use as its own
 * (SJIS, SHIFT_JIS_2004, BIG5, GBK, UHC, GB18030, JOHAB). */
bool qg_encoding_pg_client_only(const qg_encoding *enc);

/* MySQL: whether "--" before the high byte c starts a comment, as before a
 * space or control character. */
bool qg_encoding_dash_space(const qg_encoding *enc, unsigned char c);

/* Length of the valid character at p, 0 when invalid or truncated. */
static inline size_t encoding_char_len(const qg_encoding *enc, const unsigned char *p, size_t avail)
{
    if (avail == 0)
        return 0;
    uint8_t cls = enc->lead[p[0]];
    if (cls == L_ASCII || cls == L_SINGLE)
        return 1;
    while (cls >= L_FORM) {
        const mb_form *form = &enc->forms[cls - L_FORM];
        size_t n = form->len; /* 2 to 4, unrolled */
        if (avail >= n && (enc->trail[p[1]] & form->trail[0]) &&
            (n < 3 || (enc->trail[p[2]] & form->trail[1])) &&
            (n < 4 || (enc->trail[p[3]] & form->trail[2])))
            return n;
        cls = form->alt;
    }
    return 0;
}

/* A byte automaton for the inside of quoted text in S, built from the
 * tables above for every multibyte encoding whose forms fit: each byte's
 * row holds, in 6 bits per state, the state it leads to (a state is its
 * bit offset).  State 0 is between characters; DFA_STOP is reached at a
 * byte that ends a run of quoted text there (NUL ' " ` \), DFA_ERROR at an
 * invalid sequence; `ambiguous` is the state between characters once a
 * trail byte looked like a quote or backslash (0: no ASCII trail bytes). */
enum { DFA_BITS = 6, DFA_STOP = 8 * DFA_BITS, DFA_ERROR = 9 * DFA_BITS };
enum { UTF8_CONTS = 0x80 };

/* A set of bytes for a vector lookup: b is in it when low[b & 15] and
 * high[b >> 4] share a bit. */
typedef struct nibble_set {
    unsigned char low[16], high[16];
} nibble_set;

typedef struct encoding_dfa encoding_dfa_t;
struct encoding_dfa {
    uint64_t rows[256];
    unsigned ambiguous;
    bool quote_trail; /* some trail byte may be ' (then quotes cannot be counted) */
    /* Where characters of more than one byte are pairs, a lead byte and a
     * trail byte (the double-byte encodings), or two such pairs whose
     * second bytes are digits (`quads`: GB18030's four bytes): the bytes
     * that start a pair, those that end one after every lead, the digits,
     * the high bytes that are characters alone, and the states after a
     * lead, a lead and digit, and a lead, digit and lead. */
    bool pairs, quads;
    nibble_set lead, trail, digit, single;
    unsigned after_lead, after_digit, after_digit_lead;
    /* UTF-8: what is wrong with a byte after another, as bits in the AND
     * of three lookups (the byte before by its high and its low nibble,
     * the byte by its high nibble); UTF8_CONTS marks a continuation after
     * a continuation, right only where a lead two or three bytes before
     * asks for it. */
    bool utf8;
    unsigned char utf8_before_high[16], utf8_before_low[16], utf8_high[16];
};

/* Runs the automaton over s[pos, end) from *state (only its low 6 bits
 * count: the shift takes no more, so each byte costs one shift on the
 * dependency chain) until DFA_STOP or DFA_ERROR, both of which hold once
 * reached: four bytes are read before each test, and only a group that
 * stopped is read again byte by byte.  Returns where it stopped (end if it
 * did not); *before is the state before that byte. */
static inline size_t dfa_run(const uint64_t *rows, const unsigned char *s, size_t pos, size_t end,
                             uint64_t *state, uint64_t *before)
{
    uint64_t st = *state, prev = st;
    for (; pos + 4 <= end; pos += 4) {
        uint64_t ahead = rows[s[pos]] >> (st & 63);
        ahead = rows[s[pos + 1]] >> (ahead & 63);
        ahead = rows[s[pos + 2]] >> (ahead & 63);
        ahead = rows[s[pos + 3]] >> (ahead & 63);
        if ((ahead & 63) >= DFA_STOP)
            break;
        st = ahead;
    }
    for (; pos < end; pos++) {
        prev = st;
        st = rows[s[pos]] >> (st & 63);
        if ((st & 63) >= DFA_STOP)
            break;
    }
    *state = st & 63;
    *before = prev & 63;
    return pos;
}

/* The automaton of `enc`, or NULL (single-byte, too many states, not built). */
const encoding_dfa_t *encoding_dfa(const qg_encoding *enc);

#endif
