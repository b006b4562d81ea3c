<?php
// The MySQL pages of the 2006-style application: mysqli (mysqlnd, which
// speaks the protocol itself), one connection per request, the connection
// character set chosen with a SET NAMES query that mysqlnd's escaper never
// learns, user input pasted into SQL.  Do not copy: this is the vulnerable
// pattern under test.

// Connects to the MariaDB server at $QG_MY_SOCKET (database shop) and sends
// SET NAMES $charset as a plain query.
function my_connect($charset)
{
    mysqli_report(MYSQLI_REPORT_OFF);
    $db = @new mysqli('localhost', 'root', '', 'shop', 0, getenv('QG_MY_SOCKET'));
    if ($db->connect_errno) {
        http_response_code(500);
        exit("cannot connect\n");
    }
    $db->query("SET NAMES $charset");
    return $db;
}

// Runs the query and prints its rows as a table, or the database error.
function my_show_rows($db, $sql, $charset)
{
    header("Content-Type: text/html; charset=$charset");
    echo "<html><body>\n";
    $res = $db->query($sql);
    if ($res === false) {
        echo "<p>query failed: " . htmlspecialchars($db->error, ENT_QUOTES, 'ISO-8859-1') . "</p>\n";
    } else {
        echo "<table>\n";
        while ($row = $res->fetch_row()) {
            echo "<tr><td>" . implode("</td><td>", $row) . "</td></tr>\n";
        }
        echo "</table>\n<p>" . $res->num_rows . " rows</p>\n";
    }
    echo "</body></html>\n";
}
