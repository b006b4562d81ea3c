/* Reads mysqltest scripts (MariaDB's mysql-test *.test files), takes out
 * the SQL statements the way mysqltest sends them, and runs each through the
 * checker in the MySQL dialect with the connection's charset and quoting
 * flags as the script sets them.
 *
 * mysqltest_check FILE...
 * mysqltest_check --emit FILE...   prints the statements instead, for a
 *     client to send (tests/clients/my_corpus.c, tests/corpus/replay_driver.py):
 *     "F path" per file, "C charset" per character_set command,
 *     "S file:line HEX" per statement, "K file:line" instead for one that
 *     would stop or stall the server or the run (SHUTDOWN, KILL, SLEEP,
 *     locks, replication, global settings, files, long generated data)
 *
 * Statements: text up to the current delimiter outside quotes ('…', "…",
 * `…` with backslash escapes; a multibyte character of the current charset
 * is consumed whole, as mysqltest's own reader does).  Not statements:
 * lines starting with # (comments) or -- (commands), mysqltest commands
 * (let, eval, echo, error, source, exec, if/while headers, …: eval and
 * send_eval lines are skipped because their text is only known after
 * variable substitution), and the bodies of perl / write_file /
 * append_file.  "send X" and "query X" send X.
 * State per connection (connect/connection switch them): charset from
 * `character_set X` and from SET NAMES / SET CHARACTER SET /
 * SET character_set_client; NO_BACKSLASH_ESCAPES and ANSI_QUOTES from
 * SET sql_mode (a literal, DEFAULT, a user variable saved from @@sql_mode,
 * or an expression naming the modes); a SET the script marks with --error
 * changes nothing, nor does a charset given as a variable or an expression
 * (the scripts use them to restore a saved value).  A charset the server does not take
 * as client charset (ucs2, utf16, utf16le, utf32) is ignored, as the server
 * refuses it.  Scripts start with latin1, mysqltest's default.
 *
 * Output: "FINDING file:line charset verdict reason@offset [expect-error]: excerpt"
 * for each statement with a finding (bytes outside printable ASCII as \xNN),
 * "UNKNOWN file:line charset" for statements under a charset the checker
 * does not know, and last
 * "MYSQLTEST: F files, S statements, K skipped commands, U unknown-charset statements,
 *  N statements with findings (B blocking, L logged only)".
 * Exit status: 0, or 2 when a file cannot be read.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "quoteguard.h"

#define MAX_CONNS 32
#define MAX_VARS 32
#define NAME_MAX_LEN 64

typedef struct conn_state {
    char name[NAME_MAX_LEN];
    char charset[NAME_MAX_LEN];
    unsigned flags;
} conn_state;

typedef struct saved_mode {
    char var[NAME_MAX_LEN];
    unsigned flags;
} saved_mode;

typedef struct script {
    const char *path;
    const unsigned char *text;
    size_t len, pos;
    char delimiter[16];
    conn_state conns[MAX_CONNS];
    size_t nconns;
    conn_state *cur;
    saved_mode vars[MAX_VARS];
    size_t nvars;
    bool expect_error;
} script;

static bool emit; /* print the statements instead of checking them */
static unsigned long files, statements, skipped, unknown_charset, with_findings, blocking,
    logged_only;

static const char *const commands[] = {
    "append_file", "cat_file", "change_user", "character_set", "chmod", "connect", "connection",
    "copy_file", "copy_files_wildcard", "dec", "delimiter", "die", "diff_files", "dirty_close",
    "disable_abort_on_error", "disable_column_names", "disable_connect_log", "disable_info",
    "disable_metadata", "disable_parsing", "disable_ps_protocol", "disable_ps2_protocol",
    "disable_query_log", "disable_reconnect", "disable_result_log", "disable_session_track_info",
    "disable_view_protocol", "disable_cursor_protocol", "disable_prepare_warnings",
    "disable_non_blocking_api", "disable_warnings", "disconnect", "echo", "enable_abort_on_error",
    "enable_column_names", "enable_connect_log", "enable_info", "enable_metadata",
    "enable_parsing", "enable_ps_protocol", "enable_ps2_protocol", "enable_query_log",
    "enable_reconnect", "enable_result_log", "enable_session_track_info",
    "enable_view_protocol", "enable_cursor_protocol", "enable_prepare_warnings",
    "enable_non_blocking_api", "enable_warnings", "end", "end_timer", "error", "eval", "exec",
    "exec_in_background", "execw", "exit", "expr", "file_exists", "horizontal_results", "if",
    "inc", "let", "list_files", "list_files_append_file", "list_files_write_file",
    "lowercase_result", "mkdir", "move_file", "perl", "ping", "query_attributes", "real_sleep",
    "reap", "remove_file", "remove_files_wildcard", "replace_column", "replace_numeric_round",
    "replace_regex", "replace_result", "reset_connection", "result_format", "rmdir",
    "save_master_pos", "send_eval", "send_quit", "send_shutdown", "shutdown_server", "skip",
    "sleep", "sorted_result", "source", "start_timer", "sync_slave_with_master",
    "sync_with_master", "vertical_results", "wait_for_slave_to_stop", "while", "write_file",
    "query", "query_vertical", "query_horizontal", "send", NULL};

