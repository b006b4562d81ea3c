/*
 * quoteguard — checker for SQL text built by pasting escaped strings.
 *
 * Pure logic: no client library; qg_check allocates nothing.  Given the dialect, the
 * connection's client encoding and quoting flags, and the query bytes, it
 * reads the query twice — as the server will (S) and byte by byte as a naive
 * escaper believes (N) — and reports where the two disagree or where the
 * bytes are not valid in the encoding.  See docs/DETECTION.md.
 */
#ifndef QUOTEGUARD_H
#define QUOTEGUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define QG_VERSION "0.2.0"

/* The library is built with hidden visibility; this is its public surface. */
#if defined(__GNUC__)
#define QG_API __attribute__((visibility("default")))
#else
#define QG_API
#endif

typedef enum qg_dialect {
    QG_DIALECT_POSTGRES = 0,
    QG_DIALECT_MYSQL = 1
} qg_dialect;

/* Quoting rules of the connection (qg_context.flags). */
enum {
    QG_STD_STRINGS = 1u << 0,          /* PG: standard_conforming_strings = on */
    QG_NO_BACKSLASH_ESCAPES = 1u << 1, /* MySQL: sql_mode has NO_BACKSLASH_ESCAPES */
    QG_ANSI_QUOTES = 1u << 2           /* MySQL: sql_mode has ANSI_QUOTES */
};

/* ---------------------------------------------------------------- encodings */

typedef struct qg_encoding qg_encoding;

/* Looks a client encoding up by any name the server accepts (PG: case and
 * punctuation insensitive aliases; MySQL: charset names).  NULL if unknown. */
QG_API const qg_encoding *qg_encoding_find(qg_dialect dialect, const char *name);
/* Canonical name as the server reports it ("SJIS", "gbk"). */
QG_API const char *qg_encoding_name(const qg_encoding *enc);
/* True when some valid multibyte character has a non-first byte below 0x80
 * (SJIS, BIG5, GBK, UHC, GB18030, cp932 …): the encodings where a byte-wise
 * escaper can be fooled. */
QG_API bool qg_encoding_has_ascii_trail(const qg_encoding *enc);
/* True for encodings where every byte is one character. */
QG_API bool qg_encoding_is_single_byte(const qg_encoding *enc);
/* Length of the character at p (at most avail bytes): >= 1 when valid,
 * 0 when the bytes are not a valid character (including a NUL byte and a
 * character truncated by the end of the buffer). */
QG_API size_t qg_encoding_char_len(const qg_encoding *enc, const unsigned char *p, size_t avail);

/* ------------------------------------------------------------ conversions */

/* PostgreSQL converts the whole query from the client encoding to the
 * server's before its lexer runs, and a few conversions turn a character
 * that is not ASCII into an ASCII byte the lexer reads (SHIFT_JIS_2004
 * 81 5f is a backslash in UTF8).  One such character: */
typedef struct qg_ascii_conversion {
    unsigned char bytes[4]; /* the client's character */
    unsigned char len;      /* its length; 0 ends a table */
    unsigned char ascii;    /* the byte the server reads */
} qg_ascii_conversion;

/* The characters of `client` that the conversion to the server encoding
 * named `server` (as the server reports it) turns into ASCII, ended by an
 * entry of len 0; NULL when there are none: the server's lexer then reads
 * every ASCII byte where the client's text has it, and nothing else as
 * ASCII. */
QG_API const qg_ascii_conversion *qg_conversion_to_ascii(const qg_encoding *client,
                                                         const char *server);
/* Whether the conversion to some server encoding turns a character of
 * `client` into ASCII (one pointer test: worth asking before the server
 * encoding is looked up). */
QG_API bool qg_encoding_converts_to_ascii(const qg_encoding *client);

/* A character of the client's text that the server reads as one ASCII
 * byte: where that byte is in the view, and its bytes in the client's text. */
typedef struct qg_converted_char {
    size_t view, start, end;
} qg_converted_char;

/* The query as the server's lexer reads it after the conversion: the
 * client's text with each converted character replaced by its ASCII byte
 * (text, len), and where each replacement is (chars, in order).  The rest
 * keeps the client's bytes, read in the client encoding: the conversion
 * keeps ASCII and turns every other character into bytes of 0x80 or more,
 * which the server's lexer reads as one would read that character. */
typedef struct qg_server_view {
    const char *text;
    size_t len;
    const qg_converted_char *chars;
    size_t count;
} qg_server_view;

/* The number of characters of sql[0, len) in `client` that `table` (from
 * qg_conversion_to_ascii) converts to ASCII. */
QG_API size_t qg_server_view_count(const qg_encoding *client, const qg_ascii_conversion *table,
                                   const char *sql, size_t len);
/* Builds the view of sql[0, len) into `text` (room for len bytes) and
 * `chars` (room for qg_server_view_count's answer); *out points into them. */
QG_API void qg_server_view_build(const qg_encoding *client, const qg_ascii_conversion *table,
                                 const char *sql, size_t len, char *text, qg_converted_char *chars,
                                 qg_server_view *out);

/* ------------------------------------------------------------------- lexer */

typedef enum qg_token_kind {
    QG_TOK_STRING = 1, /* a string literal of any form, prefix and quotes included */
    QG_TOK_IDENT,      /* a delimited identifier: "x", `x`, U&"x" */
    QG_TOK_COMMENT,    /* -- …, # …, / * … * / (not executable comments) */
    QG_TOK_DOLLAR      /* PG $tag$ … $tag$ */
} qg_token_kind;

