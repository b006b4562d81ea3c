/* The detection rule, case by case (docs/DETECTION.md). */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lexer_internal.h"
#include "pg_state.h"
#include "quoteguard.h"
#include "agree.h"
#include "tap.h"

/* The implementations of the scans (QG_VECTORS_*).  Where a vector build
 * is wider than the CPU runs, the tests run the widest it does again. */
static const char *const build_name[QG_IMPLEMENTATIONS] = {"the reference", "SSE2", "AVX2", "AVX-512"};

#define SCS_ON QG_STD_STRINGS
#define SCS_OFF 0u

/* An escaper believing gbk writes `fb \ '` for fb ' (fb 27 is no character). */
#define STEP_QUOTES_4 "\xfb\x5c'x\xfb\x5c'x\xfb\x5c'x\xfb\x5c'x"
/* ... and each followed by a doubled quote, which keeps the reading that
 * ends the literal there in step for one more token. */
#define STEP_DOUBLED_4 "\xfb\x5c'x ''\xfb\x5c'x ''\xfb\x5c'x ''\xfb\x5c'x ''"

typedef struct rule_case {
    qg_dialect dialect;
    const char *encoding;
    unsigned flags;
    const char *sql;
    qg_reason expect; /* QG_REASON_NONE: must pass clean */
    const char *why;
} rule_case;

