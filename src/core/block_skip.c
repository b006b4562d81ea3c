/*
 * The block skip (lexer_internal.h, qg_lexer_skip_quiet): 64 bytes at a
 * time, string literals found by the parity of their quotes, multibyte
 * string bodies checked by the validators (multibyte_blocks.h), the lexer
 * called only where something other than code and plain strings begins.
 * Built twice: with SSE2 (16-byte lanes) as qg_skip_quiet_sse2 and,
 * compiled with -mavx2 (with PCLMUL for the quote parity and BMI2's shift
 * for the automaton), with 32-byte lanes as qg_skip_quiet_avx2, which also
 * counts characters for the rewriter's padding with the same validators
 * (qg_count_chars_avx2).  Each build's lanes and names are in its header
 * (simd_sse2.h, simd_avx2.h); src/core/vectors.c puts each build's
 * functions in its table and picks the widest build the CPU runs.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "block_scalar.h"
#include "encoding_tables.h"
#include "hot.h"
#include "lexer_internal.h"
#include "multibyte_blocks.h"
#include "quoteguard.h"
#include "scan_lanes.h"

#ifdef SKIP_QUIET
/* Bit i of each mask stands for byte i of a 64-byte block. */
typedef struct block_masks {
    uint64_t quote;     /* ' */
    uint64_t backslash; /* \ */
    uint64_t bad;       /* NUL (and high bytes unless `high`): the lexer reads them */
    uint64_t special;   /* starts something other than a string when in code */
    uint64_t high;      /* high bytes, when counted apart */
} block_masks;

/* Masks of the 64 bytes in v[]; `after` is the byte that follows them (a
 * space at the end of the input), which completes the pairs "--" and
 * slash-star.  The following bytes are shifted in from the registers, so
 * that no load straddles what was just stored. */
static inline __attribute__((always_inline)) block_masks
classify_block(const needles *n, const lane_t v[LANES], unsigned char after, bool pg,
               bool high_apart)
{
    block_masks m = {0, 0, 0, 0, 0};
#pragma GCC unroll 4
    for (int i = 0; i < LANES; i++) {
        unsigned shift = (unsigned)(LANE * i);
        lane_t next = next_bytes(v[i], i + 1 < LANES ? v[i + 1] : one_byte(after));
        lane_t pairs = or_lanes(and_lanes(eq(v[i], needle(n, DASH)), eq(next, needle(n, DASH))),
                                and_lanes(eq(v[i], needle(n, SLASH)), eq(next, needle(n, STAR))));
        m.quote |= bits_of(eq(v[i], needle(n, QUOTE))) << shift;
        m.backslash |= bits_of(eq(v[i], needle(n, BACKSLASH))) << shift;
        lane_t bad = eq(v[i], needle(n, NUL));
        if (high_apart)
            m.high |= bits_of(v[i]) << shift; /* the top bit of each byte */
        else
            bad = or_lanes(bad, v[i]);
        m.bad |= bits_of(bad) << shift;
        lane_t others = pg ? eq(v[i], needle(n, DOLLAR))
                           : or_lanes(eq(v[i], needle(n, BACKTICK)), eq(v[i], needle(n, HASH)));
        m.special |= bits_of(or_lanes(or_lanes(pairs, eq(v[i], needle(n, DQUOTE))), others))
                     << shift;
    }
    return m;
}

static inline __attribute__((always_inline)) block_masks
classify_at(const needles *n, const unsigned char *p, unsigned char after, bool pg,
            bool high_apart)
{
    lane_t v[LANES];
    for (size_t i = 0; i < LANES; i++)
        v[i] = load_lane(p + LANE * i);
    return classify_block(n, v, after, pg, high_apart);
}

/* The masks of the `valid` (1..64) bytes from p to the end of the input
 * at s + len, bit 0 for p[0] and none past the end.  When the input holds
 * a whole block, its last 64 bytes are read and the masks shifted; else
 * the bytes are copied into a block of spaces. */
static inline __attribute__((always_inline)) block_masks
classify_last_block(const needles *n, const unsigned char *s, size_t len, const unsigned char *p,
                    size_t valid, bool pg, bool high_apart)
{
    if (len >= BLOCK) {
        block_masks m = classify_at(n, s + len - BLOCK, ' ', pg, high_apart);
        unsigned shift = (unsigned)(BLOCK - valid);
        return (block_masks){m.quote >> shift, m.backslash >> shift, m.bad >> shift,
                             m.special >> shift, m.high >> shift};
    }
    unsigned char tail[BLOCK];
    memset(tail, ' ', sizeof tail);
    memcpy(tail, p, valid);
    return classify_at(n, tail, ' ', pg, high_apart);
}