typedef enum qg_string_form {
    QG_FORM_PLAIN = 0, /* '…' (PG: follows standard_conforming_strings) */
    QG_FORM_ESCAPE,    /* PG E'…' */
    QG_FORM_UNICODE,   /* PG U&'…' / U&"…" */
    QG_FORM_BIT,       /* B'…' */
    QG_FORM_HEX,       /* X'…' */
    QG_FORM_NATIONAL,  /* N'…' */
    QG_FORM_DOUBLE,    /* MySQL "…" string */
    QG_FORM_BINARY     /* MySQL _binary'…' */
} qg_string_form;

typedef struct qg_token {
    qg_token_kind kind;
    qg_string_form form;
    size_t start;      /* first byte (prefix included) */
    size_t end;        /* one past the closing quote */
    bool unterminated; /* ran into the end of the input */
} qg_token;

typedef enum qg_reading {
    QG_READ_SERVER = 0,        /* S: characters of the client encoding, the connection's rules */
    QG_READ_NAIVE = 1,         /* N: inside string literals of every form every byte one
                                  character and '\' escaping the next byte; code around
                                  them as in S (addslashes, mysql_escape_string) */
    QG_READ_NAIVE_DOUBLING = 2, /* N as a quote doubler reads: '' a quote, '\' an
                                   ordinary byte */
    QG_READ_NAIVE_AWARE = 3,    /* N as a backslash escaper that knows the encoding
                                   reads (its idea of the quoting rules is wrong):
                                   characters whole, '\' escaping in every form */
    QG_READ_NAIVE_TRUSTING = 4  /* as QG_READ_NAIVE_AWARE, but a byte that starts no
                                   valid character takes the length its value
                                   declares (an escaper that trusts lead bytes) */
} qg_reading;

typedef enum qg_reason {
    QG_REASON_NONE = 0,
    QG_REASON_INVALID_SEQUENCE,   /* bytes that are not a character of the encoding */
    QG_REASON_STRUCTURE_MISMATCH, /* N is well formed but its boundaries differ from S */
    QG_REASON_UNTERMINATED,       /* literal, identifier or comment runs to the end */
    QG_REASON_NUL_BYTE,           /* a NUL byte inside the query text */
    QG_REASON_ILLFORMED_QUOTE,    /* MySQL: ill-formed lead byte right before ' " ` or \ */
    QG_REASON_ILLFORMED,          /* MySQL: other ill-formed sequence */
    QG_REASON_COUNT
} qg_reason;

/* Stable snake_case name of a reason, as used in logs ("structure_mismatch"). */
QG_API const char *qg_reason_name(qg_reason reason);

typedef enum qg_action {
    QG_ACTION_IGNORE = 0,
    QG_ACTION_LOG,   /* a finding that does not block */
    QG_ACTION_BLOCK
} qg_action;

typedef struct qg_context {
    qg_dialect dialect;
    const qg_encoding *encoding; /* client encoding; must not be NULL */
    unsigned flags;              /* QG_STD_STRINGS, QG_NO_BACKSLASH_ESCAPES, QG_ANSI_QUOTES */
    /* PG: the query as the server reads it after converting it, when that
     * differs from the client's text (qg_server_view_build); NULL else. */
    const qg_server_view *view;
    /* What each reason does; qg_context_init() fills the defaults. */
    qg_action action[QG_REASON_COUNT];
} qg_context;

/* Defaults: every reason blocks, except QG_REASON_ILLFORMED (logged). */
QG_API void qg_context_init(qg_context *ctx, qg_dialect dialect, const qg_encoding *enc,
                     unsigned flags);

typedef struct qg_finding {
    qg_reason reason;
    qg_action action;
    size_t offset;     /* byte where S and N part, or where the bad bytes start */
    size_t span_start; /* the token (literal, identifier, comment) involved; */
    size_t span_end;   /* span_start == span_end when outside any token */
} qg_finding;

#define QG_MAX_FINDINGS 8

typedef enum qg_verdict {
    QG_VERDICT_CLEAN = 0, /* nothing found */
    QG_VERDICT_LOG,       /* findings, none of them blocking */
    QG_VERDICT_BLOCK      /* at least one blocking finding */
} qg_verdict;

typedef struct qg_result {
    qg_verdict verdict;
    unsigned count;                         /* all findings; may exceed QG_MAX_FINDINGS */
    qg_finding findings[QG_MAX_FINDINGS];   /* the first ones, in the order found */
} qg_result;

/* The lexer: an iterator over the structural tokens of a query.  Its state
 * is the library's own: qg_lexer_new allocates one (NULL without memory)
 * that reads sql[0, len) with the context's rules, writing encoding
 * findings to *findings unless it is NULL; ctx, sql and findings must
 * outlive it.  qg_lexer_free releases it. */
typedef struct qg_lexer qg_lexer;
QG_API qg_lexer *qg_lexer_new(const qg_context *ctx, const char *sql, size_t len,
                              qg_reading reading, qg_result *findings);
/* Next structural token; false at the end of the input. */
QG_API bool qg_lexer_next(qg_lexer *lx, qg_token *tok);
QG_API void qg_lexer_free(qg_lexer *lx);

/* ----------------------------------------------------------------- checker */

/* Checks one query; fills *result (may be NULL) and returns the verdict. */
QG_API qg_verdict qg_check(const qg_context *ctx, const char *sql, size_t len, qg_result *result);

#ifdef __cplusplus
}
#endif
#endif