static bool is_command(const char *word)
{
    for (size_t i = 0; commands[i]; i++)
        if (strcasecmp(word, commands[i]) == 0)
            return true;
    return false;
}

static const qg_encoding *charset_of(const conn_state *c)
{
    return qg_encoding_find(QG_DIALECT_MYSQL, c->charset);
}

static conn_state *connection(script *s, const char *name, bool create)
{
    for (size_t i = 0; i < s->nconns; i++)
        if (strcmp(s->conns[i].name, name) == 0)
            return &s->conns[i];
    if (!create || s->nconns == MAX_CONNS)
        return s->cur;
    conn_state *c = &s->conns[s->nconns++];
    snprintf(c->name, sizeof c->name, "%s", name);
    snprintf(c->charset, sizeof c->charset, "latin1");
    c->flags = 0;
    return c;
}

static size_t line_of(const script *s, size_t pos)
{
    size_t line = 1;
    for (size_t i = 0; i < pos && i < s->len; i++)
        line += s->text[i] == '\n';
    return line;
}

/* Copies the next word of text (letters, digits, _ @ . and quotes
 * stripped) into out, lower-cased; returns a pointer past it. */
static const char *next_word(const char *text, char *out, size_t cap)
{
    while (*text && (isspace((unsigned char)*text) || *text == '=' || *text == ','))
        text++;
    size_t n = 0;
    char quote = (*text == '\'' || *text == '"' || *text == '`') ? *text++ : 0;
    while (*text && (quote ? *text != quote
                           : (isalnum((unsigned char)*text) || *text == '_' || *text == '@' ||
                              *text == '.' || *text == '$'))) {
        if (n + 1 < cap)
            out[n++] = (char)tolower((unsigned char)*text);
        text++;
    }
    if (quote && *text == quote)
        text++;
    out[n] = '\0';
    return text;
}

static bool refused_client_charset(const char *name)
{
    return strcmp(name, "ucs2") == 0 || strncmp(name, "utf16", 5) == 0 ||
           strcmp(name, "utf32") == 0;
}

/* name: the word after SET NAMES / =; after: the text that follows it. */
static void set_charset(conn_state *c, const char *name, const char *after)
{
    while (*after && isspace((unsigned char)*after))
        after++;
    /* a variable or an expression: the script restores or computes a
     * value this reader does not follow; the connection keeps its charset */
    if (!name[0] || name[0] == '@' || *after == '(' || refused_client_charset(name))
        return;
    snprintf(c->charset, sizeof c->charset, "%s", strcmp(name, "default") == 0 ? "latin1" : name);
}

/* The quoting flags named anywhere in text. */
static unsigned flags_named(const char *text)
{
    unsigned flags = 0;
    char upper[4096];
    size_t n = 0;
    for (; text[n] && n + 1 < sizeof upper; n++)
        upper[n] = (char)toupper((unsigned char)text[n]);
    upper[n] = '\0';
    if (strstr(upper, "NO_BACKSLASH_ESCAPES"))
        flags |= QG_NO_BACKSLASH_ESCAPES;
    static const char *const ansi[] = {"ANSI", "DB2", "MAXDB", "MSSQL", "ORACLE", "POSTGRESQL"};
    for (size_t i = 0; i < sizeof ansi / sizeof ansi[0]; i++) {
        const char *at = upper;
        size_t len = strlen(ansi[i]);
        while ((at = strstr(at, ansi[i])) != NULL) {
            bool start = at == upper || !(isalnum((unsigned char)at[-1]) || at[-1] == '_');
            char after = at[len];
            if (start && (ansi[i][0] == 'A' ? (after == '_' && strncmp(at, "ANSI_QUOTES", 11) == 0) ||
                                                  !(isalnum((unsigned char)after) || after == '_')
                                            : !(isalnum((unsigned char)after) || after == '_')))
                flags |= QG_ANSI_QUOTES;
            at += len;
        }
    }
    return flags;
}