#ifdef __AVX2__
/* qg_count_chars (lexer_internal.h).  Flattened: utf8_valid inlined with
 * these constant arguments takes less time (docs/PERFORMANCE.md, "Choices
 * in the code"). */
__attribute__((flatten)) size_t COUNT_CHARS(const encoding_dfa_t *dfa, const unsigned char *s,
                                            size_t pos, size_t limit, size_t *chars)
{
    if (!dfa->pairs && !dfa->utf8)
        return pos;
    uint64_t state = 0;
    size_t n = *chars;
    for (; limit - pos >= BLOCK; pos += BLOCK) {
        const unsigned char *p = s + pos;
        uint64_t high = 0, follow = 0, after = state;
        for (size_t i = 0; i < LANES; i++)
            high |= bits_of(load_lane(p + LANE * i)) << (LANE * i);
        if (dfa->pairs ? !pairs_valid(dfa, s, limit, pos, ~0ull, high, 0, 0, false, &after, &follow)
                       : !utf8_valid(dfa, s, limit, pos, ~0ull, high, 0, false, &after))
            break;
        if (dfa->utf8)
            follow = continuations(p);
        n += BLOCK - (size_t)__builtin_popcountll(follow);
        state = after;
    }
    if (state) {
        pos -= open_bytes(dfa, s + pos, state); /* counted where it began */
        n--;
    }
    *chars = n;
    return pos;
}
#endif

#ifdef __AVX2__
/* A pair encoding's sets, in lanes, for the copy read as letters. */
typedef struct pair_sets {
    set_rows lead, trail, single;
    lane_t nibble;
} pair_sets;

/* What a block of that copy leaves to the next. */
typedef struct letters_carry {
    uint64_t chars; /* quads: the automaton's state; else 1 when bit 0 is a trail */
    uint64_t high, plain, trail_backslash; /* the block's last byte is such a byte */
    uint64_t any_high;
} letters_carry;

/* One block of the copy: the 64 bytes at p, whose bits from `shift` on
 * are the text's from pos (`live`: those before its end); `whole`: p is
 * the text at pos, copied here as it is read. */
static inline __attribute__((always_inline)) bool
letters_block(const encoding_dfa_t *dfa, const pair_sets *sets, const unsigned char *s, size_t len,
              size_t pos, const unsigned char *p, unsigned shift, uint64_t live, unsigned char *copy,
              bool whole, bool quads, letters_carry *c)
{
    const needles *n = needle_table();
    lane_t v[LANES];
    uint64_t high = 0;
#pragma GCC unroll 4
    for (size_t i = 0; i < LANES; i++) {
        v[i] = load_lane(p + LANE * i);
        if (whole)
            _mm256_storeu_si256((__m256i *)(copy + pos + LANE * i), v[i]);
        high |= bits_of(v[i]) << (LANE * i);
    }
    high >>= shift;
    if (!(high | c->chars | c->high | c->trail_backslash)) {
        /* ASCII, with nothing the block before left open */
        c->plain = p[BLOCK - 1] == '\\';
        return true;
    }
    uint64_t backslash = 0, leads = 0, trails = 0, trail = 0;
#pragma GCC unroll 4
    for (size_t i = 0; i < LANES; i++) {
        unsigned at = (unsigned)(LANE * i);
        lane_t low = and_lanes(v[i], sets->nibble);
        lane_t high_nibble = and_lanes(nibbles_down(v[i]), sets->nibble);
        backslash |= eq_bits(v[i], needle(n, BACKSLASH)) << at;
        if (!quads) {
            leads |= lane_in_set(sets->lead, low, high_nibble) << at;
            trails |= lane_in_set(sets->trail, low, high_nibble) << at;
        }
    }
    backslash = (backslash >> shift) & live;
    if (quads) {
        /* (no quotes: it reads them only where S reads escapes) */
        if (!pairs_valid(dfa, s, len, pos, live, high, 0, backslash, false, &c->chars, &trail))
            return false;
        trail &= live;
    } else {
        /* a lead must be followed by a trail, and a high byte that is
         * neither must be a character alone */
        leads = (leads >> shift) & live;
        uint64_t lead = pair_leads(leads, c->chars);
        trail = lead << 1 | c->chars;
        if (trail & ~((trails >> shift) & live))
            return false;
        uint64_t alone = high & ~leads & ~trail, single = 0;
        if (alone) {
#pragma GCC unroll 4
            for (size_t i = 0; i < LANES; i++)
                single |= lane_in_set(sets->single, and_lanes(v[i], sets->nibble),
                                      and_lanes(nibbles_down(v[i]), sets->nibble))
                          << (LANE * i);
            if (alone & ~(single >> shift))
                return false;
        }
        c->chars = lead >> 63;
    }
    /* A backslash of its own next to a high byte; a trail 0x5c before
     * a quote or a backslash (the next block's first byte is bit 0 of
     * its masks, through the carries).  Most blocks hold neither kind:
     * the backslashes of their own are tested only where there are some,
     * the quotes looked for only where a trail 0x5c may stand before
     * one. */
    uint64_t plain = backslash & ~trail, trail_backslash = backslash & trail;
    if ((plain | c->plain) &&
        (((high << 1 | c->high) & plain) | ((plain << 1 | c->plain) & high)))
        return false;
    uint64_t before_quote = trail_backslash << 1 | c->trail_backslash;
    if (before_quote) {
        uint64_t quote = 0;
#pragma GCC unroll 4
        for (size_t i = 0; i < LANES; i++)
            quote |= eq_bits(v[i], needle(n, QUOTE)) << (LANE * i);
        if (before_quote & ((quote >> shift) | backslash))
            return false;
    }
    uint64_t ascii_trail = trail & ~high;
#pragma GCC unroll 4
    for (size_t i = 0; ascii_trail && i < LANES; i++) {
        unsigned char *q = copy + pos + LANE * i;
        lane_t ones = bytes_of_bits((uint32_t)(ascii_trail >> (LANE * i)));
        _mm256_storeu_si256((__m256i *)q, or_lanes(load_lane(q), ones));
    }
    c->any_high |= high;
    c->high = high >> 63;
    c->plain = plain >> 63;
    c->trail_backslash = trail_backslash >> 63;
    return true;
}