static const rule_case cases[] = {
    /* --- must block: the PostgreSQL cases --- */
    {QG_DIALECT_POSTGRES, "SJIS", SCS_OFF, "SELECT * FROM t WHERE name = '\x95\x5c' OR 1=1 --'",
     QG_REASON_STRUCTURE_MISMATCH, "SJIS lead swallows the escaper's backslash"},
    {QG_DIALECT_POSTGRES, "SJIS", SCS_OFF,
     "SELECT * FROM t WHERE name = '\x95\x5c\x5c'' OR 1=1 --'", QG_REASON_STRUCTURE_MISMATCH,
     "SJIS, backslash doubled and quote doubled"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_OFF, "SELECT * FROM t WHERE name = '\xc8'' OR 1=1 --'",
     QG_REASON_INVALID_SEQUENCE, "UTF8 lead without continuation (CVE-2006-2313)"},
    {QG_DIALECT_POSTGRES, "LATIN1", SCS_ON, "SELECT * FROM t WHERE name = '\\' OR 1=1 --'",
     QG_REASON_STRUCTURE_MISMATCH, "addslashes output read with standard_conforming_strings on"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_ON, "SELECT * FROM t WHERE name = '\\' OR 1=1 --'",
     QG_REASON_STRUCTURE_MISMATCH, "same in UTF8"},
    {QG_DIALECT_POSTGRES, "GBK", SCS_OFF, "SELECT * FROM t WHERE name = '\xbf\x5c' OR 1=1 -- '",
     QG_REASON_STRUCTURE_MISMATCH, "GBK addslashes(\\xbf')"},
    {QG_DIALECT_POSTGRES, "BIG5", SCS_OFF, "SELECT * FROM t WHERE name = '\xa5\x5c' OR 1=1 -- '",
     QG_REASON_STRUCTURE_MISMATCH, "BIG5 a5 5c"},
    {QG_DIALECT_POSTGRES, "UHC", SCS_OFF, "SELECT * FROM t WHERE name = '\x81\x5c' OR 1=1 -- '",
     QG_REASON_INVALID_SEQUENCE, "UHC: 0x5c is no UHC trail, the pair is invalid"},
    {QG_DIALECT_POSTGRES, "GB18030", SCS_OFF,
     "SELECT * FROM t WHERE name = '\x81\x5c' OR 1=1 -- '", QG_REASON_STRUCTURE_MISMATCH,
     "GB18030 81 5c"},
    {QG_DIALECT_POSTGRES, "SHIFT_JIS_2004", SCS_ON,
     "SELECT * FROM t WHERE a = '\x95\x5c' OR 1=1 --'", QG_REASON_STRUCTURE_MISMATCH,
     "SJIS trail with scs on"},
    {QG_DIALECT_POSTGRES, "SJIS", SCS_OFF, "SELECT * FROM t WHERE a = E'\x95\x5c' OR 1=1 --'",
     QG_REASON_STRUCTURE_MISMATCH, "E-string too"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_ON, "SELECT 'abc", QG_REASON_UNTERMINATED,
     "unterminated literal"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_ON, "SELECT 1 /* open", QG_REASON_UNTERMINATED,
     "unterminated comment"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_ON, "SELECT $$abc", QG_REASON_UNTERMINATED,
     "unterminated dollar quote"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_ON, "SELECT '\xed\xa0\x80'", QG_REASON_INVALID_SEQUENCE,
     "UTF-16 surrogate is invalid in PG"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_ON, "SELECT '\xc0\xaf'", QG_REASON_INVALID_SEQUENCE,
     "overlong"},
    {QG_DIALECT_POSTGRES, "EUC_JP", SCS_ON, "SELECT '\xa4'", QG_REASON_INVALID_SEQUENCE,
     "EUC_JP truncated before the quote"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_ON, "SELECT 1 -- \xff comment", QG_REASON_INVALID_SEQUENCE,
     "PG converts comments too"},

    /* --- must pass --- */
    {QG_DIALECT_POSTGRES, "SJIS", SCS_OFF, "SELECT '\x83\x5c'", QG_REASON_NONE,
     "SJIS katakana so before the closing quote"},
    {QG_DIALECT_POSTGRES, "SJIS", SCS_OFF, "SELECT * FROM t WHERE a = '\x83\x5c' AND b = 'x'",
     QG_REASON_NONE, "so, then another literal"},
    {QG_DIALECT_POSTGRES, "SJIS", SCS_OFF,
     "SELECT * FROM t WHERE a = '\x83\x5c' AND b = '\x95\x5c' AND c = 'x'", QG_REASON_NONE,
     "several trail-5c characters"},
    {QG_DIALECT_POSTGRES, "SJIS", SCS_OFF, "INSERT INTO t VALUES ('\x95\x5c\x5c\x5c')",
     QG_REASON_NONE, "PQescapeStringConn output for table+backslash"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_ON, "SELECT 'C:\\dir\\'", QG_REASON_NONE,
     "trailing backslash with scs on"},
    {QG_DIALECT_POSTGRES, "LATIN1", SCS_ON, "INSERT INTO t VALUES ('C:\\a\\', 'D:\\b\\')",
     QG_REASON_NONE, "two trailing backslashes"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_ON,
     "INSERT INTO t VALUES ('C:\\a\\', 'D:\\b\\', 'E:\\c\\', 'F:\\d\\')", QG_REASON_NONE,
     "four trailing backslashes"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_ON, "SELECT E'a\\'b\\'c'", QG_REASON_NONE, "E-string"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_OFF, "SELECT 'a\\'b\\'c'", QG_REASON_NONE,
     "backslash quote with scs off"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_ON, "SELECT $$it's$$", QG_REASON_NONE, "dollar quote"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_ON, "SELECT $f$ ' $f$", QG_REASON_NONE, "tagged"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_ON, "SELECT $a$x$b$a$, 'y'", QG_REASON_NONE,
     "other tag inside"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_ON, "SELECT abc$q$, 'x'", QG_REASON_NONE,
     "$ continues an identifier"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_ON, "SELECT U&'d\\0061t\\+000061'", QG_REASON_NONE,
     "unicode escapes"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_ON, "SELECT U&' \\' UESCAPE '!'", QG_REASON_NONE,
     "U& with backslash and UESCAPE"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_ON, "SELECT 1 /* it's /* nested */ ' */", QG_REASON_NONE,
     "nested comment"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_ON, "SELECT 1 -- it's", QG_REASON_NONE, "line comment"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_ON, "SELECT 'a'\n  'b', 'c'", QG_REASON_NONE,
     "continuation"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_ON, "SELECT B'0101', X'1F'", QG_REASON_NONE, "bit, hex"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_ON, "SELECT \"it's\"\"x\", 'y'", QG_REASON_NONE,
     "quoted identifier"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_ON, "SELECT '\xe6\x97\xa5\xe6\x9c\xac'", QG_REASON_NONE,
     "UTF8 text"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_ON, "SELECT '\\x66e8b1ff6f6f'::bytea", QG_REASON_NONE,
     "bytea hex with scs on"},
    {QG_DIALECT_POSTGRES, "BIG5", SCS_OFF, "SELECT '\xa5\x5c\x5c\x5c'", QG_REASON_NONE,
     "BIG5 gong + escaped backslash"},
    {QG_DIALECT_POSTGRES, "GB18030", SCS_OFF, "SELECT '\x81\x30\x81\x30'", QG_REASON_NONE,
     "GB18030 four-byte"},
    {QG_DIALECT_POSTGRES, "WIN1252", SCS_ON, "SELECT '\xe4\xe7'", QG_REASON_NONE,
     "single-byte high bytes"},
    {QG_DIALECT_POSTGRES, "SJIS", SCS_ON, "SELECT \x95\x5c FROM t", QG_REASON_NONE,
     "multibyte identifier with 5c trail"},
    {QG_DIALECT_POSTGRES, "EUC_JP", SCS_OFF, "SELECT '\x8e\xb1\x8f\xa1\xa1\xa4\xa2'",
     QG_REASON_NONE, "EUC_JP kana, JIS X 0212, JIS X 0208"},

    {QG_DIALECT_POSTGRES, "SJIS", SCS_OFF,
     "SELECT encode(convert_to('\x95\x5c'' OR 1=1 -- ', 'SJIS'), 'hex')", QG_REASON_NONE,
     "PQescapeStringConn of table+quote: N ends early, but only code becomes data"},
    {QG_DIALECT_POSTGRES, "SJIS", SCS_OFF, "SELECT '\x95\x5c'' /* x */ '", QG_REASON_NONE,
     "same with a block comment"},
    {QG_DIALECT_POSTGRES, "SJIS", SCS_OFF,
     "SELECT * FROM t WHERE name = '\x95\x5c' -- ' AND pw = 'x'", QG_REASON_STRUCTURE_MISMATCH,
     "truncation: input becomes a comment"},
    {QG_DIALECT_POSTGRES, "SJIS", SCS_OFF, "SELECT '\x95\x5c'$$ x $$ OR 1=1 --'",
     QG_REASON_STRUCTURE_MISMATCH, "a dollar quote in between does not hide the code"},

    {QG_DIALECT_POSTGRES, "UTF8", SCS_ON, "SELECT X'\xc8'", QG_REASON_INVALID_SEQUENCE,
     "PG converts bit/hex string bodies too"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_ON, "SELECT ''--\xff\n''", QG_REASON_INVALID_SEQUENCE,
     "invalid byte in a comment between continued parts"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_ON, "SELECT 4a$$ ' $$", QG_REASON_UNTERMINATED,
     "no dollar quote after number junk"},

    {QG_DIALECT_POSTGRES, "SJIS", SCS_OFF, "SELECT E'\x95\x5c', E'it\\'s'", QG_REASON_NONE,
     "charset-aware escaping of a table and of it's"},

    /* A prose comment after a literal ending in a character with a 0x5c
     * trail byte: a byte-wise escaper's reading ends its literal at the
     * comment's apostrophe, before a letter, where a program writes none. */
    {QG_DIALECT_POSTGRES, "SJIS", SCS_OFF, "SELECT '\x95\x5c' AS v -- it's fine", QG_REASON_NONE,
     "SJIS hyou, then a line comment with an apostrophe (scs off)"},
    {QG_DIALECT_POSTGRES, "SJIS", SCS_ON, "SELECT '\x95\x5c' AS v -- it's fine", QG_REASON_NONE,
     "... scs on"},
    {QG_DIALECT_POSTGRES, "SJIS", SCS_OFF, "SELECT '\x95\x5c' AS v /* it's */", QG_REASON_NONE,
     "... a block comment"},
    {QG_DIALECT_POSTGRES, "SJIS", SCS_ON, "SELECT E'\x95\x5c\x5c\x5c' -- it's", QG_REASON_NONE,
     "... an E'' string holding hyou and a backslash"},
    {QG_DIALECT_POSTGRES, "BIG5", SCS_OFF, "SELECT '\xa5\x5c' -- it's", QG_REASON_NONE,
     "BIG5 a5 5c, then it's"},
    {QG_DIALECT_POSTGRES, "SJIS", SCS_OFF,
     "SELECT * FROM t WHERE a = '\x83\x5c' -- don't cache\n  AND b = 'x' /* the 'b' flag */",
     QG_REASON_NONE, "prose comments after and between literals"},
    {QG_DIALECT_POSTGRES, "SJIS", SCS_OFF,
     "SELECT * FROM t WHERE name = '\x95\x5c' OR 1=1 -- ' -- it's fine\n  AND b = 'x'",
     QG_REASON_STRUCTURE_MISMATCH, "the attack before a template's prose comment stays blocked"},
    {QG_DIALECT_POSTGRES, "SJIS", SCS_OFF,
     "SELECT '\x95\x5c' AS v -- the users' names\nFROM t WHERE a = 'x'",
     QG_REASON_STRUCTURE_MISMATCH,
     "an apostrophe before a space is also a program's '%s' names: both, blocked"},
    {QG_DIALECT_MYSQL, "gbk", 0, "SELECT '\xbf\x5c' -- it's", QG_REASON_NONE,
     "MariaDB gbk bf 5c, then -- it's"},
    {QG_DIALECT_MYSQL, "gbk", 0, "SELECT '\xbf\x5c' # it's", QG_REASON_NONE, "... # it's"},
    {QG_DIALECT_MYSQL, "gbk", 0, "SELECT '\xbf\x5c' /* it's */", QG_REASON_NONE, "... /* it's */"},
    {QG_DIALECT_MYSQL, "sjis", 0, "SELECT '\x95\x5c' -- it's", QG_REASON_NONE,
     "MariaDB sjis 95 5c, then -- it's"},
    {QG_DIALECT_MYSQL, "utf8mb4", 0, "SELECT 'it\\'s' -- it's", QG_REASON_NONE,
     "mysql_real_escape_string's \\' then a comment with an apostrophe (the quote doubler's "
     "reading)"},
    {QG_DIALECT_MYSQL, "gbk", 0, "SELECT '\xbf\x5c' OR 1=1 # ' # it's\n, 'x'",
     QG_REASON_STRUCTURE_MISMATCH, "the attack before a prose comment stays blocked (MySQL)"},
    {QG_DIALECT_MYSQL, "utf8mb4", 0,
     "SELECT * FROM t WHERE a = '\\\\\\'' OR ''a''=''a' -- the user's e-mail\n",
     QG_REASON_STRUCTURE_MISMATCH,
     "a quote doubler's output that the program's prose comment closes for the server (its "
     "apostrophe ends the literal the doubler's closing quote opened)"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_ON,
     "SELECT * FROM t WHERE a = '\\' OR 1=1 -- ' -- it's fine\n  AND b = 'x'",
     QG_REASON_STRUCTURE_MISMATCH, "addslashes under scs on, before a prose comment"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_ON, "INSERT INTO files VALUES ('C:\\temp\\', 'see --help')",
     QG_REASON_NONE, "N's comment hiding the server's closing quote before code is no program's"},
    {QG_DIALECT_MYSQL, "euckr", 0, "SELECT '\\\xc8\x9d\x8e\x96', \"\\\xc8\x9d\x8e\x96\"",
     QG_REASON_NONE,
     "euckr c8 9d 8e 96 from libmariadb (\\c8, then 9d 8e 96 copied; the server reads 9d 8e "
     "and 96 alone before the quote)"},

    /* --- MySQL --- */
    {QG_DIALECT_MYSQL, "gbk", 0, "SELECT * FROM t WHERE name = '\xbf\x5c' OR 1=1 -- '",
     QG_REASON_STRUCTURE_MISMATCH, "classic GBK (CVE-2006-2753)"},
    {QG_DIALECT_MYSQL, "gbk", 0, "SELECT * FROM t WHERE name = '\x5c\xbf\x5c\x27 OR 1=1 -- '",
     QG_REASON_NONE, "mysql_real_escape_string output for bf 27"},
    {QG_DIALECT_MYSQL, "sjis", 0, "SELECT '\x95\x5c' OR 1=1 -- '", QG_REASON_STRUCTURE_MISMATCH,
     "sjis"},
    {QG_DIALECT_MYSQL, "cp932", 0, "SELECT '\x95\x5c' OR 1=1 -- '", QG_REASON_STRUCTURE_MISMATCH,
     "cp932"},
    {QG_DIALECT_MYSQL, "big5", 0, "SELECT '\xa5\x5c' OR 1=1 -- '", QG_REASON_STRUCTURE_MISMATCH,
     "big5"},
    {QG_DIALECT_MYSQL, "cp1251", 0,
     "SELECT * FROM t WHERE a = 'alice' AND b = 'John\xfb\x5c'\xfb\x5c\x99\x5c\x5c\x5c'\n"
     "  AND name = ' OR 1=1 -- '",
     QG_REASON_STRUCTURE_MISMATCH,
     "an escaper believing gbk stepped over fb alone before a quote (fb \\') and copied fb 5c "
     "whole in one literal"},
    {QG_DIALECT_MYSQL, "cp1251", 0,
     "SELECT * FROM t WHERE a = 'alice' AND b = 'John" STEP_QUOTES_4 STEP_QUOTES_4 STEP_QUOTES_4
     STEP_QUOTES_4 STEP_QUOTES_4 "\xfb\x5c\x99\x5c\x5c\x5c'\n  AND name = ' OR 1=1 -- '",
     QG_REASON_STRUCTURE_MISMATCH, "... with 20 step quotes before the breakout, more than the paths"},
    {QG_DIALECT_MYSQL, "cp1251", 0,
     "SELECT * FROM t WHERE b = 'John" STEP_DOUBLED_4 STEP_DOUBLED_4 STEP_DOUBLED_4 STEP_DOUBLED_4
     STEP_DOUBLED_4 "'",
     QG_REASON_STRUCTURE_MISMATCH,
     "20 step quotes each followed by '' (which no backslash escaper writes): more readings in "
     "step than the paths hold is blamed"},
    {QG_DIALECT_MYSQL, "gbk", 0, "SELECT * FROM t WHERE a = 'John\xfb\x5c' AND b = '\xfb\x5c'",
     QG_REASON_NONE, "its literals ending with the character fb 5c, where the server reads it"},
    {QG_DIALECT_MYSQL, "latin1", QG_NO_BACKSLASH_ESCAPES, "SELECT '\\' OR 1=1 -- '",
     QG_REASON_STRUCTURE_MISMATCH, "addslashes under NO_BACKSLASH_ESCAPES"},
    {QG_DIALECT_MYSQL, "gbk", 0, "SELECT '\xbf'' OR 1=1 -- '", QG_REASON_ILLFORMED_QUOTE,
     "ill-formed lead before a quote"},
    {QG_DIALECT_MYSQL, "utf8mb4", 0, "SELECT '\xc8'' OR 1=1 -- '", QG_REASON_ILLFORMED_QUOTE,
     "utf8mb4 lead before quote"},
    {QG_DIALECT_MYSQL, "gbk", 0, "SELECT '\x81\x5c', '\x81\x5c\x5c\x5c'", QG_REASON_NONE,
     "GBK 81 5c as mysql_real_escape_string leaves it, and with an escaped backslash"},
    {QG_DIALECT_MYSQL, "big5", 0, "SELECT '\xa5\x5c', `\xa5\x5c`", QG_REASON_NONE,
     "BIG5 gong in string and identifier"},
    {QG_DIALECT_MYSQL, "utf8mb4", 0, "SELECT 'it''s', \"say \\\"hi\\\"\" # it's", QG_REASON_NONE,
     "doubling, double-quoted string, hash comment"},
    {QG_DIALECT_MYSQL, "utf8mb4", 0, "SELECT 1 --'x'", QG_REASON_NONE,
     "--' is not a comment in MySQL"},
    {QG_DIALECT_MYSQL, "latin1", 0, "SELECT 1 --\xa0l'\xe9t\xe9\n, 2", QG_REASON_NONE,
     "latin1's no-break space after -- starts a comment"},
    {QG_DIALECT_MYSQL, "latin1", 0, "SELECT 1 --\x85l'\xe9t\xe9\n, 2", QG_REASON_UNTERMINATED,
     "other high bytes do not"},
    {QG_DIALECT_MYSQL, "utf8mb4", 0, "SELECT 1 --\xc2\xa0l'\xc3\xa9t\xc3\xa9\n, 2",
     QG_REASON_UNTERMINATED, "nor the no-break space of utf8mb4"},
    {QG_DIALECT_MYSQL, "utf8mb4", 0, "SELECT 1 # it\r's\n, 2", QG_REASON_NONE,
     "a carriage return does not end MySQL's # comment"},
    {QG_DIALECT_MYSQL, "utf8mb4", 0, "SELECT `a` -- it\r's\n, 'b'", QG_REASON_NONE,
     "nor its -- comment (after a backtick: the lexer reads it)"},
    {QG_DIALECT_MYSQL, "utf8mb4", 0, "SELECT 1 # it\r's\n, 'b", QG_REASON_UNTERMINATED,
     "the newline does"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_ON, "SELECT 1 -- c\r'it''s'", QG_REASON_NONE,
     "a carriage return ends PG's line comment"},
    {QG_DIALECT_POSTGRES, "UTF8", SCS_ON, "SELECT 1 -- c\r'it", QG_REASON_UNTERMINATED,
     "so the quote after it opens a string"},
    {QG_DIALECT_MYSQL, "utf8mb4", 0, "SELECT 1 /*!40101 , 'it''s' */, 2", QG_REASON_NONE,
     "executable comment body is SQL"},
    {QG_DIALECT_MYSQL, "utf8mb4", 0, "/*!40101 SET NAMES 'x */", QG_REASON_UNTERMINATED,
     "quote inside an executable comment is live"},
    {QG_DIALECT_MYSQL, "utf8mb4", QG_ANSI_QUOTES, "SELECT \"it\\\" FROM t", QG_REASON_NONE,
     "ANSI_QUOTES: identifier without escapes"},
    {QG_DIALECT_MYSQL, "utf8mb4", 0, "SELECT _binary'\xff\xfe', _BINARY '\x80'", QG_REASON_NONE,
     "_binary literal is not checked"},
    {QG_DIALECT_MYSQL, "utf8mb3", 0, "SELECT convert(_latin1'G\xfcnter Andr\xe9' using utf8)",
     QG_REASON_NONE, "introduced latin1 bytes on a utf8 connection (mysql-test ctype_utf8)"},
    {QG_DIALECT_MYSQL, "utf8mb4", 0, "SELECT _utf8mb4'\xc8'' x'", QG_REASON_ILLFORMED_QUOTE,
     "an introducer naming the connection's own set is checked"},
    {QG_DIALECT_MYSQL, "utf8mb4", 0, "SELECT _latin1\r'\xe9', _latin1\v'\xe9', _latin1\f'\xe9'",
     QG_REASON_NONE, "an introducer before a carriage return, vertical tab or form feed"},
    {QG_DIALECT_MYSQL, "utf8mb4", 0, "SELECT _utf8\r'\xf0\x9f\x98\x80'", QG_REASON_NONE,
     "... which names the set to check the literal in: a four-byte character is ill-formed in "
     "utf8, and moves no quote (a reader trusting f0 takes the same four bytes)"},
    {QG_DIALECT_MYSQL, "utf8mb4", 0, "SELECT _latin1\r'\xc3'", QG_REASON_NONE,
     "... latin1, where c3 before the quote is a character"},
    {QG_DIALECT_MYSQL, "utf8mb4", 0, "SELECT CONCAT('a', _utf8 '\xbf')", QG_REASON_NONE,
     "an introduced literal is checked in its own set (mysql-test ctype_utf8mb4): a "
     "continuation byte alone, which every reader takes alone"},
    {QG_DIALECT_MYSQL, "utf8mb4", 0, "SELECT _utf8 '\xc3'", QG_REASON_ILLFORMED_QUOTE,
     "a lead byte before the closing quote, in the introduced set"},
    {QG_DIALECT_MYSQL, "utf8mb4", 0,
     "SELECT _utf8 'a doubled '' quote, then a 4-byte character one block on:                  "
     "\xf0\x9f\x98\x80'",
     QG_REASON_NONE, "the introducer holds across a doubled quote (fuzz_checker)"},
    {QG_DIALECT_MYSQL, "utf8mb4", 0,
     "SELECT _latin1 'a doubled '' quote, then a lead byte before the quote one block on:      "
     "\xc3'",
     QG_REASON_NONE, "... latin1 (in utf8mb4 c3 before the quote would be blocked)"},
    {QG_DIALECT_MYSQL, "utf8mb4", 0, "SELECT '\xc0\x5c''", QG_REASON_ILLFORMED_QUOTE,
     "0xc0 looks like a lead byte to a reader that trusts it"},
    {QG_DIALECT_MYSQL, "latin1", 0, "SELECT _gbk'\xbf\x5c'", QG_REASON_UNTERMINATED,
     "lexed in the connection's set all the same: latin1 reads bf then \\'"},
    {QG_DIALECT_MYSQL, "gbk", 0, "SELECT '\x80\x5c'', '\xff\x5c''", QG_REASON_NONE,
     "gbk 0x80/0xff start no character: every reader takes them alone, no finding (mysqldump)"},
    {QG_DIALECT_MYSQL, "utf8mb4", 0, "SELECT '\xff abc'", QG_REASON_NONE,
     "nor is 0xff in utf8mb4"},
    {QG_DIALECT_MYSQL, "utf8mb4", 0, "SELECT '\xe8\x41\x42 abc'", QG_REASON_NONE,
     "a lead before bytes that hold no quote: the readings meet again after them"},
    {QG_DIALECT_MYSQL, "eucjpms", 0, "SELECT '\x8f\x41\xa1\xa1'", QG_REASON_ILLFORMED,
     "readings that part past the lead's length (trusting 8f 41 a1 | a1 ', the server 8f | 41 "
     "| a1 a1 | '): logged, and compared"},
    {QG_DIALECT_MYSQL, "eucjpms", 0, "SELECT '\x8f\x41\xa1\xa1' OR 1=1 -- '",
     QG_REASON_STRUCTURE_MISMATCH, "... where a lead-trusting escaper was fooled"},

    /* Escapers that escape a byte they take for an invalid lead (libmariadb,
     * mysqlnd): the server reads the value back unchanged. */
    {QG_DIALECT_MYSQL, "eucjpms", 0, "SELECT '\x8f\xab\x5c\xb1'", QG_REASON_NONE,
     "eucjpms 8f ab b1 through libmariadb, which takes 8f ab for a character and escapes b1"},
    {QG_DIALECT_MYSQL, "eucjpms", 0, "SELECT 'caf\x8f\xab\x5c\xb1', '\x8f\xab\x5c\xb1' -- it's",
     QG_REASON_NONE, "... in two literals and before a prose comment"},
    {QG_DIALECT_MYSQL, "eucjpms", 0, "SELECT '\x8f\xab\x5c\xb1' OR 1=1 -- '",
     QG_REASON_STRUCTURE_MISMATCH,
     "the same bytes from an escaper that trusts 8f (8f ab 5c, then b1 ') stay blocked"},
    {QG_DIALECT_MYSQL, "eucjpms", 0, "SELECT '\x8f\xab\x5c\x5c' OR 1=1 -- '",
     QG_REASON_ILLFORMED_QUOTE, "and so does 8f ab 5c followed by an escaped backslash"},
    {QG_DIALECT_MYSQL, "euckr", 0, "SELECT '\x5c\xbc\x9d'", QG_REASON_NONE,
     "euckr bc 9d (an extended syllable MariaDB reads) escaped by mysqlnd and libmariadb"},
    {QG_DIALECT_MYSQL, "euckr", 0, "SELECT '\x5c\xbc\x9d', '\x5c\xbc\x9d`\x5c\xbc\x9d\\\\', `a`",
     QG_REASON_NONE, "... before a quote, a backtick, a backslash"},
    {QG_DIALECT_MYSQL, "euckr", 0, "SELECT 'a\x5c\xbc\x9d" "b'", QG_REASON_NONE,
     "... before a letter: no ill-formed sequence logged"},
    {QG_DIALECT_MYSQL, "binary", 0, "SELECT '\xff\x27'", QG_REASON_UNTERMINATED,
     "binary charset: bytes are bytes"},
    {QG_DIALECT_MYSQL, "utf8mb4", 0, "SELECT '\xed\xa0\x80'", QG_REASON_NONE,
     "MariaDB accepts encoded surrogates"},
    {QG_DIALECT_MYSQL, "utf8mb4", 0, "SELECT 'a\0b'", QG_REASON_NUL_BYTE, "NUL byte"},
    {QG_DIALECT_MYSQL, "sjis", 0, "SELECT * FROM t WHERE name = '\x83\x5c' OR city = 'St. John\\'s'",
     QG_REASON_NONE, "DBI quote(): so, then John\\'s (N shifted, backslash in its code)"},
    {QG_DIALECT_MYSQL, "sjis", 0, "SELECT * FROM t WHERE a = '\x95\x5c' OR 1=1 -- ' AND c = 'St. John\\'s'",
     QG_REASON_STRUCTURE_MISMATCH, "attack before an escaped it's: the backslash stays in N's literal"},
    {QG_DIALECT_MYSQL, "gbk", 0, "SELECT '\xbf\x5c'' OR 1=1 # '", QG_REASON_NONE,
     "gbk text escaped by a charset-aware quote doubler"},
    {QG_DIALECT_MYSQL, "sjis", 0, "SELECT `\x95\x60`, '\x95\x5c' OR 1=1 #'",
     QG_REASON_STRUCTURE_MISMATCH, "backtick trail byte, then the attack"},
};

