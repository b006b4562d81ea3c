<?php
// A 2006-style PHP application: one connection per request, the client
// encoding set by the application, user input pasted into SQL after
// addslashes().  Do not copy: this is the vulnerable pattern under test.

// Connects with the PG* environment of the server process; $encoding is the
// client encoding, $std_strings the standard_conforming_strings setting.
function db_connect($encoding, $std_strings)
{
    $conninfo = sprintf("host=%s port=%s user=%s dbname=%s",
                        getenv('PGHOST'), getenv('PGPORT'), getenv('PGUSER'), getenv('PGDATABASE'));
    $db = pg_connect($conninfo);
    if (!$db) {
        http_response_code(500);
        exit("cannot connect\n");
    }
    pg_set_client_encoding($db, $encoding);
    // What servers did before the 2006 fix: \' accepted in any encoding.
    pg_query($db, "SET backslash_quote = on");
    pg_query($db, "SET escape_string_warning = off");
    pg_query($db, "SET standard_conforming_strings = " . ($std_strings ? "on" : "off"));
    return $db;
}

// Runs the query and prints its rows as a table, or the database error.
function show_rows($db, $sql, $charset)
{
    header("Content-Type: text/html; charset=$charset");
    echo "<html><body>\n";
    $res = @pg_query($db, $sql);
    if (!$res) {
        echo "<p>query failed: " . htmlspecialchars(pg_last_error($db), ENT_QUOTES, 'ISO-8859-1') . "</p>\n";
    } else {
        echo "<table>\n";
        while ($row = pg_fetch_row($res)) {
            echo "<tr><td>" . implode("</td><td>", $row) . "</td></tr>\n";
        }
        echo "</table>\n<p>" . pg_num_rows($res) . " rows</p>\n";
    }
    echo "</body></html>\n";
}