/* The copy qg_only_plain_strings_as_letters reads in a pair encoding
 * (lexer_internal.h): 64 bytes at a time, the pairs found by the runs of
 * bytes that may lead a character (pair_leads), GB18030's four bytes by
 * pairs_valid; the text's last character must be whole.  Each block is
 * copied as it is read, and its trail bytes below 0x80 made 0xff in the
 * copy.  The last block is read apart, so that the others need no shift
 * nor mask: the text's last 64 bytes, else its bytes in a block of spaces,
 * copied first, whole, into the copy's room past the text's end, where the
 * blocks before then write their own bytes.  The sets are read once a
 * text: the copy's stores could change them, to the compiler, which would
 * read them again each block (docs/PERFORMANCE.md, "Choices in the
 * code"). */
static inline __attribute__((always_inline)) bool
pair_letters(const encoding_dfa_t *dfa, const unsigned char *s, size_t len, unsigned char *copy,
             bool quads)
{
    if (!len)
        return false;
    unsigned char tail[BLOCK];
    const unsigned char *last = s + len - BLOCK;
    size_t last_at = len - BLOCK;
    if (len < BLOCK) {
        memset(tail, ' ', sizeof tail);
        memcpy(tail, s, len); /* before the lanes: a call would leave them to the stack */
        last = tail;
        last_at = 0;
    }
    for (size_t i = 0; i < LANES; i++)
        _mm256_storeu_si256((__m256i *)(copy + last_at + LANE * i), load_lane(last + LANE * i));
    pair_sets sets = {set_rows_of(&dfa->lead), set_rows_of(&dfa->trail),
                      set_rows_of(&dfa->single), needle(needle_table(), LOW_NIBBLE)};
    letters_carry c = {0, 0, 0, 0, 0};
    size_t pos = 0;
    for (; len - pos > BLOCK; pos += BLOCK)
        if (!letters_block(dfa, &sets, s, len, pos, s + pos, 0, ~0ull, copy, true, quads, &c))
            return false;
    size_t valid = len - pos;
    unsigned shift = len < BLOCK ? 0 : (unsigned)(BLOCK - valid);
    uint64_t live = valid == BLOCK ? ~0ull : (1ull << valid) - 1;
    if (!letters_block(dfa, &sets, s, len, pos, last, shift, live, copy, false, quads, &c))
        return false;
    /* chars: the text ends inside a character */
    return c.any_high && !c.chars;
}

bool PAIR_LETTERS(const encoding_dfa_t *dfa, const unsigned char *s, size_t len,
                  unsigned char *copy)
{
    return dfa->quads ? pair_letters(dfa, s, len, copy, true)
                      : pair_letters(dfa, s, len, copy, false);
}
#endif

/* The quotes of a block that open a string not right after a closing one
 * (the first quote of a chain of doubled quotes); *continued: those that
 * open right after one (closed_carry: the block before ended with one). */
