/* Query shapes: what folds to one shape and what does not (both dialects),
 * the normalized sample, the profile file (learning, loading, per-program
 * lines, many threads), the guard in learn and enforce, the settings, and
 * that a known shape costs no allocation. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guard.h"
#include "shape.h"
#include "shape_profile.h"
#include "tap.h"
#include "test_files.h"

/* Counting allocator (not under AddressSanitizer, which owns malloc). */
#if defined(__SANITIZE_ADDRESS__)
#define COUNTS_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COUNTS_ALLOCATIONS 0
#endif
#endif
#ifndef COUNTS_ALLOCATIONS
#define COUNTS_ALLOCATIONS 1
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
static unsigned long allocations;

void *malloc(size_t n)
{
    __atomic_add_fetch(&allocations, 1, __ATOMIC_RELAXED);
    return __libc_malloc(n);
}

void *calloc(size_t count, size_t n)
{
    __atomic_add_fetch(&allocations, 1, __ATOMIC_RELAXED);
    return __libc_calloc(count, n);
}

void *realloc(void *p, size_t n)
{
    __atomic_add_fetch(&allocations, 1, __ATOMIC_RELAXED);
    return __libc_realloc(p, n);
}

void free(void *p)
{
    __libc_free(p);
}

static unsigned long allocation_count(void)
{
    return __atomic_load_n(&allocations, __ATOMIC_RELAXED);
}
#else
static unsigned long allocation_count(void)
{
    return 0;
}
#endif

static qg_context pg_ctx, my_ctx, sjis_ctx;

static uint64_t shape_of(const qg_context *ctx, const char *sql)
{
    return qg_shape_compute(ctx, sql, strlen(sql), NULL, 0);
}

static void same(const qg_context *ctx, const char *a, const char *b, const char *what)
{
    uint64_t x = shape_of(ctx, a), y = shape_of(ctx, b);
    if (!tap_ok(x == y, "same shape: %s", what))
        tap_diag("%s\n# %s", a, b);
}

static void differ(const qg_context *ctx, const char *a, const char *b, const char *what)
{
    uint64_t x = shape_of(ctx, a), y = shape_of(ctx, b);
    if (!tap_ok(x != y, "different shape: %s", what))
        tap_diag("%s\n# %s", a, b);
}

static void sample_is(const qg_context *ctx, const char *sql, const char *want)
{
    char sample[QG_SHAPE_SAMPLE_MAX];
    qg_shape_compute(ctx, sql, strlen(sql), sample, sizeof sample);
    if (!tap_ok(strcmp(sample, want) == 0, "sample of %.60s", sql))
        tap_diag("got  %s\n# want %s", sample, want);
}