static void test_rule_cases(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const rule_case *c = &cases[i];
        const qg_encoding *enc = qg_encoding_find(c->dialect, c->encoding);
        if (!tap_ok(enc != NULL, "encoding %s known", c->encoding))
            continue;
        qg_context ctx;
        qg_context_init(&ctx, c->dialect, enc, c->flags);
        qg_result res;
        size_t len = strlen(c->sql);
        if (c->expect == QG_REASON_NUL_BYTE)
            len += 2; /* "a\0b'" continues past the NUL */
        qg_check(&ctx, c->sql, len, &res);
        /* The blocking finding where there is one, else the first. */
        qg_reason got = res.count ? res.findings[0].reason : QG_REASON_NONE;
        for (unsigned f = 0; f < res.count && f < QG_MAX_FINDINGS; f++)
            if (res.findings[f].action == QG_ACTION_BLOCK) {
                got = res.findings[f].reason;
                break;
            }
        tap_ok(got == c->expect, "%s: expect %s, got %s (%u findings)", c->why,
               qg_reason_name(c->expect), qg_reason_name(got), res.count);
    }
}

static void test_verdicts_and_spans(void)
{
    const qg_encoding *sjis = qg_encoding_find(QG_DIALECT_POSTGRES, "SJIS");
    qg_context ctx;
    qg_context_init(&ctx, QG_DIALECT_POSTGRES, sjis, 0);
    const char *sql = "SELECT * FROM t WHERE name = '\x95\x5c' OR 1=1 --'";
    qg_result res;
    tap_ok(qg_check(&ctx, sql, strlen(sql), &res) == QG_VERDICT_BLOCK, "attack verdict is block");
    tap_ok(res.findings[0].span_start == 29 && res.findings[0].span_end == strlen(sql),
           "span is the literal the escaper built [%zu,%zu)", res.findings[0].span_start,
           res.findings[0].span_end);
    tap_ok(res.findings[0].offset == 33, "offset is the first byte of input that runs as SQL (%zu)",
           res.findings[0].offset);
    tap_ok(qg_check(&ctx, "SELECT 1", 8, NULL) == QG_VERDICT_CLEAN, "clean verdict");

    const qg_encoding *eucjpms = qg_encoding_find(QG_DIALECT_MYSQL, "eucjpms");
    qg_context_init(&ctx, QG_DIALECT_MYSQL, eucjpms, 0);
    tap_ok(qg_check(&ctx, "SELECT '\x8f\x41\xa1\xa1'", 13, &res) == QG_VERDICT_LOG,
           "ill-formed sequence whose readings part past the lead's length is logged, not blocked");
    ctx.action[QG_REASON_ILLFORMED] = QG_ACTION_BLOCK;
    tap_ok(qg_check(&ctx, "SELECT '\x8f\x41\xa1\xa1'", 13, &res) == QG_VERDICT_BLOCK,
           "policy can make it block");
    tap_ok(qg_check(&ctx, "SELECT '\xa1 abc'", 14, &res) == QG_VERDICT_CLEAN,
           "one whose readings meet again is no finding, whatever the policy");
    const qg_encoding *gbk = qg_encoding_find(QG_DIALECT_MYSQL, "gbk");
    qg_context_init(&ctx, QG_DIALECT_MYSQL, gbk, 0);
    ctx.action[QG_REASON_ILLFORMED_QUOTE] = QG_ACTION_IGNORE;
    tap_ok(qg_check(&ctx, "SELECT '\xbf'' x'", 14, &res) == QG_VERDICT_CLEAN,
           "policy can ignore ill-formed before quote");
}

/* An attack after many literals that N reads byte-wise but ends where S
 * does (v, 95 5c, x: N takes the trail backslash as escaping the x): only
 * the attack's literal parts the readings, and the finding names it. */
static void test_many_literals(void)
{
    const qg_encoding *sjis = qg_encoding_find(QG_DIALECT_POSTGRES, "SJIS");
    qg_context ctx;
    qg_context_init(&ctx, QG_DIALECT_POSTGRES, sjis, 0);
    static const unsigned counts[] = {10, 63, 64, 65, 200};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        char sql[4096];
        size_t n = (size_t)snprintf(sql, sizeof sql, "SELECT 1 WHERE a IN (");
        for (unsigned k = 0; k < counts[i]; k++)
            n += (size_t)snprintf(sql + n, sizeof sql - n, "'v%u\x95\x5cx', ", k);
        size_t attack = n;
        n += (size_t)snprintf(sql + n, sizeof sql - n, "'\x95\x5c') OR 1=1 --')");
        qg_result res;
        qg_check(&ctx, sql, n, &res);
        tap_ok(res.count == 1 && res.findings[0].reason == QG_REASON_STRUCTURE_MISMATCH &&
                   res.findings[0].offset == attack + 4,
               "attack after %u literals: structure_mismatch at %zu (want %zu)", counts[i],
               res.count ? res.findings[0].offset : 0, attack + 4);
    }
}

/* Fragments that move lexer state in some dialect or encoding. */
static const char *const fragments[] = {
    "'", "''", "\"", "`", "\\", "\\'", "--", "-", "/*", "*/", "/", "*", "#", "$", "$$",
    "$a$", "1$", "E'", "e'", "X'", "U&'", "_latin1'", "N'", "\n", " ", "\t", " OR 1=1 ",
    "SELECT ", "abc", "x", "42", "\x95\x5c", "\x95", "\x83\x27", "\xbf", "\xbf\x5c", "\xc8",
    "\xe3\x82\xbd", "\xa4\x5c", "\x81\x30\x81\x30", "\xff", "\x80", ";", "(", ")", ",",
};

/* Literal contents: valid characters with ASCII trail bytes, escapes. */
static const char *const contents[] = {
    "a", "b c", "''", "\\'", "\\\\", "\x95\x5c", "\x83\x5c", "\xbf\x5c", "\xa4\x5c", "\x95\x60",
    "\xe3\x82\xbd", "\x81\x30\x81\x30", "\x95\x5c\x5c", "--", "/*", "$$", "\"",
};

static uint32_t rng_state = 20261203;
static uint32_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

/* The fast checker (vector scan, block skipping, literal-local comparison
 * of the readings) and the reference give the same verdict and findings on
 * random mixes of state-changing fragments, short and longer than a block. */
static void test_reference_agrees(void)
{
    static const struct {
        qg_dialect dialect;
        const char *enc;
        unsigned flags;
    } ctxs[] = {
        {QG_DIALECT_POSTGRES, "UTF8", SCS_ON},  {QG_DIALECT_POSTGRES, "UTF8", SCS_OFF},
        {QG_DIALECT_POSTGRES, "SJIS", SCS_OFF}, {QG_DIALECT_POSTGRES, "SJIS", SCS_ON},
        {QG_DIALECT_POSTGRES, "GB18030", SCS_OFF}, {QG_DIALECT_POSTGRES, "LATIN1", SCS_ON},
        {QG_DIALECT_MYSQL, "gbk", 0}, {QG_DIALECT_MYSQL, "sjis", QG_NO_BACKSLASH_ESCAPES},
        {QG_DIALECT_MYSQL, "utf8mb4", QG_ANSI_QUOTES}, {QG_DIALECT_MYSQL, "big5", 0},
        {QG_DIALECT_MYSQL, "utf8mb4", 0}, {QG_DIALECT_POSTGRES, "EUC_JP", SCS_OFF},
    };
    size_t nfrag = sizeof fragments / sizeof fragments[0];
    size_t ncont = sizeof contents / sizeof contents[0];
    unsigned queries = 0, differ = 0, blocked = 0, mismatch = 0;
    char sql[1024];
    for (size_t c = 0; c < sizeof ctxs / sizeof ctxs[0]; c++) {
        qg_context ctx;
        qg_context_init(&ctx, ctxs[c].dialect, qg_encoding_find(ctxs[c].dialect, ctxs[c].enc),
                        ctxs[c].flags);
        for (unsigned q = 0; q < 4000; q++) {
            size_t target = rng() % 2 ? rng() % 40 : rng() % 600, n = 0;
            /* Mostly plain text, so that runs long enough to skip occur;
             * every other query of closed literals with tricky contents. */
            bool literals = q % 2;
            bool open = false;
            while (n < target || open) {
                const char *f = rng() % 3 ? "abc, " : fragments[rng() % nfrag];
                if (literals) {
                    static const char *const code[] = {"abc, ", " OR 1=1 ", "SELECT ", "(", ") ", "-1"};
                    bool quote = rng() % 3 == 0;
                    f = quote ? "'" : open ? contents[rng() % ncont] : code[rng() % 6];
                    open = open != quote;
                }
                size_t k = strlen(f);
                if (n + k >= sizeof sql - 1) {
                    if (open)
                        sql[n++] = '\'';
                    break;
                }
                memcpy(sql + n, f, k);
                n += k;
            }
            qg_result ref;
            if (!fast_agrees(&ctx, sql, n, &ref) && differ++ < 5)
                tap_ok(false, "%s/%u: fast and reference differ on \"%.*s\"", ctxs[c].enc,
                       ctxs[c].flags, (int)n, sql);
            blocked += ref.verdict == QG_VERDICT_BLOCK;
            for (size_t i = 0; i < ref.count && i < QG_MAX_FINDINGS; i++)
                mismatch += ref.findings[i].reason == QG_REASON_STRUCTURE_MISMATCH;
            queries++;
        }
    }
    tap_ok(differ == 0,
           "fast and reference checkers agree on %u random queries (%u blocked, %u for "
           "structure_mismatch), %u differ",
           queries, blocked, mismatch, differ);
    tap_ok(mismatch > 100, "the random queries part the readings often (%u)", mismatch);
}

/* QG_PG_BACKSLASH_FREE_FLAGS: a PG text without the byte 0x5c gets the
 * same verdict and findings under either standard_conforming_strings, in
 * every encoding and every vector build (the libpq front checks such a text
 * without looking the setting up).  Random mixes of the fragments and
 * literal contents above less those with a backslash, E'' and U&'' strings,
 * and random bytes. */
static void test_backslash_free_texts_read_alike(void)
{
    static const char *const encodings[] = {
        "UTF8", "SJIS", "SHIFT_JIS_2004", "EUC_JP", "EUC_JIS_2004", "EUC_KR", "EUC_CN",
        "EUC_TW", "GBK", "GB18030", "BIG5", "UHC", "JOHAB", "LATIN1", "WIN1252", "SQL_ASCII"};
    static const char *const extra[] = {"E'", "e'", "U&'", "U&\"", "E'a''b'", "'\x95'"};
    size_t nfrag = sizeof fragments / sizeof fragments[0];
    size_t ncont = sizeof contents / sizeof contents[0];
    unsigned queries = 0, differ = 0, blocked = 0, clean = 0, missing = 0;
    unsigned differ_with_backslash = 0;
    char sql[700];
    for (size_t e = 0; e < sizeof encodings / sizeof encodings[0]; e++) {
        const qg_encoding *enc = qg_encoding_find(QG_DIALECT_POSTGRES, encodings[e]);
        if (!enc) {
            missing++;
            continue;
        }
        qg_context on, off;
        qg_context_init(&on, QG_DIALECT_POSTGRES, enc, QG_STD_STRINGS);
        qg_context_init(&off, QG_DIALECT_POSTGRES, enc, 0);
        for (unsigned q = 0; q < 2000; q++) {
            size_t target = rng() % 2 ? rng() % 40 : rng() % 600, n = 0;
            while (n < target) {
                char one[2] = {(char)(rng() % 255 + 1), 0};
                unsigned pick = rng() % 32;
                const char *f = pick < 14   ? "abc, "
                                : pick < 20 ? fragments[rng() % nfrag]
                                : pick < 28 ? contents[rng() % ncont]
                                : pick < 31 ? extra[rng() % (sizeof extra / sizeof extra[0])]
                                            : one;
                size_t k = strlen(f);
                if (n + k >= sizeof sql)
                    break;
                memcpy(sql + n, f, k);
                n += k;
            }
            /* With its backslashes the setting does change readings (the
             * comparison below can tell); every backslash byte out, what is
             * left is the text the property speaks of. */
            qg_result a, b;
            qg_check(&on, sql, n, &a);
            qg_check(&off, sql, n, &b);
            differ_with_backslash += !same_result(&a, &b);
            size_t m = 0;
            for (size_t i = 0; i < n; i++)
                if (sql[i] != '\\')
                    sql[m++] = sql[i];
            int was = qg_vectors_in_use();
            for (int build = QG_VECTORS_REFERENCE; build <= qg_cpu_vectors(); build++) {
                qg_allow_vectors(build);
                qg_check(&on, sql, m, &a);
                qg_check(&off, sql, m, &b);
                if (!same_result(&a, &b) && differ++ < 5)
                    tap_ok(false, "%s, %s: standard_conforming_strings changes the reading of \"%.*s\"",
                           encodings[e], build_name[build], (int)m, sql);
            }
            qg_allow_vectors(was);
            blocked += a.verdict == QG_VERDICT_BLOCK;
            clean += a.verdict == QG_VERDICT_CLEAN;
            queries++;
        }
    }
    tap_ok(missing == 0, "every encoding of the list is known (%u missing)", missing);
    tap_ok(differ_with_backslash > 1000,
           "the same texts with their backslashes: the setting changes %u readings",
           differ_with_backslash);
    tap_ok(differ == 0 && blocked > 1000 && clean > 1000,
           "texts without a backslash read alike under either standard_conforming_strings: %u "
           "queries (%u blocked, %u clean), %u differ",
           queries, blocked, clean, differ);
    tap_ok(QG_PG_BACKSLASH_FREE_FLAGS == QG_STD_STRINGS || QG_PG_BACKSLASH_FREE_FLAGS == 0,
           "the flags such a text is checked with are a value of the setting");
}