static inline uint64_t chain_quotes(uint64_t quotes, uint64_t inside, uint64_t closed_carry,
                                    uint64_t *continued)
{
    uint64_t openers = quotes & inside;
    *continued = openers & (((quotes & ~inside) << 1) | closed_carry);
    return openers & ~*continued;
}

/* For the checker, which looks for a backslash pair (qg_next_backslash_pair)
 * in the whole text, the skip notes where it looked (lx->pairs_to: all of
 * [0, pairs_to)) and what it found (lx->backslash_pair).  Here: the bytes
 * up to `to` that no block read (the lexer's, a comment skipped whole). */
static inline void note_pairs_before(qg_lexer *lx, size_t to)
{
    if (lx->pairs_to < to) {
        lx->backslash_pair = lx->backslash_pair ||
                             qg_next_backslash_pair(lx->sql, lx->pairs_to, to, lx->len) < to;
        lx->pairs_to = to;
    }
}

/* And that it read the block of `valid` bytes at pos, and all blocks
 * since the last note. */
static inline void note_pairs_read(qg_lexer *lx, size_t pos, size_t valid)
{
    size_t end = pos + (valid < BLOCK ? valid : BLOCK);
    if (end > lx->pairs_to)
        lx->pairs_to = end;
}

/* And a block's `valid` bytes at pos that hold a backslash, by their masks
 * (`high` counted apart); the caller notes that it read up to the block's
 * end. */
static inline __attribute__((always_inline)) void
note_pairs_in_block(qg_lexer *lx, size_t pos, size_t valid, const block_masks *m, uint64_t live)
{
    const unsigned char *s = lx->sql;
    uint64_t after_high = (m->high << 1 | (pos > 0 && s[pos - 1] >= 0x80)) & m->backslash & live;
    if (!after_high)
        return; /* the common case: escapes after ASCII bytes */
    /* The byte after the block only for a backslash at its end. */
    if ((after_high & (m->backslash | m->quote) >> 1) ||
        ((after_high >> 63) && valid > BLOCK &&
         (s[pos + BLOCK] == '\\' || s[pos + BLOCK] == '\'')))
        lx->backslash_pair = true;
}

/* Where backslashes escape, whether a block's last byte, a backslash the
 * server reads as `last` says, parts the readings with the byte after it,
 * `next` (the first of the next block, whose masks take N's escape of it
 * from the carry, and S's as N's).  As a trail byte, N escapes next and S
 * does not: they part at a quote or a backslash.  Else both escape it:
 * the server must not escape a character (a high byte), and a backslash
 * would start the next block inside a run whose escapes S reads from
 * here.  Unknown: any of these. */
static inline bool last_backslash_parts(last_byte last, unsigned char next)
{
    bool quote_or_backslash = next == '\'' || next == '\\';
    switch (last) {
    case LAST_TRAIL:
        return quote_or_backslash;
    case LAST_NOT_TRAIL:
        return next == '\\' || next >= 0x80;
    default:
        return quote_or_backslash || next >= 0x80;
    }
}

/* A whole block inside a string opened before it, with no quote and no
 * NUL (the case of every block of a long literal but its last): read with
 * what skip_quiet_blocks would find of it and nothing more, so that the
 * block's bytes need no classes but quote, NUL, backslash and high.  True
 * where such a block passes, with the state it leaves (*escape_carry,
 * *chars, *open_introduced_asked; the chain of doubled quotes is closed);
 * false, nothing changed, for skip_quiet_blocks to read it.
 * `opener_prefixed`: the open string's first quote follows a prefix that
 * changes how it reads backslashes (qg_quotes_after_prefix), which a
 * backslash anywhere in the string makes the lexer's. */
static inline __attribute__((always_inline)) bool
string_body_block(qg_lexer *lx, const needles *n, size_t pos, bool pg, bool mb, bool escapes,
                  bool opener_prefixed, uint64_t *escape_carry, uint64_t *chars,
                  bool *open_introduced_asked)
{
    const unsigned char *s = lx->sql, *p = s + pos;
    uint64_t stop = 0, backslash = 0, high = 0;
#pragma GCC unroll 4
    for (size_t i = 0; i < LANES; i++) {
        unsigned shift = (unsigned)(LANE * i);
        lane_t v = load_lane(p + LANE * i);
        stop |= bits_of(or_lanes(eq(v, needle(n, QUOTE)), eq(v, needle(n, NUL)))) << shift;
        backslash |= eq_bits(v, needle(n, BACKSLASH)) << shift;
        high |= bits_of(v) << shift;
    }
    /* without `mb` a high byte is the lexer's; MySQL asks once a string
     * whether an introducer names its character set */
    bool introducers_asked = !pg && mb && high;
    if (stop || (high && !mb) || (backslash && opener_prefixed) ||
        (introducers_asked && !*open_introduced_asked))
        return false;
    uint64_t carry = *escape_carry, escaped = 0;
    if (backslash || carry) {
        if (!escapes && !(backslash >> 63))
            carry = 0; /* N escapes no quote here nor in the next block */
        else
            escaped = escaped_bytes(backslash, &carry);
    }
    uint64_t chars_after = *chars;
    last_byte last = LAST_NOT_TRAIL;
    if (mb && !strings_valid(lx->dfa, s, p, lx->len - pos, ~0ull, high, 0, backslash, escapes,
                             escaped, &chars_after, &last))
        return false;
    if (escapes && (backslash >> 63) && last_backslash_parts(last, p[BLOCK]))
        return false;
    if (mb && backslash) {
        block_masks m = {.backslash = backslash, .high = high};
        note_pairs_in_block(lx, pos, lx->len - pos, &m, ~0ull);
    }
    *escape_carry = carry;
    *chars = chars_after;
    *open_introduced_asked = *open_introduced_asked || introducers_asked;
    return true;
}

