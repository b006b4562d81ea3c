/* A legacy libpq client for the rewrite-mode comparison (tests/t/60-rewrite.t).
 * It recreates schema "rw" in the database it is pointed at, runs a fixed
 * table of queries and prints everything an application could look at, one
 * item per line:
 *   <id> expect=R|L|K api=exec|send
 *   <id> result <n> status=… cmd=… tuples=… oid=… nfields=… txn=…
 *   <id> field <i> name=… type=… mod=… format=…
 *   <id> row <r> v|v|…            (bytes outside printable ASCII as \xHH, NULL as \N)
 *   <id> error sqlstate=… severity=… message=… detail=… hint=…
 *   <id> position … / <id> context …
 *   <id> notice severity=… sqlstate=… message=…
 * Run once with QUOTEGUARD_MODE=off and once with rewrite on fresh databases:
 * the outputs must be identical.  Each query starts with a comment naming its
 * id, so the server log tells which ran as a parameterized statement.
 * Expectations (checked by the test against the server log):
 *   R  rewritten: "execute <unnamed>:" plus the id comment, with $1
 *   L  left alone: "statement:" plus the id comment
 *   K  rewritten, with a known, documented difference (position of a
 *      bind-time input error). */
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum api { API_EXEC, API_SEND } api;

typedef struct query {
    const char *id;
    api api;
    char expect;
    const char *sql;
} query;

/* Literals long enough for the rewriter to count their characters a
 * 64-byte block at a time (the padding that keeps error positions). */
#define UTF8_RUN "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae\xe6\x96\x87\xe5\xad\x97 "
#define UTF8_LONG UTF8_RUN UTF8_RUN UTF8_RUN UTF8_RUN UTF8_RUN UTF8_RUN UTF8_RUN UTF8_RUN
#define SJIS_RUN "\x95\x5c\x8e\xa6\x94\x5c\x97\xcd\x8f\x5c\x95\xaa\x97\x5c"
#define SJIS_LONG SJIS_RUN SJIS_RUN SJIS_RUN SJIS_RUN SJIS_RUN SJIS_RUN SJIS_RUN SJIS_RUN

