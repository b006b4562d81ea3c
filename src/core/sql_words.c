/* The reading of SQL code both dialects share (sql_words.h). */
#include "sql_words.h"

const unsigned char qg_char_class[256] = {
    [' '] = QG_CC_SPACE, ['\t'] = QG_CC_SPACE, ['\n'] = QG_CC_SPACE, ['\v'] = QG_CC_SPACE,
    ['\f'] = QG_CC_SPACE, ['\r'] = QG_CC_SPACE,
    ['A' ... 'Z'] = QG_CC_LETTER, ['a' ... 'z'] = QG_CC_LETTER, ['_'] = QG_CC_LETTER,
    [0x80 ... 0xff] = QG_CC_HIGH,
    ['0' ... '9'] = QG_CC_DIGIT,
    ['$'] = QG_CC_DOLLAR,
    ['+'] = QG_CC_OPERATOR, ['-'] = QG_CC_OPERATOR, ['*'] = QG_CC_OPERATOR,
    ['/'] = QG_CC_OPERATOR, ['<'] = QG_CC_OPERATOR, ['>'] = QG_CC_OPERATOR,
    ['='] = QG_CC_OPERATOR, ['~'] = QG_CC_OPERATOR, ['!'] = QG_CC_OPERATOR,
    ['#'] = QG_CC_OPERATOR, ['%'] = QG_CC_OPERATOR, ['^'] = QG_CC_OPERATOR,
    ['&'] = QG_CC_OPERATOR, ['|'] = QG_CC_OPERATOR, ['`'] = QG_CC_OPERATOR,
    ['@'] = QG_CC_AT,
    ['?'] = QG_CC_QUESTION,
    ['.'] = QG_CC_DOT,
};

/* MariaDB's sql_lex.cc (lex_one_token, MY_LEX_LONG_COMMENT) takes exactly
 * five digits, and a sixth when one follows; fewer are the body's. */
size_t qg_my_exec_comment(const unsigned char *s, size_t at, size_t len, qg_exec_comment *ec)
{
    size_t p = at + 2;
    ec->mariadb = p + 1 < len && s[p] == 'M' && s[p + 1] == '!';
    p += ec->mariadb;
    if (p >= len || s[p] != '!')
        return 0;
    p++;
    size_t digits = 0;
    unsigned long version = 0;
    while (p + digits < len && digits < 6 && qg_char_class[s[p + digits]] == QG_CC_DIGIT)
        version = version * 10 + (unsigned long)(s[p + digits++] - '0');
    ec->version = 0;
    if (digits >= 5) {
        ec->version = version;
        p += digits;
    }
    return p - at;
}

bool qg_my_exec_comment_always_runs(const qg_exec_comment *ec)
{
    return !ec->mariadb && ec->version < 50700;
}