/* Multibyte text inside strings, checked block by block in the fast
 * checker: characters cut by block boundaries at every offset, valid or
 * spoilt at every byte, give the reference's verdict and findings. */
static void check_cut_characters(qg_dialect dialect, const char *enc, const char *chr,
                                 unsigned flags)
{
    qg_context ctx;
    qg_context_init(&ctx, dialect, qg_encoding_find(dialect, enc), flags);
    unsigned queries = 0, differ = 0, clean = 0;
    size_t chr_len = strlen(chr);
    for (size_t pad = 0; pad < 140; pad++)
        for (size_t spoil = 0; spoil <= 8 * chr_len; spoil++) {
            char sql[512];
            size_t n = (size_t)snprintf(sql, sizeof sql, "SELECT %.*s'", (int)pad,
                                        "x + 1 AS a, b, c || d || e, f, g, h, i, j, k, l, m, n, o, p, q, "
                                        "r, s, t, u, v, w, x, y, z, aa, bb, cc, dd, ee, ff, gg, hh, ii, ");
            size_t body = n;
            for (int k = 0; k < 8; k++)
                n += (size_t)snprintf(sql + n, sizeof sql - n, "%s", chr);
            if (spoil < 8 * chr_len)
                sql[body + spoil] = (spoil % 3 == 1) ? '\'' : (char)0xff;
            n += (size_t)snprintf(sql + n, sizeof sql - n, "' FROM t");
            qg_result ref;
            if (!fast_agrees(&ctx, sql, n, &ref) && differ++ < 3)
                tap_ok(false, "%s pad %zu spoil %zu: fast and reference differ", enc, pad, spoil);
            clean += ref.verdict == QG_VERDICT_CLEAN;
            queries++;
        }
    tap_ok(differ == 0 && clean >= 140,
           "%s characters cut by blocks: %u queries (%u clean), %u differ", enc, queries, clean,
           differ);
}

