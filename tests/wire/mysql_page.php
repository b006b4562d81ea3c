<?php
// A legacy page: SET NAMES as a query (the escaper never learns it), then a
// query built with the driver's escaper or addslashes.
//   php mysql_page.php SOCKET API CHARSET ESCAPE INPUT_HEX MARKER
//   API: mysqli | pdo; ESCAPE: real_escape_string | addslashes | none (legit page)
//   SOCKET tls:PORT: over TLS to 127.0.0.1:PORT (mysql_connect.php)
[$_, $socket, $api, $charset, $escape, $hex, $marker] = $argv;
require __DIR__ . '/mysql_connect.php';
mysqli_report(MYSQLI_REPORT_OFF);
$input = hex2bin($hex);
if ($api === 'mysqli') {
    $db = qg_mysqli_connect($socket);
    $db->query("SET NAMES $charset");
    $esc = $escape === 'addslashes' ? addslashes($input) : $db->real_escape_string($input);
} else {
    $db = qg_pdo_connect($socket, 'utf8mb4');
    $db->setAttribute(PDO::ATTR_ERRMODE, PDO::ERRMODE_SILENT);
    $db->exec("SET NAMES $charset");
    $esc = $escape === 'addslashes' ? addslashes($input) : substr($db->quote($input), 1, -1);
}
$sql = "SELECT /*$marker*/ secret FROM users WHERE name = '$esc'";
$rows = [];
if ($api === 'mysqli') {
    $res = $db->query($sql);
    if ($res === false) {
        echo "ERROR: ", $db->errno, " ", $db->sqlstate, " ", $db->error, "\n";
    } else {
        foreach ($res->fetch_all() as $r) echo "ROW: ", $r[0], "\n";
    }
    $alive = $db->query("SELECT 'alive'")->fetch_row()[0];
} else {
    $st = $db->query($sql);
    if ($st === false) {
        $e = $db->errorInfo();
        echo "ERROR: ", $e[1], " ", $e[0], " ", $e[2], "\n";
    } else {
        foreach ($st->fetchAll(PDO::FETCH_NUM) as $r) echo "ROW: ", $r[0], "\n";
    }
    $alive = $db->query("SELECT 'alive'")->fetch(PDO::FETCH_NUM)[0];
}
echo "ALIVE: $alive\n";