static void test_postgres_shapes(void)
{
    const qg_context *c = &pg_ctx;
    same(c, "SELECT * FROM users WHERE id = 1", "select *\n  from USERS where ID=982734",
         "PG: numbers, case, white space");
    same(c, "SELECT name FROM t WHERE name = 'alice'", "SELECT name FROM t WHERE name = E'o\\'brien'",
         "PG: string forms and contents");
    same(c, "SELECT a FROM t WHERE a = $$x$$", "SELECT a FROM t WHERE a = $q$y$q$",
         "PG: dollar quotes");
    same(c, "SELECT a FROM t /* one */ WHERE a = 1 -- two", "SELECT a FROM t WHERE a = 2",
         "PG: comments");
    same(c, "SELECT a FROM t WHERE id IN (1)", "SELECT a FROM t WHERE id IN (1, 2, 3, 4, 5)",
         "PG: IN lists of any length");
    same(c, "SELECT a FROM t WHERE id IN ('a','b')", "SELECT a FROM t WHERE id IN ($1)",
         "PG: IN list of strings and of one parameter");
    same(c, "SELECT a FROM t WHERE id = ANY(ARRAY[1,2,3])", "SELECT a FROM t WHERE id = ANY(ARRAY[7])",
         "PG: ARRAY[…] of any length");
    same(c, "INSERT INTO t (a, b) VALUES (1, 'x')",
         "INSERT INTO t (a, b) VALUES (2, 'y'), (3, NULL), (-4, 'z')", "PG: VALUES rows of any count");
    same(c, "SELECT a FROM t WHERE x = -1.5e-3", "SELECT a FROM t WHERE x = .5",
         "PG: signed and exponent numbers");
    same(c, "SELECT a FROM t WHERE x = 0x1F", "SELECT a FROM t WHERE x = 10", "PG: hex numbers");
    same(c, "UPDATE t SET a = NULL WHERE id = 3", "UPDATE t SET a = 'v' WHERE id = 4",
         "PG: NULL is a value");
    same(c, "SELECT a FROM t WHERE id = $1", "SELECT a FROM t WHERE id = 17", "PG: $n parameters");

    differ(c, "SELECT a FROM t WHERE id = 1", "SELECT a FROM t WHERE id = 1 OR 1=1",
           "PG: numeric injection id = 1 OR 1=1");
    differ(c, "SELECT a FROM t WHERE name = 'x'",
           "SELECT a FROM t WHERE name = 'x' UNION SELECT secret FROM users", "PG: UNION");
    differ(c, "SELECT a FROM t WHERE id = 1", "SELECT a FROM t WHERE id = 1; DROP TABLE t",
           "PG: stacked query");
    differ(c, "SELECT a FROM t WHERE id = 1", "SELECT a, b FROM t WHERE id = 1", "PG: added column");
    differ(c, "SELECT a FROM t WHERE id = 1 AND owner = 'me'", "SELECT a FROM t WHERE id = 1 -- AND owner = 'me'",
           "PG: the rest commented out");
    differ(c, "SELECT a FROM t WHERE id IN (1, 2)", "SELECT a FROM t WHERE id IN (1, (SELECT 2))",
           "PG: a subquery in an IN list");
    differ(c, "SELECT \"Name\" FROM t", "SELECT \"name\" FROM t", "PG: quoted identifiers are exact");
    differ(c, "INSERT INTO t VALUES (1, 2)", "INSERT INTO t VALUES (1, 2), (3, (SELECT secret FROM s))",
           "PG: a different row in VALUES");
    differ(c, "SELECT a FROM t WHERE x = 1", "SELECT a FROM t WHERE x = 1 - 1", "PG: arithmetic added");
    differ(c, "SELECT a FROM t WHERE a = 1 ORDER BY 1", "SELECT a FROM t WHERE a = 1 ORDER BY 1 DESC",
           "PG: ORDER BY direction");

    sample_is(c, "SELECT *  FROM Users WHERE id IN (1,2,3) AND name = 'x' -- c",
              "select * from users where id in (?) and name = ?");
    sample_is(c, "INSERT INTO t (a,b) VALUES (1,'x'),(2,'y')", "insert into t (a, b) values (?, ?)");
    sample_is(c, "SELECT \"Tab\tName\" FROM t WHERE x = $1", "select \"Tab\\x09Name\" from t where x = ?");
}

static void test_mysql_shapes(void)
{
    const qg_context *c = &my_ctx;
    same(c, "SELECT secret FROM users WHERE name = 'a\\'b'", "select SECRET from users where name = \"zz\"",
         "MySQL: backslash escapes, double-quoted strings, case");
    same(c, "SELECT a FROM t WHERE b = ? # note", "SELECT a FROM t WHERE b = 4", "MySQL: ? and # comments");
    same(c, "SELECT /*!40101 SQL_NO_CACHE */ a FROM t", "SELECT SQL_NO_CACHE a FROM t",
         "MySQL: an executable comment is its content");
    same(c, "SELECT a FROM t WHERE b IN (1,2,3)", "SELECT a FROM t WHERE b IN ('x')",
         "MySQL: IN lists");
    same(c, "INSERT INTO t VALUES (1,'a'),(2,'b') ON DUPLICATE KEY UPDATE a = VALUES(a), b = VALUES(b)",
         "INSERT INTO t VALUES (7,'z') ON DUPLICATE KEY UPDATE a = VALUES(a), b = VALUES(b)",
         "MySQL: VALUES rows, and VALUES() the function");
    same(c, "SELECT `a` FROM t WHERE x = 0x41", "SELECT `a` FROM t WHERE x = X'42'", "MySQL: hex literals");

    differ(c, "SELECT a FROM t WHERE id = 1", "SELECT a FROM t WHERE id = 1 OR 1=1",
           "MySQL: numeric injection id = 1 OR 1=1");
    differ(c, "SELECT a FROM t WHERE id = 1", "SELECT a FROM t WHERE id = 1 UNION SELECT secret FROM users",
           "MySQL: UNION");
    differ(c, "SELECT a FROM t WHERE id = 1", "SELECT a FROM t WHERE id = 1; DROP TABLE t",
           "MySQL: stacked query");
    differ(c, "SELECT a FROM t WHERE id = 1", "SELECT a FROM t WHERE id = 1 /*!50000 UNION SELECT 1*/",
           "MySQL: UNION hidden in an executable comment");
    differ(c, "SELECT a FROM t WHERE n = 'x' AND p = 'y'", "SELECT a FROM t WHERE n = 'x' #' AND p = 'y'",
           "MySQL: the rest commented out with #");
    differ(c, "SELECT `a` FROM t", "SELECT `A` FROM t", "MySQL: quoted identifiers are exact");
    differ(c, "SELECT a FROM t WHERE id = 1", "SELECT a, password FROM t WHERE id = 1",
           "MySQL: added column");
}