static void test_blocks_cut_characters(void)
{
    static const struct {
        qg_dialect dialect;
        const char *enc, *chr; /* a character of three or four bytes (with ASCII trails) */
        unsigned flags;
    } cases[] = {
        {QG_DIALECT_POSTGRES, "UTF8", "\xe3\x82\xbd", SCS_ON},
        {QG_DIALECT_POSTGRES, "SJIS", "\x83\x41\xa1", SCS_ON},
        {QG_DIALECT_MYSQL, "gb18030", "\x81\x30\x81\x30", 0},
        {QG_DIALECT_MYSQL, "sjis", "\x83\x5c\xa1", 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        check_cut_characters(cases[c].dialect, cases[c].enc, cases[c].chr, cases[c].flags);
}

/* Double-byte text, which the fast checker reads as pairs 64 bytes at a
 * time: runs of bytes that can lead a character (and trail bytes that
 * could too), characters alone, trail bytes 0x5c, escapes where the server
 * reads them.  Cut by the blocks at every offset, valid or with one byte
 * replaced by each of a few, it gives the reference's verdict and
 * findings. */
typedef struct body_ctx {
    qg_dialect dialect;
    const char *enc;
    unsigned flags;
} body_ctx;

/* A piece of a body other than a multibyte character: a digit, an
 * escaped backslash, a doubled quote or a letter. */
static size_t ascii_piece(char *out)
{
    unsigned r = rng() % 7;
    if (r < 2) {
        out[0] = (char)('0' + rng() % 10);
        return 1;
    }
    if (r < 4) {
        memcpy(out, r == 2 ? "\\\\" : "''", 2);
        return 2;
    }
    out[0] = (char)('a' + rng() % 26);
    return 1;
}

/* GB18030: four-byte characters (the pairs read them as chains of
 * digits), two-byte ones (trail 0x5c in one of 20), ASCII. */
static size_t gb18030_piece(char *out)
{
    unsigned r = rng() % 20;
    if (r < 6) {
        out[0] = (char)(0x81 + rng() % 4);
        out[1] = (char)('0' + rng() % 10);
        out[2] = (char)(0x81 + rng() % 126);
        out[3] = (char)('0' + rng() % 10);
        return 4;
    }
    if (r < 13) {
        unsigned t = rng() % 20;
        out[0] = (char)(0x81 + rng() % 126);
        out[1] = (char)(t == 0 ? 0x5c : t < 8 ? 0x40 + rng() % 63 : 0x80 + rng() % 127);
        return 2;
    }
    return ascii_piece(out);
}

/* SJIS: characters with the trail byte 0x5c and without. */
static size_t sjis_piece(char *out)
{
    memcpy(out, rng() % 2 ? "\x95\x5c" : "\x88\x9f", 2);
    return 2;
}

/* UTF-8: characters of four, three and two bytes, ASCII. */
static size_t utf8_piece(char *out)
{
    unsigned r = rng() % 20;
    size_t n = r < 4 ? 4 : r < 10 ? 3 : r < 13 ? 2 : 0;
    if (!n)
        return ascii_piece(out);
    out[0] = (char)(n == 4 ? 0xf0 : n == 3 ? 0xe1 + rng() % 12 : 0xc2 + rng() % 30);
    for (size_t i = 1; i < n; i++)
        out[i] = (char)(0x80 + rng() % 0x40);
    if (n == 4)
        out[1] = (char)(0x90 + rng() % 0x30);
    return n;
}

/* Bodies of up to nine blocks made of `piece`s, one byte replaced in half
 * of them, in four settings: the fast checker gives the reference's
 * verdict. */
static void long_bodies_agree(const char *what, const body_ctx ctxs[4], size_t (*piece)(char *),
                              const unsigned char *replacements, size_t nreplacements)
{
    unsigned queries = 0, clean = 0, differ = 0;
    for (unsigned i = 0; i < 40000; i++) {
        const body_ctx *c = &ctxs[rng() % 4];
        qg_context ctx;
        qg_context_init(&ctx, c->dialect, qg_encoding_find(c->dialect, c->enc), c->flags);
        char sql[640];
        size_t n = (size_t)snprintf(sql, sizeof sql, "SELECT %.*s'", (int)(rng() % 64),
                                    "1+2+3+4+5+6+7+8+9+1+2+3+4+5+6+7+8+9+1+2+3+4+5+"
                                    "6+7+8+9+1+2+3+4+5+6+7");
        size_t body = n, target = body + 20 + rng() % 500;
        while (n < target)
            n += piece(sql + n);
        if (rng() % 2)
            sql[body + rng() % (n - body)] = (char)replacements[rng() % nreplacements];
        n += (size_t)snprintf(sql + n, sizeof sql - n, "' FROM t");
        qg_result ref;
        if (!fast_agrees(&ctx, sql, n, &ref) && differ++ < 3)
            tap_ok(false, "%s/%u query %u: fast and reference differ", c->enc, c->flags, i);
        clean += ref.verdict == QG_VERDICT_CLEAN;
        queries++;
    }
    tap_ok(differ == 0 && clean > queries / 4 && clean < queries * 7 / 8,
           "%s bodies over blocks: %u queries (%u clean), %u differ", what, queries, clean, differ);
}

static void test_long_bodies(void)
{
    static const body_ctx gb18030[4] = {
        {QG_DIALECT_POSTGRES, "GB18030", SCS_OFF},
        {QG_DIALECT_POSTGRES, "GB18030", SCS_ON},
        {QG_DIALECT_MYSQL, "gb18030", 0},
        {QG_DIALECT_MYSQL, "gb18030", QG_NO_BACKSLASH_ESCAPES},
    };
    static const unsigned char gb18030_bytes[] = {'0',  '9',  0x81, 0xfe, 0x80,
                                                  0xff, 0x5c, '\'', 'a'};
    long_bodies_agree("GB18030", gb18030, gb18030_piece, gb18030_bytes, sizeof gb18030_bytes);
    static const body_ctx utf8[4] = {
        {QG_DIALECT_POSTGRES, "UTF8", SCS_OFF},
        {QG_DIALECT_POSTGRES, "UTF8", SCS_ON},
        {QG_DIALECT_MYSQL, "utf8mb4", 0},
        {QG_DIALECT_MYSQL, "utf8mb3", QG_NO_BACKSLASH_ESCAPES},
    };
    static const unsigned char utf8_bytes[] = {0x80, 0xbf, 0xc0, 0xe0, 0xed, 0xf0,
                                               0xf4, 0xf5, 0x5c, '\'', 'a'};
    long_bodies_agree("UTF-8", utf8, utf8_piece, utf8_bytes, sizeof utf8_bytes);
}

/* UTF-8 bodies: every two bytes, and three and four from bytes at the
 * edges of the ranges, between valid text, across a block's end and
 * inside a block, in the three UTF-8s: the fast checker (which reads UTF-8
 * 64 bytes at once) gives the reference's verdict. */
static void test_utf8_blocks(void)
{
    static const body_ctx ctxs[] = {
        {QG_DIALECT_POSTGRES, "UTF8", SCS_OFF},
        {QG_DIALECT_MYSQL, "utf8mb4", 0},
        {QG_DIALECT_MYSQL, "utf8mb3", QG_NO_BACKSLASH_ESCAPES},
    };
    static const unsigned char edges[] = {0x41, 0x27, 0x5c, 0x80, 0x8f, 0x90, 0x9f, 0xa0,
                                          0xbf, 0xc0, 0xc2, 0xdf, 0xe0, 0xe1, 0xed, 0xee,
                                          0xef, 0xf0, 0xf3, 0xf4, 0xf5, 0xff};
    const size_t ne = sizeof edges;
    unsigned queries = 0, clean = 0, differ = 0;
    for (size_t c = 0; c < sizeof ctxs / sizeof ctxs[0]; c++) {
        qg_context ctx;
        qg_context_init(&ctx, ctxs[c].dialect, qg_encoding_find(ctxs[c].dialect, ctxs[c].enc),
                        ctxs[c].flags);
        size_t two = 256 * 256, three = ne * ne * ne, four = ne * ne * ne * ne;
        for (size_t i = 0; i < two + three + four; i++) {
            unsigned char seq[4];
            size_t len;
            if (i < two) {
                seq[0] = (unsigned char)(i >> 8), seq[1] = (unsigned char)i, len = 2;
            } else if (i < two + three) {
                size_t k = i - two;
                seq[0] = edges[k / (ne * ne)], seq[1] = edges[k / ne % ne], seq[2] = edges[k % ne];
                len = 3;
            } else {
                size_t k = i - two - three;
                seq[0] = edges[k / (ne * ne * ne)], seq[1] = edges[k / (ne * ne) % ne];
                seq[2] = edges[k / ne % ne], seq[3] = edges[k % ne];
                len = 4;
            }
            /* across the end of the query's first block, or inside its second */
            size_t at = i % 2 ? 62 : 90;
            char sql[192];
            memset(sql, 'x', sizeof sql);
            memcpy(sql, "SELECT '\xc3\xa9", 10);
            memcpy(sql + at, seq, len);
            memcpy(sql + 150, "\xe6\x97\xa5' FROM t", 11);
            qg_result ref;
            if (!fast_agrees(&ctx, sql, 161, &ref) && differ++ < 3)
                tap_ok(false, "%s: %zu bytes %02x %02x %02x %02x at %zu: fast and reference differ",
                       ctxs[c].enc, len, seq[0], seq[1], len > 2 ? seq[2] : 0, len > 3 ? seq[3] : 0,
                       at);
            clean += ref.verdict == QG_VERDICT_CLEAN;
            queries++;
        }
    }
    tap_ok(differ == 0 && clean > queries / 20 && clean < queries * 3 / 4,
           "UTF-8 sequences in long bodies: %u queries (%u clean), %u differ", queries, clean,
           differ);
}

/* The vector scans read no byte outside the text: every prefix of up to
 * 320 bytes of mixed texts, placed right after and right before a page no
 * one may read, in six settings (a byte read outside would crash here),
 * gives the reference's verdict. */
static void test_reads_stay_inside(void)
{
    static const struct {
        body_ctx ctx;
        size_t (*piece)(char *);
    } settings[] = {
        {{QG_DIALECT_POSTGRES, "UTF8", SCS_OFF}, utf8_piece},
        {{QG_DIALECT_POSTGRES, "UTF8", SCS_ON}, utf8_piece},
        {{QG_DIALECT_MYSQL, "utf8mb4", 0}, utf8_piece},
        {{QG_DIALECT_MYSQL, "gb18030", 0}, gb18030_piece},
        {{QG_DIALECT_POSTGRES, "SJIS", SCS_ON}, sjis_piece},
        {{QG_DIALECT_POSTGRES, "LATIN1", SCS_ON}, ascii_piece},
    };
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char *map =
        mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (!tap_ok(map != MAP_FAILED && mprotect(map, page, PROT_NONE) == 0 &&
                    mprotect(map + 2 * page, page, PROT_NONE) == 0,
                "guard pages around a page of text"))
        return;
    unsigned char *inside = map + page;
    unsigned checks = 0, differ = 0;
    for (size_t c = 0; c < sizeof settings / sizeof settings[0]; c++) {
        const body_ctx *b = &settings[c].ctx;
        qg_context ctx;
        qg_context_init(&ctx, b->dialect, qg_encoding_find(b->dialect, b->enc), b->flags);
        char text[400];
        size_t n = 0;
        for (unsigned part = 0; part < 3; part++) {
            static const char *const opens[] = {"SELECT '", "' /* note */, '", "' -- x\n, '"};
            n += (size_t)snprintf(text + n, sizeof text - n, "%s", opens[part]);
            while (n < 100 * (part + 1))
                n += settings[c].piece(text + n);
        }
        n += (size_t)snprintf(text + n, sizeof text - n, "' FROM t");
        for (size_t len = 1; len <= n; len++)
            for (int at_end = 0; at_end < 2; at_end++) {
                unsigned char *sql = at_end ? inside + page - len : inside;
                memcpy(sql, text, len);
                qg_result ref;
                differ += !fast_agrees(&ctx, (const char *)sql, len, &ref);
                checks++;
            }
    }
    munmap(map, 3 * page);
    tap_ok(differ == 0 && checks > 3000,
           "texts against unreadable pages: %u checks, no read outside, %u differ", checks,
           differ);
}

static void test_blocks_pairs(void)
{
    static const struct {
        qg_dialect dialect;
        const char *enc;
        unsigned flags;
        const char *body; /* valid, about a block long */
    } cases[] = {
        {QG_DIALECT_POSTGRES, "SJIS", SCS_ON,
         "\x81\x81\x81\x81\x95\x5c" "a\xb1\xe0\x40\x9f\xfc\x88\x9f\x88\x9f \x81\x81\x95\x5c\x95\x5c"
         "\xdf\x81\x81\x81\x81\x81\x81\x81\x81\x81\x81\xb1\xb1 z\x95\x5c\x95\x5c\x88\x9f"},
        {QG_DIALECT_POSTGRES, "SJIS", SCS_OFF,
         "\x81\x81\x95\x5c" "a\\'\xb1\xe0\x40\\\\\x9f\xfc\x88\x9f\x88\x9f \x81\x81\x95\x5c" "b"
         "\xdf\x81\x81\x81\x81\x81\x81\x81\x81\x81\x81\xb1\\'\xb1 z\x95\x5c" "c\x88\x9f"},
        {QG_DIALECT_POSTGRES, "BIG5", SCS_ON,
         "\xa4\xa4\xa4\xa4\xa4\x5c" "a\xf9\xfe\xa1\x40\xa4\xa4\xa4\xa4 \xa4\x5c\xa4\x5c"
         "\xa4\xa4\xa4\xa4\xa4\xa4\xa4\xa4\xa4\xa4\xa4\xa4 z\xa4\x5c\xf9\xa1\xa4\xa4"},
        {QG_DIALECT_POSTGRES, "GBK", SCS_ON,
         "\x81\x81\x81\x81\xbf\x5c" "a\xfe\xfe\x81\x40\x81\x81\x81\x81 \xbf\x5c\xbf\x5c"
         "\x81\x81\x81\x81\x81\x81\x81\x81\x81\x81\xfe\x80 z\xbf\x5c\xfe\xfe\x81\x81"},
        {QG_DIALECT_POSTGRES, "UHC", SCS_ON,
         "\xb0\xa1\xb0\xa1\x81\x5a" "a\xc8\xfe\xb0\xa1\xb0\xa1\xb0\xa1 \x81\x41\x81\x61"
         "\xb0\xa1\xb0\xa1\xb0\xa1\xb0\xa1\xb0\xa1\xb0\xa1 z\xb0\xa1\xc8\xfe\xb0\xa1"},
        {QG_DIALECT_MYSQL, "sjis", 0,
         "\x81\x81\x95\x5c" "a\\'\xb1\xe0\x40\\\\\x9f\xfc\x88\x9f\x88\x9f \x81\x81\x95\x5c" "b"
         "\xdf\x81\x81\x81\x81\x81\x81\x81\x81\x81\x81\xb1\\'\xb1 z\x95\x5c" "c\x88\x9f"},
        {QG_DIALECT_MYSQL, "cp932", QG_NO_BACKSLASH_ESCAPES,
         "\x81\x81\x81\x81\x95\x5c" "a\xb1\xe0\x40\x9f\xfc\x88\x9f\x88\x9f \x81\x81\x95\x5c\x95\x5c"
         "\xdf\x81\x81\x81\x81\x81\x81\x81\x81\x81\x81\xb1\xb1 z\x95\x5c\x95\x5c\x88\x9f"},
        {QG_DIALECT_MYSQL, "gbk", 0,
         "\x81\x81\xbf\x5c" "a\\'\xfe\xfe\\\\\x81\x40\x81\x81\x81\x81 \xbf\x5c" "b\x81\x81\x81\x81"
         "\x81\x81\x81\x81\x81\x81\xfe\x80\\' z\xbf\x5c" "c\xfe\xfe\x81\x81"},
        {QG_DIALECT_MYSQL, "big5", 0,
         "\xa4\xa4\xa4\x5c" "a\\'\xf9\xfe\\\\\xa1\x40\xa4\xa4\xa4\xa4 \xa4\x5c" "b\xa4\xa4\xa4\xa4"
         "\xa4\xa4\xa4\xa4\xa4\xa4\xa4\xa4\\' z\xa4\x5c" "c\xf9\xa1\xa4\xa4"},
        /* GB18030: pairs between four-byte characters, which the rows read */
        {QG_DIALECT_POSTGRES, "GB18030", SCS_OFF,
         "\x81\x81\xbf\x5c" "a\\'\xfe\xfe\\\\\x81\x30\x81\x30\x81\x40 \xbf\x5c" "b\x81\x81"
         "\x81\x30\xfe\x39\x81\x81\x81\x81\xfe\x80\\' z\xbf\x5c" "c\x95\x32\x82\x36\xfe\xfe"},
        {QG_DIALECT_MYSQL, "gb18030", 0,
         "\x81\x81\xbf\x5c" "a\\'\xfe\xfe\\\\\x81\x30\x81\x30\x81\x40 \xbf\x5c" "b\x81\x81"
         "\x81\x30\xfe\x39\x81\x81\x81\x81\xfe\x80\\' z\xbf\x5c" "c\x95\x32\x82\x36\xfe\xfe"},
        {QG_DIALECT_MYSQL, "gb18030", QG_NO_BACKSLASH_ESCAPES,
         "\x81\x81\x81\x81\xbf\x5c\x81\x30\x81\x30" "a\xfe\xfe\x81\x40\x81\x81 \xbf\x5c\xbf\x5c"
         "\x81\x81\x81\x81\x81\x81\x90\x30\x81\x30\x81\x81\xfe\x80 z\xbf\x5c\xfe\xfe\x81\x81"},
        {QG_DIALECT_MYSQL, "euckr", 0,
         "\xb0\xa1\xb0\xa1" "a\\'\xc8\xfe\\\\\xb0\xa1\xb0\xa1\xb0\xa1 \xb0\xa1" "b\xb0\xa1\xb0\xa1"
         "\xb0\xa1\xb0\xa1\xb0\xa1\xb0\xa1\\' z\xb0\xa1" "c\xc8\xfe\xb0\xa1"},
    };
    static const unsigned char replacements[] = {0xff, '\'', '\\', 0x81, 0x5c, 0xa1, '0', 0x80};
    unsigned queries = 0, differ = 0, unclean = 0, bodies_clean = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        qg_context ctx;
        qg_context_init(&ctx, cases[c].dialect,
                        qg_encoding_find(cases[c].dialect, cases[c].enc), cases[c].flags);
        size_t body_len = strlen(cases[c].body);
        for (size_t pad = 0; pad < 70; pad++)
            for (size_t at = 0; at <= body_len; at++)
                for (size_t r = 0; r < (at < body_len ? sizeof replacements : 1); r++) {
                    char sql[256];
                    size_t n = (size_t)snprintf(sql, sizeof sql, "SELECT %.*s'", (int)pad,
                                                "1+2+3+4+5+6+7+8+9+1+2+3+4+5+6+7+8+9+1+2+3+4+5+"
                                                "6+7+8+9+1+2+3+4+5+6+7+8+9");
                    size_t body = n;
                    memcpy(sql + n, cases[c].body, body_len);
                    n += body_len;
                    if (at < body_len)
                        sql[body + at] = (char)replacements[r];
                    n += (size_t)snprintf(sql + n, sizeof sql - n, "' FROM t");
                    qg_result ref;
                    if (!fast_agrees(&ctx, sql, n, &ref) && differ++ < 3)
                        tap_ok(false, "%s/%u pad %zu: byte %zu made 0x%02x: fast and reference differ",
                               cases[c].enc, cases[c].flags, pad, at,
                               at < body_len ? replacements[r] : 0);
                    if (at == body_len)
                        bodies_clean += ref.verdict == QG_VERDICT_CLEAN;
                    unclean += ref.verdict != QG_VERDICT_CLEAN;
                    queries++;
                }
    }
    size_t ncases = sizeof cases / sizeof cases[0];
    tap_ok(bodies_clean == 70 * ncases,
           "double-byte bodies of %zu encodings and settings are clean at every offset",
           ncases);
    tap_ok(differ == 0 && unclean > queries / 4,
           "... and with one byte replaced: %u queries (%u not clean), %u differ", queries,
           unclean, differ);
}

/* Strings whose reading depends on something before them: a prefix (E'',
 * b''), a PG continuation across a line comment, a comment that only looks
 * like one's gap, a backslash before a multibyte character.  At every
 * offset around the block boundaries the fast checker gives the
 * reference's verdict and findings, and the reference the expected
 * verdict. */
/* 表 (0x95 0x5c) twenty times: a trail byte 0x5c at every other byte. */
#define SJIS_5C_TRAILS                                                                      \
    "\x95\x5c\x95\x5c\x95\x5c\x95\x5c\x95\x5c\x95\x5c\x95\x5c\x95\x5c\x95\x5c\x95\x5c" \
    "\x95\x5c\x95\x5c\x95\x5c\x95\x5c\x95\x5c\x95\x5c\x95\x5c\x95\x5c\x95\x5c\x95\x5c"

static void test_blocks_rules_from_afar(void)
{
    static const struct {
        qg_dialect dialect;
        const char *enc;
        unsigned flags;
        const char *tail;
        qg_verdict expected;
    } cases[] = {
        /* The second part of E'' continues its rules: \' escapes, so the
         * string never ends. */
        {QG_DIALECT_POSTGRES, "UTF8", SCS_ON, "E'a' -- c\n'\\' AS b FROM t", QG_VERDICT_BLOCK},
        {QG_DIALECT_POSTGRES, "UTF8", SCS_ON, "'a' -- c\n AS b FROM t -- d", QG_VERDICT_CLEAN},
        /* Backslashes do not escape in U&'' and b'': the first quote
         * ends them, and 'x is left open. */
        {QG_DIALECT_POSTGRES, "UTF8", SCS_OFF,
         "U&'abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz\\' AS b, 'x", QG_VERDICT_BLOCK},
        {QG_DIALECT_MYSQL, "utf8mb4", 0,
         "b'0101010101010101010101010101010101010101010101010101\\' AS b, 'x", QG_VERDICT_BLOCK},
        {QG_DIALECT_MYSQL, "utf8mb4", 0, "'max', 'lab', 'a\\'b' # c", QG_VERDICT_CLEAN},
        /* An introducer names the set a string is checked in, also where
         * its first high byte comes blocks later (utf8: up to 3 bytes; an
         * ill-formed introduced string is logged). */
        {QG_DIALECT_MYSQL, "utf8mb4", 0,
         "_latin1 'abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmn\xc3'",
         QG_VERDICT_CLEAN},
        {QG_DIALECT_MYSQL, "utf8mb4", 0,
         "'abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmn\xc3'",
         QG_VERDICT_BLOCK},
        {QG_DIALECT_MYSQL, "utf8mb4", 0,
         "'abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmn\xf0\x9f\x98\x80'",
         QG_VERDICT_CLEAN},
        /* MySQL's backslash escapes one byte, even a lead byte: 0x81 0x5c is
         * then a character and the quote ends the string, where N and an
         * automaton that escapes whole characters read on. */
        {QG_DIALECT_MYSQL, "sjis", 0, "'ab\\\x95\x81\x5c' OR 1=1 -- '", QG_VERDICT_BLOCK},
        {QG_DIALECT_MYSQL, "sjis", 0, "'\x83\x40\\\x95\x81\x5c' OR 1=1 -- '", QG_VERDICT_BLOCK},
        /* PG with standard strings: N takes a trail byte 0x5c for an
         * escape, also of the next block's first byte; here of the quote
         * that ends the string for the server. */
        {QG_DIALECT_POSTGRES, "SJIS", SCS_ON, "'" SJIS_5C_TRAILS "x' AS b FROM t", QG_VERDICT_CLEAN},
        {QG_DIALECT_POSTGRES, "SJIS", SCS_ON, "'" SJIS_5C_TRAILS "' OR 1=1 -- '", QG_VERDICT_BLOCK},
    };
    unsigned queries = 0, differ = 0, unexpected = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        qg_context ctx;
        qg_context_init(&ctx, cases[c].dialect, qg_encoding_find(cases[c].dialect, cases[c].enc),
                        cases[c].flags);
        for (int pad = 0; pad < 140; pad++) {
            char sql[512];
            int n = snprintf(sql, sizeof sql, "SELECT %*s%s", pad, "", cases[c].tail);
            qg_result ref;
            if (!fast_agrees(&ctx, sql, (size_t)n, &ref) && differ++ < 3)
                tap_ok(false, "case %zu pad %d: fast and reference differ", c, pad);
            if (ref.verdict != cases[c].expected && unexpected++ < 3)
                tap_ok(false, "case %zu pad %d: verdict %d", c, pad, (int)ref.verdict);
            queries++;
        }
    }
    tap_ok(differ == 0 && unexpected == 0,
           "rules from before a block: %u queries, %u differ, %u unexpected verdicts", queries,
           differ, unexpected);
}

/* Inputs on which the fuzzer once found the fast checker and the reference
 * apart. */