#ifdef __AVX2__
/* string_body_block for the blocks from pos on while each passes, in a
 * pair encoding (not GB18030, whose four-byte characters pairs_valid
 * reads apart): the body's lanes read once for their masks and their
 * characters, the sets' rows loaded once for the string, the pairs as
 * pairs_valid finds them with nothing of the string outside the block.
 * Its quotes may be those that leave the string open, as
 * skip_quiet_blocks reads them: in PG where backslashes do not escape,
 * doubled ones (a continuation's quotes, which no prefix rules); in MySQL
 * where they do, escaped ones (*escaped_quotes: their parity, where the
 * lexer counts them).  Returns how many blocks passed; the state they
 * leave as there. */
static inline __attribute__((always_inline)) size_t
pair_body_blocks(qg_lexer *lx, const needles *n, size_t pos, bool pg, bool escapes,
                 bool opener_prefixed, uint64_t *escape_carry, uint64_t *chars,
                 bool *open_introduced_asked, unsigned *escaped_quotes)
{
    const encoding_dfa_t *dfa = lx->dfa;
    uint64_t state = *chars;
    if (dfa->ambiguous && state >= dfa->ambiguous)
        state -= dfa->ambiguous; /* the twin of a state reads on as it */
    if (state && state != dfa->after_lead)
        return 0;
    const unsigned char *s = lx->sql;
    size_t len = lx->len, start = pos;
    set_rows lead_rows = set_rows_of(&dfa->lead), trail_rows = set_rows_of(&dfa->trail);
    lane_t nibble = needle(n, LOW_NIBBLE);
    uint64_t lead_carry = state != 0, carry = *escape_carry;
    bool introducers_asked = *open_introduced_asked;
    unsigned quote_parity = *escaped_quotes;
    for (; len - pos > BLOCK; pos += BLOCK) {
        const unsigned char *p = s + pos;
        uint64_t quote = 0, nul = 0, backslash = 0, high = 0, leads = 0, trails = 0;
#pragma GCC unroll 4
        for (size_t i = 0; i < LANES; i++) {
            unsigned shift = (unsigned)(LANE * i);
            lane_t v = load_lane(p + LANE * i);
            quote |= eq_bits(v, needle(n, QUOTE)) << shift;
            nul |= eq_bits(v, needle(n, NUL)) << shift;
            backslash |= eq_bits(v, needle(n, BACKSLASH)) << shift;
            high |= bits_of(v) << shift;
            lane_t low = and_lanes(v, nibble), high_nibble = and_lanes(nibbles_down(v), nibble);
            leads |= lane_in_set(lead_rows, low, high_nibble) << shift;
            trails |= lane_in_set(trail_rows, low, high_nibble) << shift;
        }
        if (nul || (backslash && opener_prefixed) || (!pg && high && !introducers_asked))
            break;
        uint64_t lead = pair_leads(leads, lead_carry);
        uint64_t trail = lead << 1 | lead_carry;
        uint64_t alone = high & ~leads & ~trail;
        if ((trail & ~trails) || (alone && (alone & ~set_bits(&dfa->single, p))))
            break;
        uint64_t block_carry = carry, escaped = 0;
        if (backslash || block_carry) {
            if (!escapes && !(quote & (backslash << 1 | block_carry)) && !(backslash >> 63))
                block_carry = 0;
            else
                escaped = escaped_bytes(backslash, &block_carry);
        }
        /* PG's doubled quotes: runs of an even length, the block's last
         * byte none; MySQL's escaped ones: each escaped (N's reading, as
         * the general loop takes it where backslashes escape) */
        if (quote && (escapes ? pg || (quote & ~escaped)
                              : !pg || (quote & escaped) || (quote >> 63) ||
                                    (prefix_xor(quote) & ~quote)))
            break;
        if (escapes && ((((trail & backslash) << 1) & (quote | backslash)) ||
                        (escaped_by(backslash & ~trail, 0) & high) ||
                        ((backslash >> 63) &&
                         last_backslash_parts(trail >> 63 ? LAST_TRAIL : LAST_NOT_TRAIL,
                                              p[BLOCK]))))
            break;
        if (backslash) {
            block_masks m = {.quote = quote, .backslash = backslash, .high = high};
            note_pairs_in_block(lx, pos, len - pos, &m, ~0ull);
        }
        if (lx->watch_escaped_quotes && escapes)
            quote_parity ^= (unsigned)__builtin_parityll(quote);
        carry = block_carry;
        lead_carry = lead >> 63;
        introducers_asked = introducers_asked || (!pg && high);
    }
    if (pos == start)
        return 0;
    *escape_carry = carry;
    *chars = lead_carry ? dfa->after_lead : 0;
    *open_introduced_asked = introducers_asked;
    *escaped_quotes = quote_parity;
    return (pos - start) / BLOCK;
}
#endif

