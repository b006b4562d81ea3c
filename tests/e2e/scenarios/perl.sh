#!/bin/bash
# Perl CGI-style scripts: DBI + DBD::Pg (GBK and SJIS) and DBI + DBD::mysql
# (sjis and gbk), input escaped by hand and pasted into SQL, plus a correct
# DBD::mysql search that quotes with $dbh->quote.  Each request runs
# without the shim, under enforce and under audit.
set -u
. "$(dirname "$0")/../lib.sh"
require "$E2E_PERL" curl
require_shim
"$E2E_PERL" -MDBD::Pg -MDBD::mysql -e1 2>/dev/null ||
    { fail "DBD::Pg and DBD::mysql are installed (run make deps)"; exit 1; }

pg_start >/dev/null && e2e_load_data || { fail "PostgreSQL started with the application data"; exit 1; }
my_start >/dev/null && e2e_load_mysql_data || { fail "MariaDB started with the application data"; exit 1; }

union='%20UNION%20SELECT%20id,owner,secret%20FROM%20secrets--%20'
pg_cgi=$E2E_DIR/perl/pg_lookup.cgi
my_cgi=$E2E_DIR/perl/my_lookup.cgi

say "DBD::Pg, GBK: lead byte 0xbf before the quote"
export APP_CHARSET=GBK
cgi_case legit "Pg GBK name=中文" "$QG_PG_LOG" 'name=%D6%D0%CE%C4' "$E2E_PERL" "$pg_cgi"
cgi_case legit "Pg GBK name=o'brien" "$QG_PG_LOG" 'name=o%27brien' "$E2E_PERL" "$pg_cgi"
cgi_case legit "Pg GBK name=C:\\temp" "$QG_PG_LOG" 'name=C:%5Ctemp' "$E2E_PERL" "$pg_cgi"
cgi_case attack "Pg GBK 0xbf' UNION" "$QG_PG_LOG" "name=%bf%27$union" "$E2E_PERL" "$pg_cgi"

say "DBD::Pg, SJIS: lead byte 0x95 before the quote"
export APP_CHARSET=SJIS
cgi_case legit "Pg SJIS name=日本" "$QG_PG_LOG" 'name=%93%FA%96%7B' "$E2E_PERL" "$pg_cgi"
cgi_case attack "Pg SJIS 0x95' UNION" "$QG_PG_LOG" "name=%95%27$union" "$E2E_PERL" "$pg_cgi"

say "DBD::mysql, sjis: lead byte 0x95 before the quote"
export APP_CHARSET=sjis
cgi_case legit "mysql sjis name=日本" "$QG_MY_LOG" 'name=%93%FA%96%7B' "$E2E_PERL" "$my_cgi"
cgi_case legit "mysql sjis name=o'brien" "$QG_MY_LOG" 'name=o%27brien' "$E2E_PERL" "$my_cgi"
cgi_case attack "mysql sjis 0x95' UNION" "$QG_MY_LOG" "name=%95%27$union" "$E2E_PERL" "$my_cgi"

say "DBD::mysql, sjis, \$dbh->quote (correct escaping): a trail byte 0x5c before one"
say "closing quote, then an escaped quote \\' in the next literal"
search_cgi=$E2E_DIR/perl/my_search.cgi
cgi_case legit "mysql sjis quote() name=日本 city=Paris" "$QG_MY_LOG" 'name=%93%FA%96%7B&city=Paris' "$E2E_PERL" "$search_cgi"
cgi_case legit "mysql sjis quote() name=ソ city=St. John's" "$QG_MY_LOG" 'name=%83%5C&city=St.%20John%27s' "$E2E_PERL" "$search_cgi"
cgi_case legit "mysql sjis quote() name=表 city=Dublin's" "$QG_MY_LOG" 'name=%95%5C&city=Dublin%27s' "$E2E_PERL" "$search_cgi"

say "DBD::mysql, gbk: lead byte 0xbf before the quote"
export APP_CHARSET=gbk
cgi_case legit "mysql gbk name=中文" "$QG_MY_LOG" 'name=%D6%D0%CE%C4' "$E2E_PERL" "$my_cgi"
cgi_case attack "mysql gbk 0xbf' UNION" "$QG_MY_LOG" "name=%bf%27$union" "$E2E_PERL" "$my_cgi"

cgi_summary "perl"
exit 0