static void test_fuzzer_finds(void)
{
    static const struct {
        qg_dialect dialect;
        const char *enc;
        unsigned flags;
        const char *sql;
        const char *why;
        unsigned ignored; /* reasons (bit 1 << reason) whose findings are ignored */
        unsigned logged;  /* and those only logged */
    } finds[] = {
        {QG_DIALECT_MYSQL, "gb18030", QG_NO_BACKSLASH_ESCAPES,
         ".KAT('a', _utf8 '\xec\xec\xec\xec\xec\xec\xec\xec\xec\xec\xec\xbf\x0f\xec\xec\xec\x8e\xa1\xbf\xec')",
         "a string after an introducer is checked in its own character set", 0, 0},
        {QG_DIALECT_POSTGRES, "LATIN3", 0,
         "SELECT 1 + U&'a'';;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;b\\'' + "
         "'xxxxxxxxxxxxxxxxxxxx'",
         "a U&'' string doubling a quote in a block before its backslash reads it as U&''", 0, 0},
        {QG_DIALECT_POSTGRES, "UTF8", QG_STD_STRINGS,
         "SELECT 1 + E'a'';;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;b\\' + "
         "'xxxxxxxxxxxxxxxxxxxxx'",
         "an E'' string doubling a quote in a block before its backslash reads it as E''", 0, 0},
        {QG_DIALECT_POSTGRES, "WIN1254", QG_STD_STRINGS,
         "SELECT('C:\\dir\\', E'a\\'b', $q$x'y$q$, Un */ */",
         "a dollar quote after an odd number of escaped quotes may hide a quote doubler's end", 0, 0},
        {QG_DIALECT_POSTGRES, "LATIN1", 0,
         "SELECT 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, '"
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
         "\\'$q$'y$q$'x' FROM t",
         "a dollar sign past a quote escaped in a plain string may open a quote doubler's "
         "dollar quote (scs off, past the vector scans' first blocks)", 0, 0},
        {QG_DIALECT_POSTGRES, "ISO_8859_5", QG_STD_STRINGS, "8 E'\\'$q$'y$q$'\\'",
         "a dollar sign past a quote escaped in an E'' string may open a quote doubler's "
         "dollar quote", 0, 0},
        {QG_DIALECT_POSTGRES, "BIG5", QG_STD_STRINGS, "'\\\xad'j'",
         "an invalid sequence not acted on still calls for the lead-trusting reading",
         1u << QG_REASON_INVALID_SEQUENCE | 1u << QG_REASON_UNTERMINATED, 0},
        {QG_DIALECT_MYSQL, "gb2312", QG_NO_BACKSLASH_ESCAPES, "'\\ \xc3'*'",
         "MySQL's lead-trusting reading applies only where ill-formed-before-quote blocks",
         1u << QG_REASON_UNTERMINATED, 1u << QG_REASON_ILLFORMED_QUOTE},
        {QG_DIALECT_POSTGRES, "BIG5", 0, "'\xe4\\1\\'' \f'",
         "a string left open may hold the quote that ends a quote doubler's literal", 0,
         1u << QG_REASON_UNTERMINATED},
        {QG_DIALECT_MYSQL, "big5", QG_STD_STRINGS | QG_NO_BACKSLASH_ESCAPES,
         "'\\0'b'\xd7'\x01" "b'\xd7'",
         "an ill-formed lead before the quote that ends a b'' literal calls for the "
         "lead-trusting reading", 0, 0},
        {QG_DIALECT_POSTGRES, "UTF8", QG_STD_STRINGS,
         "SELECT 'a', E'it\\'s -- r\\'eally\r', $q$x'y$q$ FROM t",
         "a comment a quote doubler reads past an escaped quote may hide the next one", 0, 0},
        {QG_DIALECT_POSTGRES, "UTF8", QG_STD_STRINGS,
         "SELECT 'a', E'\\\\\\\\\\'\" OR \"\"\\'=\"', $q$it's$q$ AS c",
         "a quoted name a quote doubler reads past an escaped quote may hide the next one", 0, 0},
        {QG_DIALECT_POSTGRES, "SQL_ASCII", 0, "'\\''b'$q$'y$q$ U&'\\'''''''",
         "a dollar quote a quote doubler reads in a later literal of the server's", 0, 0},
        {QG_DIALECT_MYSQL, "utf8mb4", 0, "SELECT \"hi\\\"\" OR 1 = 1, 'a--\"', 'b' -- '",
         "a single-quoted string the block skip would read, after a double quote escaped by a "
         "backslash (a quote doubler's \"\" literal ends in a later one)",
         0, 0},
        {QG_DIALECT_POSTGRES, "SHIFT_JIS_2004", QG_STD_STRINGS,
         "SELECT 1 AND tag = e'o''neil@example.coma--b@example.net"
         "\xe3\xe0\x8e\xb6\x96\xfa\xfb\xf1\xf7\\\\'",
         "an E'' string that goes on after a doubled quote into a block with a backslash "
         "(measure_rule find)",
         0, 0},
        {QG_DIALECT_MYSQL, "euckr", QG_NO_BACKSLASH_ESCAPES | QG_ANSI_QUOTES,
         "_binary'\xfe'_binary'\xfe''\\-'",
         "a lead byte before an introduced literal's quote, which S does not check, in a text "
         "with an ambiguous byte: every build compares the readings, as the reference does",
         0, 0},
    };
    for (size_t i = 0; i < sizeof finds / sizeof finds[0]; i++) {
        qg_context ctx;
        qg_context_init(&ctx, finds[i].dialect, qg_encoding_find(finds[i].dialect, finds[i].enc),
                        finds[i].flags);
        for (int r = 1; r < QG_REASON_COUNT; r++)
            if ((finds[i].ignored | finds[i].logged) & 1u << r)
                ctx.action[r] = finds[i].ignored & 1u << r ? QG_ACTION_IGNORE : QG_ACTION_LOG;
        qg_result ref;
        bool agree = fast_agrees(&ctx, finds[i].sql, strlen(finds[i].sql), &ref);
        tap_ok(agree && ref.count > 0, "%s (%u findings)", finds[i].why, ref.count);
    }
    /* Finds that both must read as clean: a lead-trusting escaper writes
     * a backslash only before ASCII, so its reading of a text with a high
     * byte after one is out of step. */
    static const struct {
        const char *enc;
        unsigned flags;
        const char *sql;
    } clean[] = {
        {"euckr", QG_NO_BACKSLASH_ESCAPES, "'\\\xe7\xcc'''\xe7\xcc''#\xcc\xf7'"},
        {"gbk", 0,
         "'\xa1\xa1\xa1\xa1\xa1\xa1\xa1\xa1\xa1\x95\\\xa1\xa1\xa1\xa1\xa1\xa1\xa1\xa1"
         "\xc8'''\\'\xa1\xa1\xa1\xa1\x95\\a'"},
    };
    for (size_t i = 0; i < sizeof clean / sizeof clean[0]; i++) {
        qg_context ctx;
        qg_context_init(&ctx, QG_DIALECT_MYSQL, qg_encoding_find(QG_DIALECT_MYSQL, clean[i].enc),
                        clean[i].flags);
        qg_result ref;
        bool agree = fast_agrees(&ctx, clean[i].sql, strlen(clean[i].sql), &ref);
        tap_ok(agree && ref.count == 0,
               "%s: a lead-trusting escaper's reading of a high byte after its backslash is out "
               "of step (%u findings)",
               clean[i].enc, ref.count);
    }
}

/* The checker settles a text of code, plain strings and comments
 * (no byte that starts anything else, closed single quotes outside
 * comments) before the lexer runs.  One byte changed anywhere in such
 * texts, shorter and longer than a vector, must give the reference's
 * verdict: a byte the quick scan forgot would pass an open quote,
 * identifier or comment, or an invalid character, as clean.  So must the
 * same with backslash escapes, which the quick scan follows where the
 * server reads them, and with PG's quoted names. */
/* Whether the quick scan settles the text (QG_QUICK_MULTIBYTE leaves it
 * to the reading as letters, QG_QUICK_UNSETTLED to the lexer). */
static bool quick_settles(const qg_context *ctx, const char *sql, size_t len)
{
    qg_quick_reading reading = qg_only_plain_strings(ctx, sql, len);
    return reading == QG_QUICK_CLEAN || reading == QG_QUICK_DOUBLER;
}

static void test_quick_scan(void)
{
    static const struct {
        qg_dialect dialect;
        const char *enc;
        unsigned flags;
    } ctxs[] = {
        {QG_DIALECT_POSTGRES, "UTF8", SCS_ON},
        {QG_DIALECT_POSTGRES, "SJIS", SCS_OFF},
        {QG_DIALECT_MYSQL, "utf8mb4", 0},
        {QG_DIALECT_MYSQL, "gbk", QG_ANSI_QUOTES},
        {QG_DIALECT_MYSQL, "latin1", QG_NO_BACKSLASH_ESCAPES},
    };
    static const char *const texts[] = {
        "SELECT 1",
        "SELECT 'it''s'",
        "SELECT a, b FROM t WHERE c = 1 AND d < 2 -- e",
        "SELECT c FROM sbtest1 WHERE id=4821 AND pad <> 'k4821'",
        "UPDATE t SET a = 'x', b = 'y''z' WHERE id = 12 AND c = 'abcdefgh'",
        "INSERT INTO events (kind, created_at, note) VALUES ('login', '2024-01-01', 'a - b'), "
        "('x', 'y', 'z')",
        "INSERT INTO customer (id, name, city, note, created_at) VALUES (48213, 'Ana Lopez', "
        "'Valparaiso', 'called twice about the invoice, wants a copy by mail', "
        "'2024-01-01 10:00:00'), (48214, 'Bo', 'Lund', 'no', '2024-01-02')",
        "/* app:checkout */ SELECT price FROM items WHERE sku = 'pk0e' AND store_id = 99",
        "SELECT count(*) FROM events WHERE kind = 'it''s' AND day > 'x' -- dashboard\n",
        "SELECT 'a--b', 'c/*d', 'e#f' /* it's */ FROM t -- it's\nWHERE x = 'y' / 2 -- '",
    };
    /* Comments that only MySQL reads as such. */
    static const char *const mysql_texts[] = {
        "SELECT a # it's\n FROM t WHERE b = 'c'",
    };
    /* Strings that end after a prefix's letter, then a backslash escape:
     * MySQL's quick scan knows that they closed (PG's strings may go on
     * across a newline: its scan is not asked), where backslashes escape. */
    static const char *const mysql_escaped[] = {
        "SELECT 'web', 'tax', 'Bob', 'Rob''b', 'a&' FROM t WHERE note = 'it\\'s' AND id = 1",
        "SELECT 'it''s', 'Bob''', 'c' FROM t WHERE note = 'it\\'s' AND id = 1",
    };
    /* Quoted names, which the quick scan reads in PG only, holding quotes
     * and comment openers, and strings holding double quotes. */
    static const char *const pg_texts[] = {
        "SELECT \"it's\", \"a--b\", \"c/*d\" FROM \"my t\" WHERE \"x\"\"y\" = 'say \"hi\"' -- \"\n",
        "UPDATE \"Orders\" SET \"note\" = 'it''s \"fine\"' /* \"x */ WHERE \"id\" = 1",
        "INSERT INTO \"customer\" (\"id\", \"name\", \"city's\") VALUES (1, 'Ana \"A\" Lopez', "
        "'x'), (2, '\"', '\"\"'), (3, '''', \"\"\"\")",
    };
    /* Plain strings with backslash escapes: runs of one to four backslashes,
     * escaped quotes at and across the edges of 16- and 32-byte vectors. */
    static const char *const escaped[] = {
        "SELECT 'it\\'s'",
        "UPDATE t SET a = 'a\\\\', b = 'c\\'d\\\\\\'e' WHERE id = 1",
        "INSERT INTO notes (id, body, tag) VALUES (7, 'don\\'t \\\\ stop\\'', 'a\\\\\\\\'), "
        "(8, '\\'\\'\\'\\'\\'\\'\\'\\'\\'\\'\\'\\'\\'\\'\\'\\'\\'\\'', 'y'), "
        "(9, 'the end\\\\', 'of it\\\\\\'s''')",
    };
    static const unsigned char bytes[] = {0,   '\'', '"', '`', '\\', '$', '/', 0x80, 0xc8, 0xff, '-',
                                          '#', '*',  ';', ' ', 'x',  'b', '&', '\n', '!',  'M'};
    /* After text that shifts them over every vector edge: an even count
     * with one quote in a comment (the string after it is open), and
     * comments of every kind, some not read as comments; an escape
     * inside a string that reads backslashes otherwise (X'', B'', U&''); a
     * run of backslashes before a quote; a backslash in code or last; an
     * escaped quote that leaves the string open; U&'' doubling a quote
     * before an escape, X'' after one, X'' not doubling; X'' after a comment
     * or name that holds a quote, its backslash a 64-byte span on; a
     * comment's end that a star follows. */
    static const char *const hidden[] = {
        "SELECT 1 -- it's\n+ 'xxxxxxxxxxxxxxxxxxxxxx",
        "SELECT 1 # it's\n+ 'xxxxxxxxxxxxxxxxxxxxxx",
        "SELECT 1 + X'\\'' + 'xxxxxxxxxxxxxxxxxxxxxx'",
        "SELECT 1 + b'\\'' + 'xxxxxxxxxxxxxxxxxxxxxx'",
        "SELECT 1 + x'\\'' + 'xxxxxxxxxxxxxxxxxxxxxx'",
        "SELECT 1 + B'\\'' + 'xxxxxxxxxxxxxxxxxxxxxx'",
        "SELECT 1 + U&'\\'' + 'xxxxxxxxxxxxxxxxxxxxx'",
        "SELECT 1 + 'a\\\\\\'' + 'xxxxxxxxxxxxxxxxxxxxx'",
        "SELECT 1 + 'a\\\\' + 'xxxxxxxxxxxxxxxxxxxxxxx'",
        "SELECT 1 + \\'a' + 'xxxxxxxxxxxxxxxxxxxxxxx'",
        "SELECT 1 + 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\\",
        "SELECT 1 + 'xxxxxxxxxxxxxxxxxxxxxxxxxxx\\' + 2",
        "SELECT 1 + U&'a''b\\'' + 'xxxxxxxxxxxxxxxxxxxx'",
        "SELECT 1 + 'a\\'b' + X'\\'' + 'xxxxxxxxxxxxxxxx'",
        "SELECT 1 + X'4''b\\'' + 'xxxxxxxxxxxxxxxxxxxx'",
        "SELECT 1 /* it's */ + 'xxxxxxxxxxxxxxxxxxxxxxx'",
        "SELECT 1 /* /* it's */ + 'x' */ + 'xxxxxxxxxxxx'",
        "SELECT 1 /* a */* 'x */ 'xxxxxxxxxxxxxxxxxxxxxx'",
        "SELECT 1 /*! it's */ + 'xxxxxxxxxxxxxxxxxxxxxx'",
        "SELECT 1 /*M! it's */ + 'xxxxxxxxxxxxxxxxxxxxx'",
        "SELECT 1 --it's\n+ 'xxxxxxxxxxxxxxxxxxxxxxxxx'",
        "SELECT 'a' /* it's + 'xxxxxxxxxxxxxxxxxxxxxx'",
        "SELECT 'a'\n-- it's\n'b' + 'xxxxxxxxxxxxxxxxxxx'",
        "SELECT 1 / 2 + 'it''s' + 'xxxxxxxxxx' -- ok",
        "SELECT 1 - -2 + 'it''s' + 'xxxxxxxxxx' # ok",
        "SELECT 1 + \"it's\" + 'xxxxxxxxxxxxxxxxxxxx",
        "SELECT 1 + 'a\"b' + \"xxxxxxxxxxxxxxxxxxxxx",
        "SELECT 1 + \"a\"\"b\" + 'xxxxxxxxxxxxxxxxxxxx",
        "SELECT 1 -- \"\n + 'xxxxxxxxxxxxxxxxxxxxxxxx",
        "SELECT 1 + \"/*\" + 'x' + \"*/\" + 'xxxxxxxxx",
        "SELECT 1 + \"--\" + 'it''s' + 'xxxxxxxxxxxx'",
        "SELECT 1 + \"a\\\" + 'b\\'' + 'xxxxxxxxxxx'",
        "SELECT 1 + U&\"a\\0061\" + 'xxxxxxxxxxxxxxx'",
        "SELECT 1 + \"x\" + X'\\'' + 'xxxxxxxxxxxxxx'",
        "SELECT 1 -- it's\n+ X'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\\'' + 'x'",
        "SELECT 1 # it's\n+ X'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\\'' + 'x'",
        "SELECT 1 /* it's */ + X'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\\'' + 'x'",
        "SELECT \"it's\" + X'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\\'' + 'x'",
    };
    size_t ntexts = sizeof texts / sizeof texts[0], nescaped = sizeof escaped / sizeof escaped[0];
    size_t nmysql = sizeof mysql_texts / sizeof mysql_texts[0];
    size_t npg = sizeof pg_texts / sizeof pg_texts[0];
    unsigned queries = 0, differ = 0, unclean = 0, texts_clean = 0, scanned_plain = 0;
    /* The quick scan itself, every build, in every context: it settles
     * them (else each one would go to the lexer, agreeing but slow); MySQL's
     * comments in MySQL only, backslash escapes only where they escape,
     * quoted names in PG only. */
    unsigned mysql_settled = 0, escaped_settled = 0, escaping = 0, mysqls = 0, pg_settled = 0;
    unsigned mysql_escaped_settled = 0, mysql_escaping = 0;
    size_t nmysql_escaped = sizeof mysql_escaped / sizeof mysql_escaped[0];
    size_t longest = 0, nctxs = sizeof ctxs / sizeof ctxs[0];
    for (size_t t = 0; t < ntexts; t++)
        longest = strlen(texts[t]) > longest ? strlen(texts[t]) : longest;
    for (size_t c = 0; c < nctxs; c++) {
        qg_context ctx;
        qg_context_init(&ctx, ctxs[c].dialect, qg_encoding_find(ctxs[c].dialect, ctxs[c].enc),
                        ctxs[c].flags);
        bool mysql = ctxs[c].dialect == QG_DIALECT_MYSQL, escapes = qg_plain_strings_escape(&ctx);
        mysqls += mysql;
        escaping += escapes;
        mysql_escaping += mysql && escapes;
        for (int build = QG_VECTORS_SSE2; build <= QG_VECTORS_WIDEST; build++) {
            qg_allow_vectors(build);
            for (size_t t = 0; t < ntexts; t++)
                scanned_plain += quick_settles(&ctx, texts[t], strlen(texts[t]));
            scanned_plain += quick_settles(&ctx, NULL, 0); /* the empty text */
            for (size_t t = 0; t < nmysql; t++)
                mysql_settled +=
                    quick_settles(&ctx, mysql_texts[t], strlen(mysql_texts[t])) == mysql;
            for (size_t t = 0; t < nescaped; t++)
                escaped_settled +=
                    quick_settles(&ctx, escaped[t], strlen(escaped[t])) == escapes;
            for (size_t t = 0; t < npg; t++)
                pg_settled += quick_settles(&ctx, pg_texts[t], strlen(pg_texts[t])) == !mysql;
            for (size_t t = 0; t < nmysql_escaped && mysql; t++)
                mysql_escaped_settled +=
                    quick_settles(&ctx, mysql_escaped[t], strlen(mysql_escaped[t])) ==
                    escapes;
            qg_allow_vectors(QG_VECTORS_WIDEST);
        }
    }
    tap_ok(scanned_plain == QG_VECTOR_BUILDS * nctxs * (ntexts + 1),
           "the quick scan (every build) settles texts of code, plain strings and comments, "
           "0-%zu bytes",
           longest);
    tap_ok(mysqls == 3 && mysql_settled == QG_VECTOR_BUILDS * nctxs * nmysql,
           "... and hash comments in MySQL only");
    tap_ok(escaping == 3 && escaped_settled == QG_VECTOR_BUILDS * nctxs * nescaped,
           "... and backslash escapes (%zu-%zu bytes) where they escape, only",
           strlen(escaped[0]), strlen(escaped[nescaped - 1]));
    tap_ok(mysql_escaping == 2 &&
               mysql_escaped_settled == QG_VECTOR_BUILDS * mysqls * nmysql_escaped,
           "... and, where MySQL's backslashes escape, strings closed after x, b or & before "
           "an escape");
    tap_ok(pg_settled == QG_VECTOR_BUILDS * nctxs * npg,
           "... and quoted names in PG only (%zu-%zu bytes)", strlen(pg_texts[1]),
           strlen(pg_texts[2]));
    for (size_t c = 0; c < nctxs; c++) {
        qg_context ctx;
        qg_context_init(&ctx, ctxs[c].dialect, qg_encoding_find(ctxs[c].dialect, ctxs[c].enc),
                        ctxs[c].flags);
        /* ... at every offset */
        for (size_t h = 0; h < sizeof hidden / sizeof hidden[0]; h++)
            for (int pad = 0; pad < 40; pad++) {
                char sql[128];
                int n = snprintf(sql, sizeof sql, "SELECT %.*s%s", pad,
                                 "1+2+3+4+5+6+7+8+9+1+2+3+4+5+6+7+8+9+1+2+", hidden[h] + 7);
                qg_result ref;
                if (!fast_agrees(&ctx, sql, (size_t)n, &ref) && differ++ < 3)
                    tap_ok(false, "%s: \"%s\": fast and reference differ", ctxs[c].enc, sql);
                unclean += ref.verdict != QG_VERDICT_CLEAN;
                queries++;
            }
        for (size_t t = 0; t < ntexts + nescaped + nmysql + npg; t++) {
            size_t mysql_at = ntexts + nescaped, pg_at = mysql_at + nmysql;
            const char *text = t < ntexts     ? texts[t]
                               : t < mysql_at ? escaped[t - ntexts]
                               : t < pg_at    ? mysql_texts[t - mysql_at]
                                              : pg_texts[t - pg_at];
            size_t n = strlen(text);
            texts_clean += qg_check(&ctx, text, n, NULL) == QG_VERDICT_CLEAN;
            for (size_t at = 0; at < n; at++)
                for (size_t b = 0; b < sizeof bytes; b++) {
                    char sql[256];
                    memcpy(sql, text, n);
                    sql[at] = (char)bytes[b];
                    qg_result ref;
                    if (!fast_agrees(&ctx, sql, n, &ref) && differ++ < 3)
                        tap_ok(false, "%s: \"%.*s\": fast and reference differ", ctxs[c].enc,
                               (int)n, sql);
                    unclean += ref.verdict != QG_VERDICT_CLEAN;
                    queries++;
                }
        }
    }
    /* The escaped texts are clean only where backslashes escape, in three
     * of the contexts; the MySQL comments in MySQL's three; the quoted
     * names everywhere (in MySQL, strings or names). */
    tap_ok(texts_clean == nctxs * (ntexts + npg) + 3 * nescaped + 3 * nmysql,
           "short texts of code and plain strings are clean");
    tap_ok(differ == 0 && unclean > 1000,
           "one byte changed in them: %u queries (%u not clean), %u differ", queries, unclean,
           differ);
}