/* The table: SJIS, LATIN1 and EUC_JP literals are written as bytes. */
static const query queries[] = {
    {"s01", API_EXEC, 'L', "DROP SCHEMA IF EXISTS rw CASCADE"},
    {"s02", API_EXEC, 'L', "CREATE SCHEMA rw"},
    {"s03", API_EXEC, 'L',
     "CREATE TABLE rw.t (id serial PRIMARY KEY, s text UNIQUE, n int, d date, "
     "iv interval hour to minute, c char(4), v varchar(8), j jsonb)"},
    {"s04", API_EXEC, 'L',
     "CREATE FUNCTION rw.say(text) RETURNS boolean LANGUAGE plpgsql AS "
     "$$BEGIN RAISE NOTICE 'say %', $1; RETURN true; END$$"},
    {"s05", API_EXEC, 'R',
     "INSERT INTO rw.t (s, n, d, iv, c, v, j) VALUES "
     "('alpha', 1, '2024-01-02', '1:30', 'ab', 'xy', '{\"k\": \"v\"}'), "
     "('beta', 2, '2023-05-06', '0:10', 'cd', 'zz', '[]'), "
     "('\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e', 3, '2024-07-08', '2:00', 'ef', 'uv', 'null'), "
     "('caf\xc3\xa9', 4, '2022-01-01', '0:00', 'gh', 'st', '{}'), "
     "('\xe3\x82\xbd\xe8\xa1\xa8', 5, '2021-02-03', '9:59', 'ij', 'qr', '1'), "
     "(NULL, 6, NULL, NULL, NULL, NULL, NULL)"},

    {"q01", API_EXEC, 'R', "SELECT id, s FROM rw.t WHERE s = 'alpha'"},
    {"q02", API_EXEC, 'R', "SELECT id FROM rw.t WHERE s <> 'alpha' AND s IS NOT NULL ORDER BY id"},
    {"q03", API_EXEC, 'R', "SELECT id FROM rw.t WHERE s IN ('alpha', 'beta', 'gamma') ORDER BY id"},
    {"q04", API_EXEC, 'R', "SELECT id FROM rw.t WHERE s NOT IN ('alpha') ORDER BY id"},
    {"q05", API_EXEC, 'R', "SELECT id FROM rw.t WHERE s = '\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e'"},
    {"q06", API_EXEC, 'R', "SELECT id FROM rw.t WHERE s LIKE 'al%' OR s ILIKE 'BE%' ORDER BY id"},
    {"q07", API_EXEC, 'R', "SELECT id FROM rw.t WHERE s LIKE 'a!%' ESCAPE '!'"},
    {"q08", API_EXEC, 'R', "SELECT id FROM rw.t WHERE s SIMILAR TO '(al|be)%' ORDER BY id"},
    {"q09", API_EXEC, 'R', "SELECT id FROM rw.t WHERE s IS DISTINCT FROM 'alpha' ORDER BY id"},
    {"q10", API_EXEC, 'R', "SELECT id FROM rw.t WHERE nullif(s, 'alpha') IS NULL ORDER BY id"},
    {"q11", API_EXEC, 'R', "SELECT id, coalesce(s, 'none') AS s FROM rw.t ORDER BY id"},
    {"q12", API_EXEC, 'R', "SELECT id FROM rw.t ORDER BY s = 'beta' DESC, id"},
    {"q13", API_EXEC, 'R', "SELECT id FROM rw.t ORDER BY position('a' in coalesce(s, '')), id"},
    {"q14", API_EXEC, 'L', "SELECT id FROM rw.t ORDER BY 'x'"},
    {"q15", API_EXEC, 'R',
     "WITH a AS (SELECT * FROM rw.t WHERE s <> 'beta') SELECT id FROM a WHERE s = 'alpha'"},
    {"q16", API_EXEC, 'R', "SELECT id, d FROM rw.t WHERE d = '2024-01-02'"},
    {"q17", API_EXEC, 'R', "SELECT id FROM rw.t WHERE j = '{\"k\":\"v\"}'"},
    {"q18", API_EXEC, 'R', "SELECT id FROM rw.t WHERE s = E'caf\\u00e9'"},
    {"q19", API_EXEC, 'R', "SELECT id FROM rw.t WHERE s = E'al\\x70h\\141' OR s = E'b\\eta\\\\'"},
    {"q20", API_EXEC, 'R', "SELECT id FROM rw.t WHERE s = U&'\\0061lpha' OR s = U&'!0062eta' UESCAPE '!'"},
    {"q21", API_EXEC, 'L', "SELECT 'a' AS lit, s FROM rw.t WHERE id = 1"},
    {"q22", API_EXEC, 'R', "INSERT INTO rw.t (s, n) VALUES ('gamma', 7) RETURNING id, s, n"},
    {"q23", API_EXEC, 'R',
     "INSERT INTO rw.t (s, n) VALUES ('gamma', 8) ON CONFLICT (s) DO UPDATE SET n = excluded.n + 1 "
     "RETURNING id, n"},
    {"q24", API_EXEC, 'R', "INSERT INTO rw.t (s) VALUES ('delta') ON CONFLICT DO NOTHING"},
    {"q25", API_EXEC, 'R', "INSERT INTO rw.t (s) VALUES ('delta') ON CONFLICT DO NOTHING"},
    {"q26", API_EXEC, 'R', "UPDATE rw.t SET v = 'new' WHERE s = 'beta' RETURNING v"},
    {"q27", API_EXEC, 'R', "UPDATE rw.t SET iv = '2' WHERE s = 'beta' RETURNING iv"},
    {"q28", API_EXEC, 'R', "UPDATE rw.t SET c = 'q' WHERE s IN ('alpha', 'beta')"},
    {"q29", API_EXEC, 'R', "DELETE FROM rw.t WHERE s = 'delta' RETURNING id"},
    {"q30", API_EXEC, 'R', "SELECT id FROM rw.t WHERE s = 'nobody'"},
    {"q31", API_EXEC, 'R', "SELECT n, count(*) FROM rw.t WHERE s = 'alpha' GROUP BY n"},
    {"q32", API_EXEC, 'L',
     "SELECT lower(s) = 'alpha' AS is_alpha, count(*) FROM rw.t GROUP BY lower(s) = 'alpha' "
     "ORDER BY 1"},
    {"q33", API_EXEC, 'R', "SELECT upper(s), length('abc') FROM rw.t WHERE id = 1"},
    {"q34", API_EXEC, 'R', "SELECT id FROM rw.t WHERE s = 'alpha' AND rw.say(s)"},
    {"q35", API_EXEC, 'R', "SELECT id FROM rw.t WHERE s = 'alpha' AND n / 0 = 1"},
    {"q36", API_SEND, 'R', "SELECT id, s FROM rw.t WHERE s = 'beta'"},
    {"q37", API_SEND, 'R', "INSERT INTO rw.t (s) VALUES ('alpha')"},
    {"q38", API_EXEC, 'L', "BEGIN"},
    {"q39", API_EXEC, 'R', "INSERT INTO rw.t (s) VALUES ('epsilon')"},
    {"q40", API_EXEC, 'R', "INSERT INTO rw.t (s) VALUES ('alpha')"},
    {"q41", API_EXEC, 'R', "SELECT id FROM rw.t WHERE s = 'beta'"},
    {"q42", API_EXEC, 'L', "ROLLBACK"},
    {"q43", API_EXEC, 'R', "SELECT count(*) FROM rw.t WHERE s = 'epsilon'"},
    {"q44", API_EXEC, 'L', "SET client_encoding TO 'SJIS'"},
    {"q45", API_EXEC, 'R', "SELECT id, s FROM rw.t WHERE s = '\x83\x5c\x95\x5c'"},
    {"q46", API_SEND, 'R', "SELECT id, s FROM rw.t WHERE s = '\x93\xfa\x96\x7b\x8c\xea'"},
    {"q47", API_EXEC, 'L', "SET client_encoding TO 'LATIN1'"},
    {"q48", API_EXEC, 'R', "SELECT id, s FROM rw.t WHERE s = 'caf\xe9'"},
    {"q49", API_EXEC, 'L', "SET client_encoding TO 'EUC_JP'"},
    {"q50", API_EXEC, 'R', "SELECT id, s FROM rw.t WHERE s = '\xc6\xfc\xcb\xdc\xb8\xec'"},
    {"q51", API_EXEC, 'L', "SET client_encoding TO 'UTF8'"},
    {"q52", API_EXEC, 'R', "SELECT id FROM rw.t WHERE n = '1'"},
    {"q53", API_EXEC, 'K', "SELECT id FROM rw.t WHERE n = 'one'"},
    {"q54", API_EXEC, 'R', "SELECT id FROM rw.t WHERE id > 1 ORDER BY id LIMIT '2' OFFSET '1'"},
    {"q55", API_EXEC, 'R', "VALUES ('x', 1), ('y', 2)"},
    {"q56", API_EXEC, 'L', "SELECT id FROM rw.t WHERE s = ANY('{alpha,beta}') ORDER BY id"},
    {"q57", API_EXEC, 'L', "SELECT id FROM rw.t WHERE d > DATE '2023-01-01' ORDER BY id"},
    {"q58", API_EXEC, 'R', "SELECT id FROM rw.t WHERE s IS NULL OR s = 'zzz'"},
    {"q59", API_EXEC, 'R', "SELECT id FROM rw.t WHERE coalesce(s, '') = '' ORDER BY id"},
    {"q60", API_EXEC, 'L', "SELECT 1; SELECT id FROM rw.t WHERE s = 'alpha'"},
    {"q61", API_SEND, 'L', "SELECT 1; SELECT id FROM rw.t WHERE s = 'alpha'"},
    {"q62", API_EXEC, 'R', "SELECT s FROM rw.t WHERE s = E'it''s' OR s = 'it''s'"},
    {"q63", API_EXEC, 'R', "SELECT id FROM rw.t WHERE s >= 'b' AND s < 'c' ORDER BY id"},
    {"q64", API_EXEC, 'R', "UPDATE rw.t SET v = 'none' WHERE s = 'nobody'"},
    {"q65", API_EXEC, 'R', "SELECT id FROM rw.t WHERE to_char(d, 'YYYY') = '2024' ORDER BY id"},
    {"q66", API_EXEC, 'R',
     "SELECT CASE WHEN s = 'alpha' THEN 1 ELSE 0 END AS a FROM rw.t ORDER BY id"},
    {"q67", API_EXEC, 'R',
     "SELECT t.id FROM rw.t t JOIN rw.t u ON u.s = 'alpha' AND t.id = u.id"},
    {"q68", API_EXEC, 'R', "SELECT id FROM rw.t WHERE s = 'alpha'\n    'beta'"},
    {"q69", API_EXEC, 'R', "SELECT id, iv FROM rw.t WHERE iv = '1:30'"},
    {"q70", API_EXEC, 'R', "SELECT id FROM rw.t WHERE c = 'ab' AND v LIKE 'x%'"},
    {"q71", API_EXEC, 'R', "SELECT id FROM rw.t WHERE n = '5'::int AND s = 'x' || s"},
    {"q72", API_EXEC, 'L', "SELECT id FROM rw.t WHERE s = 'alpha' 'beta'"},
    {"q73", API_EXEC, 'R', "SELECT id FROM rw.t WHERE s = 'alpha' AND nocolumn = 1"},
    {"q74", API_EXEC, 'R', "DELETE FROM rw.t WHERE s IN ('gamma', 'epsilon') RETURNING s"},
    {"q75", API_EXEC, 'R', "SELECT id FROM rw.t WHERE s = '" UTF8_LONG "' AND nocolumn = 1"},
    {"q76", API_EXEC, 'R',
     "SELECT id FROM rw.t WHERE s = '" UTF8_LONG "\n" UTF8_LONG "'\n  AND nocolumn = 1"},
    {"q77", API_EXEC, 'L', "SET client_encoding TO 'SJIS'"},
    {"q78", API_EXEC, 'R', "SELECT id FROM rw.t WHERE s = '" SJIS_LONG "' AND nocolumn = 1"},
    {"q79", API_EXEC, 'R',
     "SELECT id FROM rw.t WHERE s = '" SJIS_LONG "\n" SJIS_LONG "'\n  AND nocolumn = 1"},
    {"q80", API_EXEC, 'L', "SET client_encoding TO 'UTF8'"},
};