/* Advances from lx->pos (in code) block by block while nothing in the
 * blocks needs the lexer.  Where something does, the lexer goes on from the
 * last code byte before it outside every string token (an anchor): a quote
 * may double the one before it, and in PG a string continues one before it
 * across whitespace with a newline, so the lexer must read whole tokens.
 * lx->quiet_from keeps later calls from scanning the same bytes again. */
static inline __attribute__((always_inline)) void skip_quiet_blocks(qg_lexer *lx, bool pg,
                                                                    bool mb, bool escapes)
{
    const unsigned char *s = lx->sql;
    size_t len = lx->len, start = lx->pos, pos = start;
    size_t anchor = pos;    /* the last anchor so far */
    uint64_t in_string = 0; /* all ones while a string is open at the block start */
    uint64_t chars = 0;     /* mb: automaton state, inside a character across blocks */
    size_t open_quote = 0;  /* in_string: where that string opened */
    /* PG: a doubled quote closes a string and opens its continuation: the
     * prefix that rules the whole string is the one before the first quote
     * of the chain (an opening quote not right after a closing one), the
     * last of which so far is chain_opener.  closed_carry: the block
     * before ended with a closing quote (not known for the first block: its
     * first quote's byte before is looked at as for any quote).  PG's
     * escapers double quotes; MySQL's put a backslash before them, and
     * there a quote right after a quote is left to the lexer, which saves
     * following the chains in every block (docs/PERFORMANCE.md, "Choices
     * in the code"). */
    size_t chain_opener = 0;
    uint64_t closed_carry = 0;
    /* MySQL mb: qg_introduced_quotes has passed open_quote already, so the
     * blocks the string goes on into need not ask again. */
    bool open_introduced_asked = false;
    uint64_t escape_carry = 0; /* 1: N escapes the block's first byte */
    /* Where the lexer counts quotes escaped by a backslash (a quote
     * doubler's literal ends there): their parity at pos and at anchor. */
    unsigned escaped_quotes = lx->escaped_quotes & 1, anchor_escaped = escaped_quotes;
    /* MySQL: after an odd number of double quotes escaped by a backslash
     * (in "" strings, the lexer's), a quote doubler's "" literal is open,
     * and the next single-quoted string may show where it ends
     * (doubler_sees_literal in src/core/lexer.c): the lexer reads on up to
     * that string.  Where no double quote follows, none ends it. */
    if ((lx->escaped_quotes & 2) && lx->findings && !lx->doubler_parts) {
        if (qg_quote_after(s, len, start, 2))
            return;
        lx->escaped_quotes &= ~2u;
    }
    const needles *n = needle_table();
    if (mb)
        note_pairs_before(lx, start);
    /* qg_quotes_after_prefix of the open string's opener, asked once */
    size_t prefix_asked_of = SIZE_MAX;
    bool opener_prefixed = false;
    for (;;) {
        const unsigned char *p = s + pos;
        size_t valid = len - pos;
        if (in_string && valid > BLOCK) {
            size_t opener = pg ? chain_opener : open_quote;
            if (opener != prefix_asked_of) {
                opener_prefixed = qg_quotes_after_prefix(s, opener, 1, escapes) != 0;
                prefix_asked_of = opener;
            }
#ifdef __AVX2__
            size_t passed = mb && lx->dfa->pairs && !lx->dfa->quads
                                ? pair_body_blocks(lx, n, pos, pg, escapes, opener_prefixed,
                                                   &escape_carry, &chars, &open_introduced_asked,
                                                   &escaped_quotes)
                                : 0;
            if (passed) {
                closed_carry = 0;
                pos += passed * BLOCK;
                continue;
            }
#endif
            if (string_body_block(lx, n, pos, pg, mb, escapes, opener_prefixed, &escape_carry,
                                  &chars, &open_introduced_asked)) {
                closed_carry = 0;
                pos += BLOCK;
                continue;
            }
        }
        uint64_t chars_before = chars;
        block_masks m = valid > BLOCK ? classify_at(n, p, p[BLOCK], pg, mb)
                                      : classify_last_block(n, s, len, p, valid, pg, mb);
        uint64_t live = valid >= BLOCK ? ~0ull : (1ull << valid) - 1;
        uint64_t quotes = m.quote, bad = m.bad, escaped = 0, backslash = m.backslash & live;
        if (backslash || escape_carry) {
            if (!escapes && !(quotes & (backslash << 1 | escape_carry)) && !(backslash >> 63)) {
                /* S reads backslashes literally, and N escapes no quote
                 * here (none follows one) nor the next block's first byte:
                 * the common case, Shift_JIS trail bytes. */
                escape_carry = 0;
            } else {
                /* N takes every backslash as an escape; S too where
                 * `escapes`. */
                escaped = escaped_bytes(backslash, &escape_carry);
                if (escapes) {
                    /* Escaped quotes do not count (as N reads them;
                     * strings_valid finds where S reads a trail byte
                     * otherwise, within a block; a backslash at its end
                     * with the byte after it by last_backslash_parts, and
                     * at the text's end by the lexer). */
                    quotes &= ~escaped;
                    if (valid <= BLOCK)
                        bad |= m.backslash & (1ull << 63);
                } else {
                    /* S reads them literally: the readings agree while N
                     * escapes no quote, in this block or the next. */
                    bad |= quotes & escaped;
                }
            }
        }
        uint64_t escaped_quote = lx->watch_escaped_quotes && escapes ? m.quote & escaped & live : 0;
        uint64_t inside = prefix_xor(quotes) ^ in_string;
        if (backslash) {
            if (mb)
                note_pairs_in_block(lx, pos, valid, &m, live);
            /* Strings of other rules are the lexer's.  The quotes are right
             * up to the first string that opens after such a prefix; a
             * doubled quote's continuation is ruled by its chain's first
             * quote, in this block or (before the first one here) earlier. */
            uint64_t continued = 0, chain_starts = quotes & inside & live;
            if (pg)
                chain_starts = chain_quotes(quotes & live, inside, closed_carry, &continued);
            bad |= qg_quotes_after_prefix(s, pos, chain_starts, escapes);
            uint64_t inherited = continued & ((chain_starts & -chain_starts) - 1);
            if ((in_string || inherited) &&
                qg_quotes_after_prefix(s, pg ? chain_opener : open_quote, 1, escapes))
                bad |= 1; /* the string open since a block before */
        }
        bool introducers_asked = !pg && mb && (m.high & inside & live);
        if (introducers_asked) {
            bad |= qg_introduced_quotes(s, pos, quotes & inside & live);
            if (in_string && !open_introduced_asked && qg_introduced_quotes(s, open_quote, 1))
                bad |= 1;
        }
        uint64_t problem = (bad | ((m.special | m.high | m.backslash) & ~inside)) & live;
        uint64_t anchors = ~inside & ~m.quote & ~m.special & ~bad & ~m.high & ~m.backslash;
        if (problem && !((inside >> __builtin_ctzll(problem)) & 1)) {
            /* A plain comment in code: skipped, once the strings before
             * it are found valid; the blocks go on after it. */
            unsigned at = (unsigned)__builtin_ctzll(problem);
            uint64_t ahead = (1ull << at) - 1;
            size_t after = qg_comment_end(s, len, pos + at, start, pg);
            last_byte unused;
            if (after && (!mb || strings_valid(lx->dfa, s, p, valid, inside & ~quotes & ahead,
                                               m.high & ahead, m.quote, m.backslash, escapes,
                                               escaped & ahead, &chars, &unused))) {
                escaped_quotes ^= parity_below(escaped_quote, at);
                unsigned kinds = escaped_quotes | (lx->escaped_quotes & 2);
                if (kinds && lx->findings && qg_quote_after(s, len, pos + at, kinds))
                    lx->doubler_parts = true; /* as doubler_sees_literal in src/core/lexer.c */
                if (mb) {
                    note_pairs_read(lx, pos, valid);
                    note_pairs_before(lx, after < len ? after : len);
                }
                if (after >= len) {
                    lx->pos = len;
                    lx->quiet_from = len + 1;
                    return;
                }
                pos = anchor = after;
                anchor_escaped = escaped_quotes;
                in_string = escape_carry = closed_carry = 0;
                continue;
            }
        }
        /* Multibyte text is checked only in blocks that pass: else the
         * lexer goes on before its first high byte. */
        last_byte last = LAST_NOT_TRAIL;
        if (mb && (problem || !strings_valid(lx->dfa, s, p, valid, inside & ~quotes & live,
                                             m.high & live, m.quote, m.backslash, escapes, escaped,
                                             &chars, &last)))
            problem |= (m.high & live) | (chars_before ? 1 : 0); /* 1: a character from the block before */
        if (escapes && !problem && valid > BLOCK && (m.backslash >> 63) &&
            last_backslash_parts(last, p[BLOCK]))
            problem = 1ull << 63;
        if (!problem && valid > BLOCK) {
            if (anchors) {
                anchor = last_bit(pos, anchors);
                anchor_escaped = escaped_quotes ^ parity_below(escaped_quote, (unsigned)(anchor - pos));
            }
            escaped_quotes ^= parity_below(escaped_quote, BLOCK);
            in_string = (inside >> 63) ? ~0ull : 0;
            if (in_string && quotes) /* its quote is the block's last */
                open_quote = last_bit(pos, quotes);
            if (pg && quotes) {
                uint64_t continued, chain_starts = chain_quotes(quotes, inside, closed_carry, &continued);
                if (chain_starts)
                    chain_opener = last_bit(pos, chain_starts);
                closed_carry = (quotes & ~inside) >> 63;
            } else {
                closed_carry = 0;
            }
            open_introduced_asked = introducers_asked || (open_introduced_asked && !quotes);
            pos += BLOCK;
            continue;
        }
        /* The first problem, or the end of the input: there in code, the
         * lexer has nothing left to read. */
        unsigned stop = problem ? (unsigned)__builtin_ctzll(problem) : (unsigned)valid;
        bool open = (inside >> (problem ? stop : stop - 1)) & 1; /* valid >= 1 */
        uint64_t before = stop == BLOCK ? ~0ull : (1ull << stop) - 1;
        if (anchors & before) {
            anchor = last_bit(pos, anchors & before);
            anchor_escaped = escaped_quotes ^ parity_below(escaped_quote, (unsigned)(anchor - pos));
        }
        if (!problem && !open) {
            lx->pos = len; /* ends in code: nothing left */
        } else {
            if (pg && in_continuation_gap(s, start, anchor)) {
                anchor = start;
                anchor_escaped = lx->escaped_quotes & 1;
            }
            lx->pos = anchor;
            lx->escaped_quotes = (lx->escaped_quotes & ~1u) | anchor_escaped;
        }
        /* Stopped at once by a high byte this skip does not read: such
         * text keeps the lexer busy for a while; leave it the next block
         * too. */
        if (mb)
            note_pairs_read(lx, pos, valid);
        size_t at = pos + stop;
        bool busy = problem && pos == start && s[at] >= 0x80;
        lx->quiet_from = at + 1 + (busy ? BLOCK : 0);
        return;
    }
}

