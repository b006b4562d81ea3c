/* The fronts' mixed OLTP corpus, shared by bench_front (through the client
 * libraries) and bench_cold (the checker alone): CORPUS statements of
 * 60-250 bytes, point selects and updates of the table qg_bench (id, c),
 * whose text literal is ASCII, UTF-8 Chinese or Korean, or Shift_JIS with
 * 0x5c trail bytes (表 能 ソ).  Entry i: kinds in turn, every third an
 * update, literals of 1-8 pieces. */
#ifndef QG_BENCH_FRONT_CORPUS_H
#define QG_BENCH_FRONT_CORPUS_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

enum { CORPUS = 40, STATEMENT_MAX = 512 };

typedef enum { ASCII, CHINESE, KOREAN, SJIS, KINDS } text_kind;

static const char *const kind_names[KINDS] = {"ascii", "chinese", "korean", "sjis"};

/* Pieces of text a literal is made of, per kind; Shift_JIS: 表示 能力
 * ソフト 予定 (each first character has the trail byte 0x5c) and "it's". */
static const char *const kind_pieces[KINDS] = {
    "it's a plain row ",
    "\xe6\x95\xb0\xe6\x8d\xae\xe5\xba\x93\xe6\x9f\xa5\xe8\xaf\xa2 ",
    "\xed\x95\x9c\xea\xb5\xad\xec\x96\xb4 \xeb\x8d\xb0\xec\x9d\xb4\xed\x84\xb0 ",
    "\x95\x5c\x8e\xa6\x94\x5c\x97\xcd\x83\x5c\x83\x74\x83\x67\x97\x5c\x92\xe8it's ",
};

typedef struct entry {
    text_kind kind;
    bool update;
    unsigned id;
    char raw[STATEMENT_MAX]; /* the literal before escaping */
} entry;

static inline void build_corpus(entry corpus[CORPUS])
{
    for (unsigned i = 0; i < CORPUS; i++) {
        entry *e = &corpus[i];
        e->kind = (text_kind)(i % KINDS);
        e->update = i % 3 == 2;
        e->id = 1 + (i * 7919u) % 1000;
        e->raw[0] = '\0';
        for (unsigned n = 0; n < 1 + (i * 5) % 8; n++)
            strcat(e->raw, kind_pieces[e->kind]);
    }
}

/* The statement of entry e around its escaped literal. */
static inline int corpus_statement(char *out, const entry *e, const char *escaped)
{
    if (e->update)
        return snprintf(out, STATEMENT_MAX, "UPDATE qg_bench SET c = '%s' WHERE id = %u", escaped,
                        e->id);
    return snprintf(out, STATEMENT_MAX, "SELECT id, c FROM qg_bench WHERE id = %u AND c <> '%s'",
                    e->id, escaped);
}

#endif