/* Every byte value c, at every position of texts of 13, 40, 64, 100, 192
 * and 400 bytes (one lane, padded; lanes that overlap; whole lanes; spans
 * of two lanes that overlap; in the AVX2 and AVX-512 builds, 128 bytes
 * read at once, up to the text's end or not), in every build of the quick
 * scan, in both dialects with and without backslash escapes.
 * After an empty string and letters:
 *   c alone: settled unless c stops the scan (NUL, a high byte, a
 *     backtick; in PG a dollar without a digit after it; a backslash, in
 *     code; a double quote in MySQL) or
 *     opens what stays open (a quote: one more; in PG a double quote, a
 *     name);
 *   c, then "- '" and a newline: settled when c makes the dashes a comment
 *     that hides the quote, or is a MySQL hash comment, or a quote;
 *   c, then "*'*" and a slash: settled when c opens a comment (slash) that
 *     hides the quote, or a MySQL hash comment to the end, or a quote.
 * A byte classed wrongly (a quote that is none, a stop or comment opener
 * missed) changes one of the answers. */
static void test_quick_scan_bytes(void)
{
    static const size_t lengths[] = {13, 40, 64, 100, 192, 400};
    static const char *const after[] = {"", "- '\n", "*'*/"};
    static const struct {
        qg_dialect dialect;
        unsigned flags;
    } ctxs[] = {{QG_DIALECT_POSTGRES, SCS_ON},
                {QG_DIALECT_POSTGRES, SCS_OFF},
                {QG_DIALECT_MYSQL, 0},
                {QG_DIALECT_MYSQL, QG_NO_BACKSLASH_ESCAPES}};
    unsigned checked = 0, wrong = 0;
    for (int build = QG_VECTORS_SSE2; build <= QG_VECTORS_WIDEST; build++) {
        qg_allow_vectors(build);
        for (size_t x = 0; x < sizeof ctxs / sizeof ctxs[0]; x++) {
            qg_context ctx;
            qg_context_init(&ctx, ctxs[x].dialect, qg_encoding_find(ctxs[x].dialect, "latin1"),
                            ctxs[x].flags);
            bool pg = ctxs[x].dialect == QG_DIALECT_POSTGRES;
            for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++)
                for (size_t k = 0; k < sizeof after / sizeof after[0]; k++)
                    for (unsigned c = 0; c < 256; c++) {
                        size_t len = lengths[l], tail = strlen(after[k]);
                        bool stops = c == 0 || c >= 0x80 || strchr("\"`\\", (int)c) != NULL ||
                                     (c == '$' && pg);
                        bool hash_comment = c == '#' && !pg;
                        bool settled_want =
                            !stops && (k == 0 ? c != '\'' : c == '\'' || hash_comment ||
                                                                (k == 1 ? c == '-' : c == '/'));
                        for (size_t at = 2; at + tail < len; at++) {
                            char text[400];
                            memset(text, 'a', len);
                            text[0] = text[1] = '\''; /* an empty string first */
                            text[at] = (char)c;
                            memcpy(text + at + 1, after[k], tail);
                            bool settled = quick_settles(&ctx, text, len);
                            if (settled != settled_want && wrong++ < 3)
                                tap_ok(false, "%s build, context %zu, %zu bytes, 0x%02x then \"%s\" at %zu: %s",
                                       build_name[build], x, len, c,
                                       after[k], at, settled ? "settled" : "not settled");
                            checked++;
                        }
                    }
        }
        qg_allow_vectors(QG_VECTORS_WIDEST);
    }
    tap_ok(wrong == 0,
           "the quick scan classes every byte value at every position: %u texts, %u wrong",
           checked, wrong);
}

/* Dollar signs: PG's parameters ($1) are settled by the quick scan across
 * the edges of vectors, and so is any dollar in a string or comment; a
 * dollar in code that may open a dollar quote is the lexer's.  In MySQL a
 * dollar is a word byte. */
static void test_quick_scan_dollars(void)
{
    static const char *const params[] = {
        "SELECT abalance FROM pgbench_accounts WHERE aid = $1",
        "UPDATE t SET a = $1, b = '$2', c = 'it''s' WHERE id = $12 -- $3\n",
        "SELECT 1 FROM t WHERE a = $1 AND b = 'US$ 100' /* $$ */ AND c = 2",
        "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, "
        "CURRENT_TIMESTAMP) /* $5 */",
    };
    /* each is the lexer's in PG, and settled in MySQL */
    static const char *const openers[] = {
        "SELECT $$it''s$$ FROM t WHERE id = 1 AND name = 'x'",
        "SELECT $a$ it''s $a$ FROM t WHERE id = $1 AND name = 'x'",
        "SELECT a$b FROM t WHERE id = $1 AND name = 'x' AND c = $",
        "SELECT 1 FROM t WHERE a = $_$ x $_$ AND b = 2 AND c = 3 AND $1",
    };
    /* cut after its dollar: the digit that follows is not the text's */
    static const char cut[] = "SELECT abalance FROM pgbench_accounts WHERE aid = $1";
    unsigned settled = 0, left = 0, mysql_settled = 0, checks = 0, differ = 0, cut_left = 0;
    for (int mysql = 0; mysql < 2; mysql++) {
        qg_context ctx;
        qg_dialect d = mysql ? QG_DIALECT_MYSQL : QG_DIALECT_POSTGRES;
        qg_context_init(&ctx, d, qg_encoding_find(d, mysql ? "utf8mb4" : "UTF8"),
                        mysql ? 0 : SCS_ON);
        for (int build = QG_VECTORS_SSE2; build <= QG_VECTORS_WIDEST; build++) {
            qg_allow_vectors(build);
            for (size_t t = 0; t < sizeof params / sizeof params[0]; t++)
                for (int pad = 0; pad < 40; pad++) {
                    char sql[256];
                    int n = snprintf(sql, sizeof sql, "SELECT %.*s%s", pad,
                                     "1+2+3+4+5+6+7+8+9+1+2+3+4+5+6+7+8+9+1+2+", params[t] + 7);
                    settled += quick_settles(&ctx, sql, (size_t)n);
                    qg_result ref;
                    differ += !fast_agrees(&ctx, sql, (size_t)n, &ref);
                    checks++;
                }
            for (size_t t = 0; t < sizeof openers / sizeof openers[0]; t++) {
                bool quick = quick_settles(&ctx, openers[t], strlen(openers[t]));
                left += !mysql && !quick;
                mysql_settled += mysql && quick;
                qg_result ref;
                differ += !fast_agrees(&ctx, openers[t], strlen(openers[t]), &ref);
            }
            cut_left += !mysql && !quick_settles(&ctx, cut, sizeof cut - 2);
            qg_allow_vectors(QG_VECTORS_WIDEST);
        }
    }
    size_t nopeners = sizeof openers / sizeof openers[0];
    tap_ok(settled == checks && left == QG_VECTOR_BUILDS * nopeners &&
               mysql_settled == QG_VECTOR_BUILDS * nopeners && cut_left == QG_VECTOR_BUILDS &&
               differ == 0,
           "the quick scan (every build) settles PG's parameters at every offset (%u texts), and "
           "leaves a dollar that may open a dollar quote to the lexer in PG only, or one that "
           "ends the text; fast and reference agree (%u differ)",
           checks, differ);
}

