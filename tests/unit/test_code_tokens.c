/* The one split of a query into tokens (src/core/code_tokens.c): each
 * dialect's words, numbers, parameters, operators (PostgreSQL's as scan.l
 * ends them) and punctuation between the lexer's tokens, executable
 * comments, and the lexer's tokens kind for kind. */
#include <stdio.h>
#include <string.h>

#include "code_tokens.h"
#include "tap.h"

/* The tokens of sql, written as "kind:text" joined by spaces. */
static void split(const qg_context *ctx, const char *sql, char *out, size_t cap)
{
    static const char *const names[] = {
        [QG_CODE_END] = "end",   [QG_CODE_WORD] = "w",       [QG_CODE_NUMBER] = "n",
        [QG_CODE_PARAM] = "p",   [QG_CODE_OPERATOR] = "op",  [QG_CODE_PUNCT] = "pu",
        [QG_CODE_STRING] = "s",  [QG_CODE_QIDENT] = "q",     [QG_CODE_DOLLAR] = "d",
        [QG_CODE_COMMENT] = "c", [QG_CODE_EXEC_OPEN] = "x(", [QG_CODE_EXEC_CLOSE] = "x)"};
    qg_code_tokens ct;
    qg_code_token t;
    size_t used = 0;
    out[0] = '\0';
    qg_code_tokens_init(&ct, ctx, sql, strlen(sql));
    while (qg_code_next(&ct, &t) && used < cap) {
        bool broken = t.kind >= QG_CODE_STRING && t.kind <= QG_CODE_COMMENT && t.unterminated;
        int n = snprintf(out + used, cap - used, "%s%s%s:%.*s", used ? " " : "", names[t.kind],
                         broken ? "!" : "", (int)(t.end - t.start), sql + t.start);
        used += n > 0 ? (size_t)n : 0;
    }
}

static void expect(const qg_context *ctx, const char *sql, const char *tokens)
{
    char got[1024], name[256];
    size_t n = 0;
    for (const char *c = sql; *c && n + 5 < sizeof name; c++) /* printable on one TAP line */
        n += (size_t)snprintf(name + n, sizeof name - n,
                              (unsigned char)*c < 0x20 || (unsigned char)*c >= 0x80 ? "\\x%02x"
                                                                                    : "%c",
                              (unsigned char)*c);
    split(ctx, sql, got, sizeof got);
    if (!tap_ok(strcmp(got, tokens) == 0, "%s", name))
        printf("# got:    %s\n# wanted: %s\n", got, tokens);
}

int main(void)
{
    qg_context pg, pg_sjis, my;
    qg_context_init(&pg, QG_DIALECT_POSTGRES, qg_encoding_find(QG_DIALECT_POSTGRES, "UTF8"),
                    QG_STD_STRINGS);
    qg_context_init(&pg_sjis, QG_DIALECT_POSTGRES, qg_encoding_find(QG_DIALECT_POSTGRES, "SJIS"),
                    QG_STD_STRINGS);
    qg_context_init(&my, QG_DIALECT_MYSQL, qg_encoding_find(QG_DIALECT_MYSQL, "utf8mb4"), 0);

    expect(&pg, "SELECT a, 1.5e+3 FROM t WHERE id=$1",
           "w:SELECT w:a pu:, n:1.5e+3 w:FROM w:t w:WHERE w:id op:= p:$1");
    /* scan.l: a trailing sign leaves an operator unless it holds ~ ! @ # % ^ & | ` ? */
    expect(&pg, "a=-1 b!=-1 c~-1 d<>+.5",
           "w:a op:= op:- n:1 w:b op:!=- n:1 w:c op:~- n:1 "
           "w:d op:<> op:+ n:.5");
    expect(&pg, "x::int, y := 2, z ?| w, $ 1",
           "w:x pu::: w:int pu:, w:y op::= n:2 pu:, w:z op:?| "
           "w:w pu:, pu:$ n:1");
    expect(&pg, "E'it''s' || \"N\" -- c\n$q$x$q$ /* b */ 'open",
           "s:E'it''s' op:|| q:\"N\" c:-- c d:$q$x$q$ c:/* b */ s!:'open");
    /* an SJIS character whose trail byte is a backslash is one letter of a word */
    expect(&pg_sjis,
           "SELECT \x95\x5c"
           "a FROM t",
           "w:SELECT w:\x95\x5c"
           "a w:FROM w:t");

    expect(&my, "SELECT ?, @a:=1, x<=>-2 # c\n",
           "w:SELECT p:? pu:, pu:@ w:a op::= n:1 pu:, "
           "w:x op:<=>- n:2 c:# c");
    expect(&my, "SELECT /*!50000 a+*/ b /*M!100000 c */",
           "w:SELECT x(:/*!50000 w:a op:+ x):*/ "
           "w:b x(:/*M!100000 w:c x):*/");
    expect(&my, "SELECT 0x1F, x'41', `q`, \"dq\", $a",
           "w:SELECT n:0x1F pu:, s:x'41' pu:, q:`q` "
           "pu:, s:\"dq\" pu:, pu:$ w:a");
    return tap_done();
}