static saved_mode *saved(script *s, const char *var, bool create)
{
    for (size_t i = 0; i < s->nvars; i++)
        if (strcmp(s->vars[i].var, var) == 0)
            return &s->vars[i];
    if (!create || s->nvars == MAX_VARS)
        return NULL;
    saved_mode *v = &s->vars[s->nvars++];
    snprintf(v->var, sizeof v->var, "%s", var);
    return v;
}

/* Follows SET statements that change how later statements are lexed. */
static void track_set(script *s, const char *sql)
{
    char word[NAME_MAX_LEN], name[NAME_MAX_LEN];
    const char *p = next_word(sql, word, sizeof word);
    if (strcmp(word, "set") != 0)
        return;
    p = next_word(p, word, sizeof word);
    bool global = strcmp(word, "global") == 0 || strncmp(word, "@@global.", 9) == 0;
    if (strcmp(word, "session") == 0 || strcmp(word, "local") == 0 || global)
        if (strcmp(word, "global") == 0 || strcmp(word, "session") == 0 || strcmp(word, "local") == 0)
            p = next_word(p, word, sizeof word);
    if (global)
        return;
    const char *var = word;
    if (strncmp(var, "@@session.", 10) == 0)
        var += 10;
    else if (strncmp(var, "@@local.", 8) == 0)
        var += 8;
    else if (strncmp(var, "@@", 2) == 0)
        var += 2;
    if (strcmp(var, "names") == 0 || strcmp(var, "character_set_client") == 0) {
        const char *after = next_word(p, name, sizeof name);
        set_charset(s->cur, name, after);
    } else if (strcmp(var, "character") == 0) {
        p = next_word(p, word, sizeof word); /* SET */
        const char *after = next_word(p, name, sizeof name);
        set_charset(s->cur, name, after);
    } else if (strcmp(var, "charset") == 0) {
        const char *after = next_word(p, name, sizeof name);
        set_charset(s->cur, name, after);
    } else if (strcmp(var, "sql_mode") == 0) {
        while (*p && (isspace((unsigned char)*p) || *p == '=' || *p == ':'))
            p++;
        if (*p == '@' && p[1] != '@') {
            next_word(p, name, sizeof name);
            saved_mode *v = saved(s, name, false);
            s->cur->flags = v ? v->flags : 0;
        } else if (*p == '\'' || *p == '"' || strncasecmp(p, "default", 7) == 0) {
            s->cur->flags = flags_named(p);
        } else {
            s->cur->flags |= flags_named(p);
        }
    } else if (var[0] == '@' && strstr(sql, "@@sql_mode")) {
        saved_mode *v = saved(s, var, true);
        if (v)
            v->flags = s->cur->flags;
    }
}

static void print_excerpt(const unsigned char *p, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\')
            putchar(p[i]);
        else
            printf("\\x%02x", p[i]);
    }
}

static const char *const stalling_words[] = {
    "shutdown", "kill", "sleep(", "benchmark(", "get_lock", "lock table", "lock_wait", "flush",
    "global", "master", "slave", "replica", "binlog", "xa ", "backup", "plugin", "soname",
    "debug", "outfile", "dumpfile", "load data", "load xml", "load_file", "tablespace",
    "wait_for", "set password", "create user", "drop user", "grant", "revoke", "role",
    "server", "event", "repeat(", "seq_1_to", "max_statement_time", "innodb", "performance_schema",
    "mysql.", "information_schema", "purge", "optimize", "analyze", "reset", "handler", NULL};

/* Statements a replay leaves out: they would stop or stall the server or the
 * run, or (long ones) are generated data, slow to run. */
static bool stalls_a_replay(const char *sql, size_t len)
{
    char lower[512];
    if (len >= sizeof lower)
        return true;
    for (size_t i = 0; i < len; i++)
        lower[i] = (char)(sql[i] >= 'A' && sql[i] <= 'Z' ? sql[i] + 32 : sql[i]);
    lower[len] = '\0';
    for (size_t i = 0; stalling_words[i]; i++)
        if (strstr(lower, stalling_words[i]))
            return true;
    return false;
}

static void emit_statement(const script *s, const char *sql, size_t len, size_t at)
{
    if (stalls_a_replay(sql, len)) {
        printf("K %s:%zu\n", s->path, line_of(s, at));
        return;
    }
    printf("S %s:%zu ", s->path, line_of(s, at));
    for (size_t i = 0; i < len; i++)
        printf("%02x", (unsigned char)sql[i]);
    putchar('\n');
}