static const char *cur_id = "";

static void print_text(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p >= 0x20 && *p < 0x7f && *p != '\\' && *p != '|')
            putchar(*p);
        else
            printf("\\x%02x", *p);
    }
}

static void print_field(const char *label, const char *value)
{
    printf(" %s=", label);
    print_text(value ? value : "-");
}

static void notice(void *arg, const PGresult *res)
{
    (void)arg;
    printf("%s notice", cur_id);
    print_field("severity", PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED));
    print_field("sqlstate", PQresultErrorField(res, PG_DIAG_SQLSTATE));
    print_field("message", PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY));
    putchar('\n');
}

static void print_result(PGconn *conn, const char *id, int n, PGresult *res)
{
    ExecStatusType st = PQresultStatus(res);
    printf("%s result %d status=%s", id, n, PQresStatus(st));
    print_field("cmd", PQcmdStatus(res));
    print_field("tuples", PQcmdTuples(res));
    printf(" oid=%u nfields=%d txn=%d\n", PQoidValue(res), PQnfields(res),
           (int)PQtransactionStatus(conn));
    for (int i = 0; i < PQnfields(res); i++) {
        printf("%s field %d", id, i);
        print_field("name", PQfname(res, i));
        printf(" type=%u mod=%d format=%d\n", PQftype(res, i), PQfmod(res, i), PQfformat(res, i));
    }
    for (int r = 0; r < PQntuples(res); r++) {
        printf("%s row %d ", id, r);
        for (int i = 0; i < PQnfields(res); i++) {
            if (i)
                putchar('|');
            if (PQgetisnull(res, r, i))
                fputs("\\N", stdout);
            else
                print_text(PQgetvalue(res, r, i));
        }
        putchar('\n');
    }
    if (st == PGRES_FATAL_ERROR || st == PGRES_NONFATAL_ERROR) {
        printf("%s error", id);
        print_field("sqlstate", PQresultErrorField(res, PG_DIAG_SQLSTATE));
        print_field("severity", PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED));
        print_field("message", PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY));
        print_field("detail", PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL));
        print_field("hint", PQresultErrorField(res, PG_DIAG_MESSAGE_HINT));
        putchar('\n');
        printf("%s position", id);
        print_field("at", PQresultErrorField(res, PG_DIAG_STATEMENT_POSITION));
        putchar('\n');
        printf("%s context", id);
        print_field("is", PQresultErrorField(res, PG_DIAG_CONTEXT));
        putchar('\n');
    }
}

