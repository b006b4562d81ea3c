/* The strings floor (strings_floor.h).  Built with the baseline flags: the
 * vector scans carry their own target attributes and run only where
 * strings_floor_for hands them out, on a CPU that runs that build of the
 * checker (AVX2 with BMI2 and PCLMUL: such CPUs have BMI1 and POPCNT). */
#include "strings_floor.h"

#include <string.h>

#include "lexer_internal.h"
#include "scan_lanes.h"

uint64_t strings_floor_bytewise(const unsigned char *s, size_t len)
{
    uint64_t closed = 0;
    bool in_string = false, escaped = false;
    for (size_t i = 0; i < len; i++) {
        if (escaped) {
            escaped = false;
        } else if (s[i] == '\\') {
            if (!in_string)
                return STRINGS_FLOOR_GAVE_UP;
            escaped = true;
        } else if (s[i] == '\'') {
            in_string = !in_string;
            closed += !in_string;
        }
    }
    return closed;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

typedef struct floor_state {
    uint64_t open;    /* all ones while a string is open at the block's start */
    uint64_t carry;   /* 1: the block's first byte is escaped */
    uint64_t closed;  /* strings closed so far */
    uint64_t gave_up; /* non-zero: a backslash in code */
} floor_state;

/* One 64-byte block, from its quotes and backslashes (bit i: byte i). */
static inline __attribute__((target("bmi,pclmul,popcnt"), always_inline)) void
floor_block(floor_state *st, uint64_t quote, uint64_t backslash)
{
    /* Each mask moved to a general register once: else the optimiser
     * moves one up to three times, or turns the escaped quotes into a
     * masked compare that waits for the backslashes' move and back. */
    __asm__("" : "+r"(quote), "+r"(backslash));
    /* Each backslash escapes the next byte while none follows another;
     * a run of them escapes the byte after it when it is odd: the odd and
     * even starts' carries (scan_lanes.h), where a block holds one. */
    uint64_t escaped;
    if (!(backslash & (backslash << 1 | st->carry))) {
        escaped = backslash << 1 | st->carry;
        st->carry = backslash >> 63;
    } else {
        escaped = escaped_bytes(backslash, &st->carry);
    }
    quote &= ~escaped;
    /* Bit i set when the quotes at or below i are odd: a carry-less
     * product with all ones. */
    __m128i product = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)quote),
                                           _mm_set1_epi8((char)0xff), 0);
    uint64_t in_string = (uint64_t)_mm_cvtsi128_si64(product) ^ st->open;
    st->gave_up |= backslash & ~in_string;
    st->closed += (uint64_t)__builtin_popcountll(quote & ~in_string);
    st->open = 0 - (in_string >> 63);
}

static uint64_t floor_result(const floor_state *st)
{
    return st->gave_up ? STRINGS_FLOOR_GAVE_UP : st->closed;
}

static inline __attribute__((target("avx2,bmi,pclmul,popcnt"), always_inline)) void
avx2_block(floor_state *st, const unsigned char *p)
{
    const __m256i quote = _mm256_set1_epi8('\''), backslash = _mm256_set1_epi8('\\');
    __m256i lo = _mm256_loadu_si256((const __m256i *)p);
    __m256i hi = _mm256_loadu_si256((const __m256i *)(p + 32));
    uint64_t q = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, quote)) |
                 (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, quote)) << 32;
    uint64_t b = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, backslash)) |
                 (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, backslash)) << 32;
    floor_block(st, q, b);
}

__attribute__((target("avx2,bmi,pclmul,popcnt"))) static uint64_t
strings_floor_avx2(const unsigned char *s, size_t len)
{
    floor_state st = {0, 0, 0, 0};
    size_t i = 0;
    for (; i + 64 <= len; i += 64)
        avx2_block(&st, s + i);
    if (i < len) {
        unsigned char last[64];
        memset(last, ' ', sizeof last);
        memcpy(last, s + i, len - i);
        avx2_block(&st, last);
    }
    return floor_result(&st);
}

static inline __attribute__((target("avx512f,avx512bw,bmi,pclmul,popcnt"), always_inline)) void
avx512_block(floor_state *st, __m512i v)
{
    const __m512i quote = _mm512_set1_epi8('\''), backslash = _mm512_set1_epi8('\\');
    floor_block(st, _mm512_cmpeq_epi8_mask(v, quote), _mm512_cmpeq_epi8_mask(v, backslash));
}

__attribute__((target("avx512f,avx512bw,bmi,pclmul,popcnt"))) static uint64_t
strings_floor_avx512(const unsigned char *s, size_t len)
{
    floor_state st = {0, 0, 0, 0};
    size_t i = 0;
    for (; i + 64 <= len; i += 64)
        avx512_block(&st, _mm512_loadu_si512(s + i));
    if (i < len) /* masked: no byte past the end is read */
        avx512_block(&st, _mm512_mask_loadu_epi8(_mm512_set1_epi8(' '), (1ull << (len - i)) - 1,
                                                 s + i));
    return floor_result(&st);
}

strings_floor_fn strings_floor_for(int build)
{
    if (build == QG_VECTORS_AVX512)
        return strings_floor_avx512;
    if (build == QG_VECTORS_AVX2)
        return strings_floor_avx2;
    return NULL;
}
#else
strings_floor_fn strings_floor_for(int build)
{
    (void)build;
    return NULL;
}
#endif
