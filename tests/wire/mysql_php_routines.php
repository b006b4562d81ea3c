<?php
// A PHP page (mysqli) that calls a procedure which sets sql_mode to
// NO_BACKSLASH_ESCAPES, then escapes its input with real_escape_string.
// MariaDB gives the caller its sql_mode back when the procedure returns but
// leaves the status bit the procedure's SET made, and mysqlnd escapes by
// that bit: quotes doubled, backslashes left, for a server that reads
// backslash escapes.
//   php mysql_php_routines.php SOCKET attack|legit MARKER
// attack: x\' OR 1=1 -- in a SELECT of the secrets; legit: a\b'c, whose
// bytes the server gives back.  Then: the connection still answers.
[$_, $socket, $what, $marker] = $argv;
mysqli_report(MYSQLI_REPORT_OFF);
$db = mysqli_init();
$db->real_connect('localhost', 'root', '', 'qg', 0, $socket);
if (!$db->query('CALL p_nbe()'))
    echo "SETUP ERROR: ", $db->errno, " ", $db->error, "\n";
if ($what === 'attack') {
    $text = $db->real_escape_string("x\\' OR 1=1 -- ");
    $sql = "SELECT /*$marker*/ secret FROM users WHERE name = '$text'";
} else {
    $sql = "SELECT /*$marker*/ HEX('" . $db->real_escape_string("a\\b'c") . "') AS h";
}
$res = $db->query($sql);
if ($res === false) {
    echo "ERROR: ", $db->errno, " ", $db->error, "\n";
} else {
    foreach ($res->fetch_all() as $r) echo "ROW: ", $r[0], "\n";
}
echo "ALIVE: ", $db->query("SELECT 'alive'")->fetch_row()[0], "\n";