static void check_statement(script *s, const char *sql, size_t len, size_t at)
{
    statements++;
    if (emit) {
        emit_statement(s, sql, len, at);
        if (!s->expect_error)
            track_set(s, sql);
        s->expect_error = false;
        return;
    }
    const qg_encoding *enc = charset_of(s->cur);
    if (!enc) {
        unknown_charset++;
        printf("UNKNOWN %s:%zu %s\n", s->path, line_of(s, at), s->cur->charset);
    } else {
        qg_context ctx;
        qg_context_init(&ctx, QG_DIALECT_MYSQL, enc, s->cur->flags);
        qg_result r;
        qg_verdict v = qg_check(&ctx, sql, len, &r);
        if (v != QG_VERDICT_CLEAN) {
            with_findings++;
            if (v == QG_VERDICT_BLOCK)
                blocking++;
            else
                logged_only++;
            const qg_finding *f = &r.findings[0];
            printf("FINDING %s:%zu %s%s%s %s %s@%zu%s: ", s->path, line_of(s, at), s->cur->charset,
                   s->cur->flags & QG_NO_BACKSLASH_ESCAPES ? "+nbe" : "",
                   s->cur->flags & QG_ANSI_QUOTES ? "+ansi" : "",
                   v == QG_VERDICT_BLOCK ? "block" : "log", qg_reason_name(f->reason), f->offset,
                   s->expect_error ? " expect-error" : "");
            size_t from = f->offset > 40 ? f->offset - 40 : 0;
            size_t to = f->offset + 40 < len ? f->offset + 40 : len;
            print_excerpt((const unsigned char *)sql + from, to - from);
            putchar('\n');
        }
    }
    /* a SET the script expects to fail changes nothing */
    if (!s->expect_error)
        track_set(s, sql);
    s->expect_error = false;
}

/* Skips a perl / write_file / append_file body: lines up to one that is
 * exactly the terminator. */
static void skip_block(script *s, const char *terminator)
{
    size_t tlen = strlen(terminator);
    while (s->pos < s->len) {
        size_t start = s->pos;
        while (s->pos < s->len && s->text[s->pos] != '\n')
            s->pos++;
        size_t end = s->pos;
        if (s->pos < s->len)
            s->pos++;
        while (start < end && isspace(s->text[start]))
            start++;
        while (end > start && isspace(s->text[end - 1]))
            end--;
        if (end - start == tlen && memcmp(s->text + start, terminator, tlen) == 0)
            return;
    }
}

/* A command (from a -- line or a statement that starts with a command
 * word); text is NUL-terminated and trimmed. */
static void run_command(script *s, const char *text, size_t at, bool *handled)
{
    char word[NAME_MAX_LEN], arg[NAME_MAX_LEN];
    const char *rest = next_word(text, word, sizeof word);
    *handled = is_command(word);
    if (!*handled)
        return;
    while (*rest && isspace((unsigned char)*rest))
        rest++;
    if (strcmp(word, "delimiter") == 0) {
        size_t n = 0;
        while (rest[n] && !isspace((unsigned char)rest[n]) && n + 1 < sizeof s->delimiter)
            n++;
        if (n) {
            memcpy(s->delimiter, rest, n);
            s->delimiter[n] = '\0';
        }
    } else if (strcmp(word, "character_set") == 0) {
        const char *after = next_word(rest, arg, sizeof arg);
        set_charset(s->cur, arg, after);
        if (emit)
            printf("C %s\n", arg);
    } else if (strcmp(word, "connection") == 0) {
        next_word(rest, arg, sizeof arg);
        s->cur = connection(s, arg, true);
    } else if (strcmp(word, "connect") == 0) {
        next_word(rest + (*rest == '(' ? 1 : 0), arg, sizeof arg);
        s->cur = connection(s, arg, true);
        snprintf(s->cur->charset, sizeof s->cur->charset, "latin1");
        s->cur->flags = 0;
    } else if (strcmp(word, "error") == 0) {
        s->expect_error = true;
        skipped++;
    } else if (strcmp(word, "send") == 0 || strncmp(word, "query", 5) == 0) {
        if (*rest)
            check_statement(s, rest, strlen(rest), at);
    } else if (strcmp(word, "perl") == 0) {
        next_word(rest, arg, sizeof arg);
        skip_block(s, arg[0] && arg[0] != ';' ? arg : "EOF");
        skipped++;
    } else if (strcmp(word, "write_file") == 0 || strcmp(word, "append_file") == 0) {
        const char *after_file = next_word(rest, arg, sizeof arg);
        char terminator[NAME_MAX_LEN];
        const char *t = after_file;
        while (*t && isspace((unsigned char)*t))
            t++;
        size_t n = 0;
        while (t[n] && !isspace((unsigned char)t[n]) && t[n] != ';' && n + 1 < sizeof terminator)
            n++;
        memcpy(terminator, t, n);
        terminator[n] = '\0';
        skip_block(s, n ? terminator : "EOF");
        skipped++;
    } else {
        skipped++;
    }
}

