<?php
// A legitimate page: text with 0x5c trail bytes, escaped for the charset the
// driver knows (set_charset / DSN charset), stored and read back; prepared
// statements too.  Its output must be the same with and without the shim.
//   php mysql_legit.php SOCKET API CHARSET TEXT_HEX
//   SOCKET tls:PORT: over TLS to 127.0.0.1:PORT (mysql_connect.php)
[$_, $socket, $api, $charset, $hex] = $argv;
require __DIR__ . '/mysql_connect.php';
mysqli_report(MYSQLI_REPORT_OFF);
$text = hex2bin($hex);
if ($api === 'mysqli') {
    $db = qg_mysqli_connect($socket);
    $db->set_charset($charset);
    $db->query("INSERT INTO rt VALUES (1, '" . $db->real_escape_string($text) . "')");
    $st = $db->prepare("INSERT INTO rt VALUES (2, ?)");
    $st->bind_param('s', $text);
    $st->execute();
    $res = $db->query("SELECT id, HEX(b) FROM rt WHERE b = '" . $db->real_escape_string($text) . "' ORDER BY id");
    foreach ($res->fetch_all() as $r) echo "ROW: ", $r[0], " ", $r[1], "\n";
    $db->query("DELETE FROM rt");
} else {
    $db = qg_pdo_connect($socket, $charset);
    $db->exec("INSERT INTO rt VALUES (1, " . $db->quote($text) . ")");
    $st = $db->prepare("INSERT INTO rt VALUES (2, ?)");
    $st->execute([$text]);
    $st = $db->prepare("SELECT id, HEX(b) FROM rt WHERE b = ? ORDER BY id");
    $st->execute([$text]);
    foreach ($st->fetchAll(PDO::FETCH_NUM) as $r) echo "ROW: ", $r[0], " ", $r[1], "\n";
    $db->exec("DELETE FROM rt");
}
echo "DONE\n";