/* Not QG_HOT: in the hot section its two builds would spread what every
 * query runs (the quick scan, the fronts) over many more pages, each one
 * more miss after a round trip (docs/PERFORMANCE.md, "Choices in the
 * code"); the statements that come here are long or need the lexer anyway. */
void SKIP_QUIET(qg_lexer *lx)
{
    /* Where ' is never a trail byte, quotes can be counted and multibyte
     * text inside strings is checked here too: as pairs where it can be,
     * else by the automaton.  Where the server reads backslash escapes in
     * plain strings, so does N: they are followed here. */
    bool pg = lx->ctx->dialect == QG_DIALECT_POSTGRES;
    bool escapes = qg_plain_strings_escape(lx->ctx);
    bool mb = lx->dfa && !lx->dfa->quote_trail;
    /* PG's multibyte text built for each reading of backslashes: where
     * they do not escape (standard_conforming_strings, the default), the
     * tests of `escapes` fold away and fewer values stay live, for more
     * code (docs/PERFORMANCE.md, "Choices in the code"). */
    if (pg && mb && !escapes)
        skip_quiet_blocks(lx, true, true, false);
    else if (pg && mb)
        skip_quiet_blocks(lx, true, true, true);
    else if (pg)
        skip_quiet_blocks(lx, true, false, escapes);
    else if (mb)
        skip_quiet_blocks(lx, false, true, escapes);
    else
        skip_quiet_blocks(lx, false, false, escapes);
}
#endif