static void test_dialects_and_encodings(void)
{
    tap_ok(shape_of(&pg_ctx, "SELECT 1") != shape_of(&my_ctx, "SELECT 1"),
           "the dialect is part of the fingerprint");
    /* SJIS: 0x95 0x5c is one character; the 0x5c is no backslash to the server. */
    const char a[] = "SELECT * FROM t WHERE name = '\x95\x5c' OR 1=1 --'";
    const char b[] = "SELECT * FROM t WHERE name = 'x'";
    tap_ok(qg_shape_compute(&sjis_ctx, a, sizeof a - 1, NULL, 0) !=
               qg_shape_compute(&sjis_ctx, b, sizeof b - 1, NULL, 0),
           "SJIS: the 0x5c trail byte attack has the server's shape, not the escaper's");
    const char c[] = "SELECT \x95\x5c FROM t";
    const char d[] = "SELECT \x95\x5c FROM t WHERE x = 1";
    char sample[64];
    qg_shape_compute(&sjis_ctx, c, sizeof c - 1, sample, sizeof sample);
    tap_ok(strcmp(sample, "select \\x95\\x5c from t") == 0,
           "SJIS: a multibyte identifier is one word, escaped in the sample (%s)", sample);
    tap_ok(qg_shape_compute(&sjis_ctx, c, sizeof c - 1, NULL, 0) !=
               qg_shape_compute(&sjis_ctx, d, sizeof d - 1, NULL, 0),
           "SJIS: a clause after a multibyte identifier counts");
}

static void test_sample_bounds(void)
{
    static char big[20000];
    size_t n = 0;
    n += (size_t)snprintf(big, sizeof big, "SELECT ");
    while (n + 16 < sizeof big - 64)
        n += (size_t)snprintf(big + n, sizeof big - n, "col%zu, ", n);
    n += (size_t)snprintf(big + n, sizeof big - n, "x FROM t");
    char sample[128];
    memset(sample, 'Z', sizeof sample);
    qg_shape_compute(&pg_ctx, big, n, sample, 100);
    size_t len = strlen(sample);
    tap_ok(len <= 99 && len >= 90 && strcmp(sample + len - 3, "...") == 0 && sample[100] == 'Z',
           "a long sample is cut within its buffer and ends in ... (%zu bytes)", len);
}

/* ------------------------------------------------------------ profile */

static char tmpdir[] = "/tmp/qg-test-shape-XXXXXX";

static void write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
        if (write(fd, text, strlen(text)) < 0)
            tap_diag("cannot write %s", path);
        close(fd);
    }
}