int main(void)
{
    PGconn *conn = PQconnectdb("");
    if (PQstatus(conn) != CONNECTION_OK) {
        fprintf(stderr, "connect: %s", PQerrorMessage(conn));
        return 2;
    }
    PQsetNoticeReceiver(conn, notice, NULL);
    PQclear(PQexec(conn, "SET client_min_messages TO notice"));
    for (size_t q = 0; q < sizeof queries / sizeof queries[0]; q++) {
        const query *e = &queries[q];
        char sql[2048];
        snprintf(sql, sizeof sql, "/*%s*/ %s", e->id, e->sql);
        cur_id = e->id;
        printf("%s expect=%c api=%s\n", e->id, e->expect, e->api == API_EXEC ? "exec" : "send");
        if (e->api == API_EXEC) {
            PGresult *res = PQexec(conn, sql);
            print_result(conn, e->id, 0, res);
            PQclear(res);
        } else if (!PQsendQuery(conn, sql)) {
            printf("%s senderror", e->id);
            print_field("message", PQerrorMessage(conn));
            putchar('\n');
        } else {
            PGresult *res;
            int n = 0;
            while ((res = PQgetResult(conn)) != NULL) {
                print_result(conn, e->id, n++, res);
                PQclear(res);
            }
            printf("%s results=%d\n", e->id, n);
        }
        fflush(stdout);
    }
    PQfinish(conn);
    return 0;
}