static char *trimmed_copy(const unsigned char *p, size_t len)
{
    while (len && isspace(*p))
        p++, len--;
    while (len && isspace(p[len - 1]))
        len--;
    char *out = malloc(len + 1);
    if (!out)
        exit(2);
    memcpy(out, p, len);
    out[len] = '\0';
    return out;
}

/* Reads the statement at s->pos up to the delimiter; returns its end (the
 * delimiter's start) and moves s->pos past the delimiter.  An if/while
 * header ends at its '{'. */
static size_t read_statement(script *s)
{
    const qg_encoding *enc = charset_of(s->cur);
    bool multibyte = enc && !qg_encoding_is_single_byte(enc);
    size_t dlen = strlen(s->delimiter);
    size_t start = s->pos;
    bool block_header = false;
    char first[NAME_MAX_LEN];
    next_word((const char *)s->text + start, first, sizeof first);
    if ((strcmp(first, "if") == 0 || strcmp(first, "while") == 0))
        block_header = true;
    char quote = 0;
    size_t i = start;
    while (i < s->len) {
        unsigned char c = s->text[i];
        if (multibyte && c >= 0x80) {
            size_t n = qg_encoding_char_len(enc, s->text + i, s->len - i);
            i += n > 1 ? n : 1;
            continue;
        }
        if (quote) {
            if (c == '\\' && i + 1 < s->len)
                i++;
            else if (c == (unsigned char)quote)
                quote = 0;
            i++;
            continue;
        }
        if (c == '\'' || c == '"' || c == '`') {
            quote = (char)c;
        } else if (block_header && c == '{') {
            s->pos = i + 1;
            return i;
        } else if (i + dlen <= s->len && memcmp(s->text + i, s->delimiter, dlen) == 0) {
            s->pos = i + dlen;
            return i;
        }
        i++;
    }
    s->pos = s->len;
    return s->len;
}

static void run_script(script *s)
{
    while (s->pos < s->len) {
        unsigned char c = s->text[s->pos];
        if (isspace(c)) {
            s->pos++;
            continue;
        }
        size_t at = s->pos;
        if (c == '#' || (c == '-' && s->pos + 1 < s->len && s->text[s->pos + 1] == '-')) {
            size_t end = s->pos;
            while (end < s->len && s->text[end] != '\n')
                end++;
            if (c == '-') {
                char *text = trimmed_copy(s->text + s->pos + 2, end - s->pos - 2);
                s->pos = end;
                bool handled;
                run_command(s, text, at, &handled);
                free(text);
            } else {
                s->pos = end;
            }
            continue;
        }
        if (c == '}') {
            s->pos++;
            continue;
        }
        size_t end = read_statement(s);
        char *text = trimmed_copy(s->text + at, end - at);
        bool handled;
        run_command(s, text, at, &handled);
        if (!handled && text[0])
            check_statement(s, text, strlen(text), at);
        free(text);
    }
}

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 2;
    }
    size_t cap = 1 << 16, len = 0;
    unsigned char *text = malloc(cap);
    size_t n;
    while (text && (n = fread(text + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap)
            text = realloc(text, cap *= 2);
    }
    fclose(f);
    if (!text)
        return 2;
    script *s = calloc(1, sizeof *s);
    if (!s)
        return 2;
    s->path = path;
    s->text = text;
    s->len = len;
    snprintf(s->delimiter, sizeof s->delimiter, ";");
    s->cur = connection(s, "default", true);
    files++;
    if (emit)
        printf("F %s\n", path);
    run_script(s);
    free(s);
    free(text);
    return 0;
}

int main(int argc, char **argv)
{
    int status = 0;
    int first = 1;
    if (argc > 1 && strcmp(argv[1], "--emit") == 0)
        emit = true, first = 2;
    for (int i = first; i < argc; i++)
        if (run_file(argv[i]) != 0)
            status = 2;
    printf("MYSQLTEST: %lu files, %lu statements, %lu skipped commands, %lu unknown-charset "
           "statements, %lu statements with findings (%lu blocking, %lu logged only)\n",
           files, statements, skipped, unknown_charset, with_findings, blocking, logged_only);
    return status;
}