/* Texts of any length go to the quick scan first: a 5 KB batch of rows with
 * comments and escapes (two escaped quotes a row) is settled there in every
 * build, a quote doubler's reading too (it ends at the second backslash,
 * before any comment); a byte that stops
 * the scan in a string near its start, middle or end leaves it to the
 * lexer, with the reference's verdict. */
static void test_quick_scan_long(void)
{
    static const char row[] = "(1, 'it''s', 'a\\'b\\'c', 'x--y') /* r */, -- row\n";
    static const unsigned char stops[] = {'"', '`', 0x80, 0};
    qg_context ctx;
    qg_context_init(&ctx, QG_DIALECT_MYSQL, qg_encoding_find(QG_DIALECT_MYSQL, "utf8mb4"), 0);
    char text[5000];
    size_t len = 0;
    while (len + sizeof row < sizeof text) {
        memcpy(text + len, row, sizeof row - 1);
        len += sizeof row - 1;
    }
    unsigned settled = 0, differ = 0, checks = 0, left = 0;
    for (int build = QG_VECTORS_SSE2; build <= QG_VECTORS_WIDEST; build++) {
        qg_allow_vectors(build);
        settled += qg_only_plain_strings(&ctx, text, len) == QG_QUICK_CLEAN;
        qg_allow_vectors(QG_VECTORS_WIDEST);
    }
    static const size_t places[] = {5, 2480, 4955}; /* in the first, middle and last rows' strings */
    for (size_t p = 0; p < sizeof places / sizeof places[0]; p++)
        for (size_t b = 0; b < sizeof stops; b++) {
            char copy[sizeof text];
            memcpy(copy, text, len);
            copy[places[p]] = (char)stops[b];
            qg_result ref;
            differ += !fast_agrees(&ctx, copy, len, &ref);
            left += !quick_settles(&ctx, copy, len);
            checks++;
        }
    tap_ok(settled == QG_VECTOR_BUILDS && left == checks && differ == 0,
           "a %zu-byte batch is settled by the quick scan (every build); with a stopping byte "
           "near its start, middle or end, it is not, and fast and reference agree (%u texts, "
           "%u left to the lexer, %u differ)",
           len, checks, left, differ);
}

/* Long texts where backslashes escape, read on from a backslash in their
 * first string (the AVX2 and AVX-512 builds read such texts 64 bytes at a
 * time while nothing but quotes and escapes in strings needs reading): a
 * probe at every position of 192- and 400-byte texts, so that it also
 * straddles every edge of 64 bytes, in MySQL and in PG with
 * standard_conforming_strings off, in every build.  An escaped quote in a
 * string, an escaped backslash and comments that hide a quote are
 * settled (after an even number of escaped quotes: see
 * test_quick_scan_doubler), and so is a string after h or r (which the AVX2 and AVX-512
 * builds' spans first take for a prefix); a string after a prefix (X'',
 * B'', U&'', either case), a backslash in code, a high byte, a backtick
 * and a double quote are the lexer's; fast and reference agree on every
 * text. */
static void test_quick_scan_escapes_long(void)
{
    static const struct {
        const char *probe;
        bool settled;
    } probes[] = {{"'a\\'c'", true}, {"'\\\\'", true}, {"-- '\n", true},
                  {"/* ' */", true}, {"x'61'", false}, {"X'61'", false},
                  {"b'1'", false},   {"B'1'", false},  {"U&'1'", false},
                  {"h'1'", true},    {"R'1'", true},   {"\\'", false},
                  {"'\xc3\xa9'", false}, {"`a`", false}, {"\"a\"", false}};
    static const size_t lengths[] = {192, 400};
    static const struct {
        qg_dialect dialect;
        const char *enc;
        unsigned flags;
    } ctxs[] = {{QG_DIALECT_MYSQL, "utf8mb4", 0}, {QG_DIALECT_POSTGRES, "UTF8", SCS_OFF}};
    unsigned checks = 0, wrong = 0, differ = 0;
    for (size_t c = 0; c < sizeof ctxs / sizeof ctxs[0]; c++) {
        qg_context ctx;
        qg_context_init(&ctx, ctxs[c].dialect, qg_encoding_find(ctxs[c].dialect, ctxs[c].enc),
                        ctxs[c].flags);
        for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++)
            for (size_t k = 0; k < sizeof probes / sizeof probes[0]; k++) {
                size_t len = lengths[l], n = strlen(probes[k].probe);
                for (size_t at = 7; at + n < len; at++) {
                    char text[400];
                    memset(text, 'a', len);
                    memcpy(text, "'\\'\\'' ", 7); /* a string with two escaped quotes */
                    memcpy(text + at, probes[k].probe, n);
                    for (int build = QG_VECTORS_SSE2; build <= QG_VECTORS_WIDEST; build++) {
                        qg_allow_vectors(build);
                        bool settled = quick_settles(&ctx, text, len);
                        if (settled != probes[k].settled && wrong++ < 3)
                            tap_ok(false, "%s build, %s, %zu bytes, \"%s\" at %zu: %s",
                                   build_name[build], ctxs[c].enc, len, probes[k].probe, at,
                                   settled ? "settled" : "not settled");
                        checks++;
                    }
                    qg_allow_vectors(QG_VECTORS_WIDEST);
                    qg_result ref;
                    differ += !fast_agrees(&ctx, text, len, &ref);
                }
            }
    }
    tap_ok(wrong == 0 && differ == 0,
           "long texts with backslash escapes: escaped quotes, escaped backslashes and comments "
           "are settled by the quick scan, prefixed strings, backslashes in code, high bytes, "
           "backticks and double quotes are not, at every position (%u texts, %u wrong); fast "
           "and reference agree (%u differ)",
           checks, wrong, differ);
}

/* A comment after an odd number of escaped quotes, with a quote after it,
 * is inside a quote doubler's literal, which may end there: the quick
 * scan (every build) leaves such a text to the lexer, at every position of a 192- and 400-byte text, and the checker
 * blocks the doubler's injection there ('\'' OR 1=1 --'); after an even
 * number the text is settled. */
static void test_quick_scan_doubler(void)
{
    static const size_t lengths[] = {192, 400};
    qg_context ctx;
    qg_context_init(&ctx, QG_DIALECT_MYSQL, qg_encoding_find(QG_DIALECT_MYSQL, "utf8mb4"), 0);
    unsigned checks = 0, wrong = 0, blocked = 0, attacks = 0;
    for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
        size_t len = lengths[l];
        for (size_t at = 0; at + 40 < len; at++) {
            char text[400];
            memset(text, 'a', len);
            memcpy(text + at, "'x\\'y' -- '\n", 12);  /* odd, a quote after: the lexer's */
            char even[400];
            memcpy(even, text, len);
            memcpy(even + at, "'\\'\\'' -- c\n", 12); /* even: settled */
            for (int build = QG_VECTORS_SSE2; build <= QG_VECTORS_WIDEST; build++) {
                qg_allow_vectors(build);
                wrong += quick_settles(&ctx, text, len);
                wrong += !quick_settles(&ctx, even, len);
                checks += 2;
            }
            qg_allow_vectors(QG_VECTORS_WIDEST);
            char attack[400];
            memset(attack, 'a', len);
            memcpy(attack + at, "'\\'' OR 1=1 -- '", 17);
            attacks++;
            blocked += qg_check(&ctx, attack, len, NULL) == QG_VERDICT_BLOCK;
        }
    }
    tap_ok(wrong == 0 && blocked == attacks,
           "a comment after an odd number of escaped quotes leaves the text to the lexer, after "
           "an even number it is settled (%u texts, %u wrong); a quote doubler's injection is "
           "blocked at every position (%u of %u)",
           checks, wrong, blocked, attacks);
}

/* MySQL, where backslashes escape: the quick scan settles the server's
 * reading and asks for a quote doubler's where a quote escaped by a
 * backslash comes before something in the doubler's code (the server's
 * strings) that may open a comment (a hash, two dashes, slash star),
 * unless the doubler's reading ends first, at the next backslash (in its
 * code: nothing but strings since the escaped quote; after a slash or
 * dollar, the search for a comment opener goes on).  A comment in the
 * server's code after the escaped quote is text in the doubler's last
 * literal, open at the text's end: settled.  A comment holding a
 * backslash is the lexer's, and so is a string after x, b or &, not one
 * after h or r (which the vector builds' classes take for prefixes too).  At every position of a 192- and a 400-byte
 * text (so across every vector edge), in every build; fast and reference
 * agree, and the quote doubler's output closed by a prose comment is
 * blocked wherever it lies. */
static void test_quick_scan_doubler_comment(void)
{
/* a comment opener this far from an escaped quote is in another span */
#define SIXTY_FOUR "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    static const struct {
        const char *probe;
        qg_quick_reading want;
    } probes[] = {
        {"'x\\'y' -- c\n", QG_QUICK_CLEAN},  {"'x\\'y--z'", QG_QUICK_DOUBLER},
        {"'x\\'y#z'", QG_QUICK_DOUBLER},      {"'x\\'y/*z'", QG_QUICK_DOUBLER},
        {"'x\\'' # c\n", QG_QUICK_CLEAN},    {"'x\\''/* c */", QG_QUICK_CLEAN},
        {"'x\\'y/z'", QG_QUICK_CLEAN},        {"'x\\'y-z-'", QG_QUICK_CLEAN},
        {"'x-\\'-y'", QG_QUICK_CLEAN},        {"'x--\\'y'", QG_QUICK_CLEAN},
        {"'#/*\\''", QG_QUICK_CLEAN},         {"'\\\\' -- c\n", QG_QUICK_CLEAN},
        {"'x\\'y$z'", QG_QUICK_CLEAN},        {"'x\\'y*/z'", QG_QUICK_CLEAN},
        {"'x\\'y\\n' -- c\n", QG_QUICK_CLEAN}, {"'x\\'y\\'' # c\n", QG_QUICK_CLEAN},
        {"'x\\'/\\'' -- c\n", QG_QUICK_DOUBLER}, {"'x\\'$\\'' # c\n", QG_QUICK_DOUBLER},
        {"'x\\'y', 'z\\n' # c\n", QG_QUICK_CLEAN},
        {"/* c */ 'x\\'y' " SIXTY_FOUR " -- c\n", QG_QUICK_CLEAN},
        {"# c\n 'x\\'y' " SIXTY_FOUR " /* c */", QG_QUICK_CLEAN}, {"'\\\\\\'y' # c\n", QG_QUICK_CLEAN},
        {"'x\\'y' / 2 -- c\n", QG_QUICK_CLEAN}, {"'x\\'y' " SIXTY_FOUR " # c\n", QG_QUICK_CLEAN},
        {"'x\\'y', 'z--' # c\n", QG_QUICK_DOUBLER}, {"'x\\'y', '" SIXTY_FOUR "#' # c\n", QG_QUICK_DOUBLER},
        {"'x\\'y' -- c\n 'z'", QG_QUICK_UNSETTLED},
        {"'x\\'y', h'z'", QG_QUICK_CLEAN}, {"'x\\'y', R'z'", QG_QUICK_CLEAN},
        {"'x\\'y', b'1'", QG_QUICK_UNSETTLED}, {"'x\\'y', &'z'", QG_QUICK_UNSETTLED},
        {"/* \\' */ 'x'", QG_QUICK_UNSETTLED}, {"# \\'\n 'x'", QG_QUICK_UNSETTLED},
    };
    static const size_t lengths[] = {192, 400};
    static const char attack[] = "'\\'' OR ''a''=''a' -- the user's e-mail\n";
    qg_context ctx;
    qg_context_init(&ctx, QG_DIALECT_MYSQL, qg_encoding_find(QG_DIALECT_MYSQL, "utf8mb4"), 0);
    unsigned checks = 0, wrong = 0, differ = 0, attacks = 0, blocked = 0;
    for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
        size_t len = lengths[l];
        for (size_t k = 0; k < sizeof probes / sizeof probes[0]; k++) {
            size_t n = strlen(probes[k].probe);
            for (size_t at = 7; at + n + 3 < len; at++) {
                char text[400];
                memset(text, 'a', len);
                memcpy(text, "SELECT ", 7);
                memcpy(text + at, probes[k].probe, n);
                for (int build = QG_VECTORS_SSE2; build <= QG_VECTORS_WIDEST; build++) {
                    qg_allow_vectors(build);
                    qg_quick_reading got = qg_only_plain_strings(&ctx, text, len);
                    if (got != probes[k].want && wrong++ < 3)
                        tap_ok(false, "%s build, %zu bytes, \"%s\" at %zu: %d", build_name[build],
                               len, probes[k].probe, at, (int)got);
                    checks++;
                }
                qg_allow_vectors(QG_VECTORS_WIDEST);
                qg_result ref;
                differ += !fast_agrees(&ctx, text, len, &ref);
            }
        }
        for (size_t at = 7; at + sizeof attack + 2 < len; at++) {
            char text[400];
            memset(text, 'a', len);
            memcpy(text, "SELECT ", 7);
            memcpy(text + at, attack, sizeof attack - 1);
            qg_result ref;
            differ += !fast_agrees(&ctx, text, len, &ref);
            blocked += ref.verdict == QG_VERDICT_BLOCK && qg_check(&ctx, text, len, NULL) ==
                                                               QG_VERDICT_BLOCK;
            attacks++;
        }
    }
    tap_ok(wrong == 0 && differ == 0 && blocked == attacks,
           "the quick scan asks for a quote doubler's reading where an escaped quote comes "
           "before a comment opener in its code, at every position (%u texts, %u wrong); fast and "
           "reference agree (%u differ); the doubler's output a prose comment closes is "
           "blocked (%u of %u)",
           checks, wrong, differ, blocked, attacks);
#undef SIXTY_FOUR
}

int main(void)
{
    tap_diag("vector builds: this CPU runs up to %s", build_name[qg_cpu_vectors()]);
    test_fuzzer_finds();
    test_quick_scan();
    test_quick_scan_bytes();
    test_quick_scan_dollars();
    test_quick_scan_long();
    test_quick_scan_escapes_long();
    test_quick_scan_doubler();
    test_quick_scan_doubler_comment();
    test_reference_agrees();
    test_backslash_free_texts_read_alike();
    test_blocks_cut_characters();
    test_blocks_pairs();
    test_long_bodies();
    test_utf8_blocks();
    test_reads_stay_inside();
    test_blocks_rules_from_afar();
    test_many_literals();
    test_rule_cases();
    test_verdicts_and_spans();
    return tap_done();
}