static int count_of(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

static void settings_for(qg_settings *s, qg_mode mode, qg_shapes_mode shapes, const char *profile)
{
    qg_settings_defaults(s);
    qg_settings_set_program(s, "test_shape");
    s->mode = mode;
    s->shapes = shapes;
    s->log_sink = QG_LOG_FILE;
    snprintf(s->log_path, sizeof s->log_path, "%s/guard.log", tmpdir);
    unlink(s->log_path); /* each test reads its own lines */
    snprintf(s->shapes_file, sizeof s->shapes_file, "%s/%s", tmpdir, profile);
    qg_shape_profile_forget();
}

static qg_query query(qg_dialect dialect, const char *encoding, const char *sql)
{
    return (qg_query){
        .dialect = dialect,
        .encoding_name = encoding,
        .flags = dialect == QG_DIALECT_POSTGRES ? QG_STD_STRINGS : 0,
        .conn = tmpdir,
        .api = dialect == QG_DIALECT_POSTGRES ? "PQexec" : "mysql_real_query",
        .sql = sql,
        .len = strlen(sql),
        .caller = (const char *)&getpid + 1,
    };
}

static bool run(const qg_settings *s, qg_dialect dialect, const char *sql, qg_decision *d)
{
    qg_query q = query(dialect, dialect == QG_DIALECT_POSTGRES ? "UTF8" : "utf8mb4", sql);
    return qg_guard_query_with(s, &q, d);
}

static void test_learn_then_enforce(void)
{
    qg_settings s;
    qg_decision d;
    char path[QG_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%%p.shapes", tmpdir);

    settings_for(&s, QG_MODE_ENFORCE, QG_SHAPES_LEARN, "%p.shapes");
    char resolved[QG_PATH_MAX];
    qg_shape_profile_path(&s, resolved, sizeof resolved);
    char want[QG_PATH_MAX + 64];
    snprintf(want, sizeof want, "%s/test_shape.shapes", tmpdir);
    tap_ok(strcmp(resolved, want) == 0, "%%p in shapes_file is the program name (%s)", resolved);

    bool pass = run(&s, QG_DIALECT_POSTGRES, "SELECT a FROM t WHERE id = 1", &d) &&
                run(&s, QG_DIALECT_POSTGRES, "SELECT a FROM t WHERE id = 2", &d) &&
                run(&s, QG_DIALECT_POSTGRES, "select a from t where id in (1,2,3)", &d) &&
                run(&s, QG_DIALECT_MYSQL, "SELECT a FROM t WHERE id = 1", &d) &&
                run(&s, QG_DIALECT_POSTGRES, "SELECT * FROM t WHERE name = 'x' OR 1=1", &d);
    tap_ok(pass, "learn: every query passes");
    const char *profile = read_whole_file(want, NULL);
    int lines = count_of(profile, "\n");
    tap_ok(lines == 4, "learn: four shapes, each written once (%d lines)", lines);
    tap_ok(count_of(profile, "\tpostgres\ttest_shape\t") == 3 && count_of(profile, "\tmysql\ttest_shape\t") == 1,
           "learn: lines carry the dialect and the program");
    tap_ok(strstr(profile, "\tselect a from t where id = ?\n") && strstr(profile, "\tselect a from t where id in (?)\n"),
           "learn: lines end with the normalized sample");
    tap_ok(strstr(profile, "Z\t") != NULL, "learn: lines carry the ISO time first seen");

    /* A query with an encoding finding is never learned. */
    qg_query attack = query(QG_DIALECT_POSTGRES, "SJIS", "SELECT a FROM t WHERE n = '\x95\x5c' OR 1=1 --'");
    attack.flags = 0;
    s.mode = QG_MODE_AUDIT;
    qg_guard_query_with(&s, &attack, &d);
    tap_ok(count_of(read_whole_file(want, NULL), "\n") == 4, "learn: a query with findings is not learned");

    /* A second process (forget = a fresh start) loads the file first. */
    settings_for(&s, QG_MODE_ENFORCE, QG_SHAPES_LEARN, "%p.shapes");
    run(&s, QG_DIALECT_POSTGRES, "SELECT a FROM t WHERE id = 99", &d);
    run(&s, QG_DIALECT_POSTGRES, "SELECT b FROM t", &d);
    tap_ok(count_of(read_whole_file(want, NULL), "\n") == 5, "learn: known shapes are not appended again");

    settings_for(&s, QG_MODE_ENFORCE, QG_SHAPES_ENFORCE, "%p.shapes");
    pass = run(&s, QG_DIALECT_POSTGRES, "SELECT a FROM t WHERE id = 12345", &d) &&
           run(&s, QG_DIALECT_POSTGRES, "SELECT a FROM t WHERE id IN (5, 6)", &d) &&
           run(&s, QG_DIALECT_MYSQL, "SELECT a FROM t WHERE id = 7", &d) &&
           run(&s, QG_DIALECT_POSTGRES, "SELECT B FROM T", &d);
    tap_ok(pass, "enforce: learned shapes pass with other values");
    const char *log = read_whole_file(s.log_path, NULL);
    if (!tap_ok(log[0] == '\0', "enforce: known shapes log nothing"))
        tap_diag("%s", log);

    pass = run(&s, QG_DIALECT_POSTGRES, "SELECT a FROM t WHERE id = 1 OR 1=1", &d);
    tap_ok(!pass && d.block, "enforce: id = 1 OR 1=1 is blocked");
    tap_ok(strncmp(d.message, "quoteguard: blocked unknown_shape ", 34) == 0 && strcmp(d.sqlstate, "42601") == 0,
           "enforce: the message names unknown_shape (%s)", d.message);
    log = read_whole_file(s.log_path, NULL);
    tap_ok(count_of(log, "\"action\":\"blocked\"") == 1 && strstr(log, "\"reason\":\"unknown_shape\"") &&
               strstr(log, "shape not in the profile: select a from t where id = ? or ? = ?"),
           "enforce: logged as unknown_shape with the normalized sample");
    tap_ok(!run(&s, QG_DIALECT_MYSQL, "SELECT a FROM t WHERE id = 1 UNION SELECT 1", &d),
           "enforce: MySQL UNION is blocked");
    tap_ok(!run(&s, QG_DIALECT_POSTGRES, "SELECT a FROM t WHERE id = 1; DELETE FROM t", &d),
           "enforce: stacked query is blocked");

    /* The encoding rule applies on top of a known shape. */
    qg_query known_shape_attack =
        query(QG_DIALECT_POSTGRES, "SJIS", "SELECT * FROM t WHERE name = '\x95\x5c' OR 1=1 --'");
    known_shape_attack.flags = 0;
    tap_ok(!qg_guard_query_with(&s, &known_shape_attack, &d) && strstr(d.message, "structure_mismatch"),
           "enforce: a known shape with an encoding finding is still blocked (%s)", d.message);

    s.mode = QG_MODE_AUDIT;
    tap_ok(run(&s, QG_DIALECT_POSTGRES, "SELECT a FROM t WHERE id = 2 OR 2=2", &d) && !d.block,
           "audit: an unknown shape passes");
    tap_ok(strstr(read_whole_file(s.log_path, NULL), "\"mode\":\"audit\",\"action\":\"logged\"") != NULL,
           "audit: and is logged");

    s.mode = QG_MODE_ENFORCE;
    uint64_t fp = shape_of(&pg_ctx, "SELECT a FROM t WHERE id = 1 OR 1=1");
    s.allow[s.allow_count++] = fp;
    tap_ok(run(&s, QG_DIALECT_POSTGRES, "SELECT a FROM t WHERE id = 3 OR 4=4", &d),
           "enforce: an allow-listed shape fingerprint passes");
}

static void test_profile_file_format(void)
{
    char path[QG_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/hand.shapes", tmpdir);
    char text[1024];
    uint64_t mine = shape_of(&pg_ctx, "SELECT 1");
    uint64_t everyone = shape_of(&pg_ctx, "SELECT 2, 3");
    uint64_t other = shape_of(&pg_ctx, "SELECT x FROM y");
    uint64_t bare = shape_of(&pg_ctx, "SELECT z FROM w");
    snprintf(text, sizeof text,
             "# hand-edited profile\n\n"
             "%016llX\tpostgres\ttest_shape\t2026-01-01T00:00:00.000Z\t-\tselect ?\r\n"
             "%016llx\tpostgres\t*\t-\t-\tselect ?, ?\n"
             "%016llx\tpostgres\tsomeone_else\t-\t-\tselect x from y\n"
             "%016llx\n"
             "not a fingerprint\tpostgres\ttest_shape\n",
             (unsigned long long)mine, (unsigned long long)everyone, (unsigned long long)other,
             (unsigned long long)bare);
    write_file(path, text);
    qg_settings s;
    settings_for(&s, QG_MODE_ENFORCE, QG_SHAPES_ENFORCE, "hand.shapes");
    tap_ok(qg_shape_profile_contains(&s, mine), "profile: upper-case hex and CRLF are read");
    tap_ok(qg_shape_profile_contains(&s, everyone), "profile: program * counts for every program");
    tap_ok(!qg_shape_profile_contains(&s, other), "profile: another program's line does not count");
    tap_ok(qg_shape_profile_contains(&s, bare), "profile: a bare fingerprint counts for every program");
    const char *report = read_whole_file(s.log_path, NULL);
    tap_ok(strstr(report, "\"event\":\"shapes_profile_malformed\"") &&
               strstr(report, "1 malformed lines skipped (the first is line 7)"),
           "profile: a malformed line is reported with its number");

    settings_for(&s, QG_MODE_ENFORCE, QG_SHAPES_ENFORCE, "missing.shapes");
    qg_decision d;
    tap_ok(!run(&s, QG_DIALECT_POSTGRES, "SELECT 1", &d), "enforce without a profile file: blocked");
    tap_ok(strstr(read_whole_file(s.log_path, NULL), "\"event\":\"shapes_profile_unreadable\"") != NULL,
           "enforce without a profile file: an error event says so");
}

/* Another process appends while this one learns; a hand edit without a
 * final newline. */
static void test_profile_shared_file(void)
{
    qg_settings s;
    qg_decision d;
    char path[QG_PATH_MAX + 64], text[512];
    snprintf(path, sizeof path, "%s/shared.shapes", tmpdir);
    uint64_t first = shape_of(&pg_ctx, "SELECT 1 FROM a");
    snprintf(text, sizeof text, "%016llx\tpostgres\ttest_shape\t-\t-\tselect ? from a",
             (unsigned long long)first);
    write_file(path, text); /* no final newline */
    settings_for(&s, QG_MODE_ENFORCE, QG_SHAPES_LEARN, "shared.shapes");
    run(&s, QG_DIALECT_POSTGRES, "SELECT 2 FROM a", &d);
    run(&s, QG_DIALECT_POSTGRES, "SELECT b FROM c", &d);
    const char *now = read_whole_file(path, NULL);
    tap_ok(count_of(now, "\n") == 2 && strstr(now, "select ? from a\n") && strstr(now, "\tselect b from c\n"),
           "learn: a last line without newline is kept whole, the new shape goes on a line of its own");

    /* Another process learns "SELECT d FROM e" after this one loaded. */
    uint64_t other = shape_of(&pg_ctx, "SELECT d FROM e");
    int fd = open(path, O_WRONLY | O_APPEND);
    snprintf(text, sizeof text, "%016llx\tpostgres\ttest_shape\t-\t-\tselect d from e\n",
             (unsigned long long)other);
    if (fd < 0 || write(fd, text, strlen(text)) < 0)
        tap_diag("cannot append to %s", path);
    close(fd);
    run(&s, QG_DIALECT_POSTGRES, "SELECT d FROM e", &d);
    run(&s, QG_DIALECT_POSTGRES, "SELECT f FROM g", &d);
    now = read_whole_file(path, NULL);
    tap_ok(count_of(now, "select d from e") == 1 && count_of(now, "\n") == 4,
           "learn: a shape another process appended meanwhile is not written again");
}

/* Many threads learn the same shapes at once: each is written once. */
#define THREADS 8
#define SHAPES_PER_THREAD 300

static qg_settings thread_settings;

static void *learner(void *arg)
{
    (void)arg;
    char sql[128];
    qg_decision d;
    for (int i = 0; i < SHAPES_PER_THREAD; i++) {
        snprintf(sql, sizeof sql, "SELECT c%d FROM t WHERE id = %d", i, i * 7);
        run(&thread_settings, QG_DIALECT_POSTGRES, sql, &d);
    }
    return NULL;
}

static void test_threads(void)
{
    settings_for(&thread_settings, QG_MODE_ENFORCE, QG_SHAPES_LEARN, "threads.shapes");
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, learner, NULL);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    const char *profile = read_whole_file(thread_settings.shapes_file, NULL);
    int lines = count_of(profile, "\n");
    int complete = count_of(profile, "\tpostgres\ttest_shape\t");
    tap_ok(lines == SHAPES_PER_THREAD && complete == SHAPES_PER_THREAD,
           "%d threads learning %d shapes: %d lines, %d whole", THREADS, SHAPES_PER_THREAD, lines,
           complete);
    /* 300 shapes + the table grows past its initial size on 9000 more. */
    qg_decision d;
    char sql[128];
    for (int i = 0; i < 9000; i++) {
        snprintf(sql, sizeof sql, "SELECT d%d FROM t", i);
        run(&thread_settings, QG_DIALECT_POSTGRES, sql, &d);
    }
    bool all = true;
    for (int i = 0; i < 9000 && all; i += 97) {
        snprintf(sql, sizeof sql, "SELECT d%d FROM t", i);
        all = qg_shape_profile_contains(&thread_settings, shape_of(&pg_ctx, sql));
    }
    tap_ok(all, "the set keeps every shape after growing");
}

static void test_known_shape_costs_nothing(void)
{
    qg_settings s;
    qg_decision d;
    settings_for(&s, QG_MODE_ENFORCE, QG_SHAPES_LEARN, "alloc.shapes");
    run(&s, QG_DIALECT_POSTGRES, "SELECT a FROM t WHERE id = 1", &d);
    s.shapes = QG_SHAPES_ENFORCE;
    bool pass = true;
    unsigned long before = allocation_count();
    for (int i = 0; i < 100; i++)
        pass = pass && run(&s, QG_DIALECT_POSTGRES, "SELECT a FROM t WHERE id = 42", &d);
    unsigned long used = allocation_count() - before;
    tap_ok(pass, "a known shape passes");
    if (COUNTS_ALLOCATIONS)
        tap_ok(used == 0, "100 queries of a known shape: %lu allocations", used);
    else
        tap_ok(1, "# SKIP allocations are not counted under AddressSanitizer");
}

static void test_settings(void)
{
    qg_settings s;
    char err[512];
    qg_settings_defaults(&s);
    tap_ok(s.shapes == QG_SHAPES_OFF, "shapes are off by default");
    const char good[] = "mode = audit\nshapes = Learn\nshapes_file = /var/lib/qg/%p.shapes\n";
    int problems = qg_settings_parse_file_text(&s, good, sizeof good - 1, err, sizeof err);
    tap_ok(problems == 0 && s.shapes == QG_SHAPES_LEARN && strcmp(s.shapes_file, "/var/lib/qg/%p.shapes") == 0 &&
               s.mode == QG_MODE_AUDIT,
           "config file: shapes and shapes_file");
    const char bad[] = "mode = audit\nshapes = maybe\nshapes_file = relative.shapes\n";
    qg_settings_defaults(&s);
    problems = qg_settings_parse_file_text(&s, bad, sizeof bad - 1, err, sizeof err);
    tap_ok(problems == 2 && s.shapes == QG_SHAPES_OFF && s.shapes_file[0] == '\0' && s.mode == QG_MODE_ENFORCE,
           "bad shapes values: reported, left as they were, mode enforce");
    tap_ok(strstr(err, "shapes=\"maybe\"") && strstr(err, "expected learn, enforce or off"),
           "the problem names the key and the choices (%s)", err);
    qg_settings_defaults(&s);
    setenv("QUOTEGUARD_SHAPES", "enforce", 1);
    setenv("QUOTEGUARD_SHAPES_FILE", "/tmp/x.shapes", 1);
    problems = qg_settings_apply_env(&s, err, sizeof err);
    tap_ok(problems == 0 && s.shapes == QG_SHAPES_ENFORCE && strcmp(s.shapes_file, "/tmp/x.shapes") == 0,
           "environment: QUOTEGUARD_SHAPES and QUOTEGUARD_SHAPES_FILE");
    unsetenv("QUOTEGUARD_SHAPES");
    unsetenv("QUOTEGUARD_SHAPES_FILE");
    tap_ok(strcmp(qg_shapes_mode_name(QG_SHAPES_ENFORCE), "enforce") == 0, "shapes mode names");
}

int main(void)
{
    qg_context_init(&pg_ctx, QG_DIALECT_POSTGRES, qg_encoding_find(QG_DIALECT_POSTGRES, "UTF8"),
                    QG_STD_STRINGS);
    qg_context_init(&my_ctx, QG_DIALECT_MYSQL, qg_encoding_find(QG_DIALECT_MYSQL, "utf8mb4"), 0);
    qg_context_init(&sjis_ctx, QG_DIALECT_POSTGRES, qg_encoding_find(QG_DIALECT_POSTGRES, "SJIS"), 0);
    if (!mkdtemp(tmpdir)) {
        printf("Bail out! cannot create %s\n", tmpdir);
        return 1;
    }
    test_postgres_shapes();
    test_mysql_shapes();
    test_dialects_and_encodings();
    test_sample_bounds();
    test_settings();
    test_learn_then_enforce();
    test_profile_file_format();
    test_profile_shared_file();
    test_threads();
    test_known_shape_costs_nothing();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        tap_diag("cannot remove %s", tmpdir);
    return tap_done();
}
