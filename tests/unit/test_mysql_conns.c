/* The MySQL front's records of the library's handles (src/policy/mysql_conns.c):
 * blocked errors per connection and statement, what closing forgets, and
 * the escaper's last used connection. */
#include <string.h>

#include "mysql_conns.h"
#include "tap.h"

static qg_decision decision(const char *sqlstate)
{
    qg_decision d = {.block = true, .sqlstate = sqlstate};
    strcpy(d.message, "quoteguard: blocked");
    return d;
}

int main(void)
{
    static int mysql, other, stmt;
    tap_ok(qg_my_conn_find(&mysql) == NULL && qg_my_conn_block(&mysql) == NULL,
           "no entry before the connection is used");
    qg_my_conn *e = qg_my_conn_use(&mysql);
    tap_ok(e && qg_my_conn_find(&mysql) == e, "a used connection has its entry");
    tap_ok(qg_my_conn_block(&mysql) == NULL, "and no pending block");
    qg_decision d = decision("22021");
    qg_my_block_set(&e->block, &d, true);
    const qg_my_block *b = qg_my_conn_block(&mysql);
    tap_ok(b && b->await_read && strcmp(b->sqlstate, "22021") == 0 &&
               strcmp(b->message, "quoteguard: blocked") == 0,
           "a block is pending with its sqlstate and message");
    tap_ok(qg_my_conn_block(&other) == NULL, "on that connection only");
    qg_my_block_clear(&e->block);
    tap_ok(qg_my_conn_block(&mysql) == NULL, "cleared by the next call");
    d = decision("bad");
    qg_my_block_set(&e->block, &d, false);
    tap_ok(strcmp(qg_my_conn_block(&mysql)->sqlstate, QG_MY_BLOCK_SQLSTATE) == 0,
           "a sqlstate that is not 5 characters becomes " QG_MY_BLOCK_SQLSTATE);

    qg_my_stmt *s = qg_my_stmt_add(&stmt, &mysql);
    tap_ok(s && s->mysql == &mysql && qg_my_stmt_find(&stmt) == s,
           "a statement's entry names its connection");
    qg_my_block_set(&s->block, &d, false);
    tap_ok(qg_my_stmt_block(&stmt) != NULL, "a statement's block is pending");
    qg_my_stmt_close(&stmt);
    tap_ok(qg_my_stmt_find(&stmt) == NULL && qg_my_stmt_block(&stmt) == NULL,
           "closing the statement forgets it and its block");

    bool quotes_only, first;
    tap_ok(qg_my_last_used_escape(&quotes_only, &first) == NULL,
           "latin1 rules are right for a connection in the default state");
    qg_my_state_set_charset(&e->session.state, "gbk", 3);
    const qg_encoding *enc = qg_my_last_used_escape(&quotes_only, &first);
    tap_ok(enc && first && !quotes_only, "a GBK connection needs the escaper's upgrade, once");
    enc = qg_my_last_used_escape(&quotes_only, &first);
    tap_ok(enc && !first, "logged the first time only");
    qg_my_conn_close(&mysql);
    tap_ok(qg_my_conn_find(&mysql) == NULL && qg_my_conn_block(&mysql) == NULL,
           "closing the connection forgets it and its block");
    tap_ok(qg_my_last_used_escape(&quotes_only, &first) == NULL,
           "and it is no longer the last used");
    return tap_done();
}
