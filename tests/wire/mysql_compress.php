<?php
// A legacy page on a compressed connection (MYSQLI_CLIENT_COMPRESS,
// PDO::MYSQL_ATTR_COMPRESS): SET NAMES as a query, then a query built with
// the driver's escaper.  When the compressed connection cannot be made, the
// page says why and connects again without compression (the process goes on).
//   php mysql_compress.php SOCKET API CHARSET INPUT_HEX MARKER
//   API: mysqli | pdo; INPUT_HEX "-": the legitimate page
//   SOCKET tls:PORT (mysqli): over TLS to 127.0.0.1:PORT, saying the TLS version
[$_, $socket, $api, $charset, $hex, $marker] = $argv;
mysqli_report(MYSQLI_REPORT_OFF);

function compressed(string $api, string $socket)
{
    if ($api === 'mysqli') {
        $db = mysqli_init();
        $tls = strncmp($socket, 'tls:', 4) === 0;
        $connected = $tls
            ? @$db->real_connect('127.0.0.1', 'root', '', 'qg', (int)substr($socket, 4), null,
                                 MYSQLI_CLIENT_COMPRESS | MYSQLI_CLIENT_SSL |
                                 MYSQLI_CLIENT_SSL_DONT_VERIFY_SERVER_CERT)
            : @$db->real_connect('localhost', 'root', '', 'qg', 0, $socket, MYSQLI_CLIENT_COMPRESS);
        if (!$connected) {
            echo "CONNECT ERROR: ", $db->connect_errno, " ", $db->connect_error, "\n";
            return null;
        }
        if ($tls)
            echo "TLS: ", $db->query("SHOW SESSION STATUS LIKE 'Ssl_version'")->fetch_row()[1], "\n";
        return $db;
    }
    try {
        $db = new PDO("mysql:unix_socket=$socket;dbname=qg;charset=utf8mb4", 'root', '',
                      [PDO::MYSQL_ATTR_COMPRESS => true]);
    } catch (PDOException $e) {
        echo "CONNECT ERROR: ", $e->getCode(), " ", $e->getMessage(), "\n";
        return null;
    }
    $db->setAttribute(PDO::ATTR_ERRMODE, PDO::ERRMODE_SILENT);
    return $db;
}

function one($db, string $sql)
{
    return $db instanceof mysqli ? $db->query($sql)->fetch_row() : $db->query($sql)->fetch(PDO::FETCH_NUM);
}

$db = compressed($api, $socket);
if ($db === null) {
    $plain = strncmp($socket, 'tls:', 4) === 0
        ? new mysqli('127.0.0.1', 'root', '', 'qg', (int)substr($socket, 4))
        : new mysqli('localhost', 'root', '', 'qg', 0, $socket);
    echo "UNCOMPRESSED AFTER: ", $plain->query("SELECT 'works'")->fetch_row()[0], "\n";
    exit(0);
}
echo "COMPRESSION: ", one($db, "SHOW SESSION STATUS LIKE 'Compression'")[1], "\n";
if ($db instanceof mysqli) {
    $db->query("SET NAMES $charset");
} else {
    $db->exec("SET NAMES $charset");
}
$input = $hex === '-' ? "\xc4\xe3'\\" : hex2bin($hex); // GBK c4 e3, then ' and \
$esc = $db instanceof mysqli ? $db->real_escape_string($input) : substr($db->quote($input), 1, -1);
$sql = $hex === '-' ? "SELECT /*$marker*/ HEX('$esc'), 1"
                    : "SELECT /*$marker*/ secret FROM users WHERE name = '$esc'";
if ($db instanceof mysqli) {
    $res = $db->query($sql);
    if ($res === false)
        echo "ERROR: ", $db->errno, " ", $db->sqlstate, " ", $db->error, "\n";
    else
        foreach ($res->fetch_all() as $r) echo "ROW: ", $r[0], "\n";
} else {
    $st = $db->query($sql);
    if ($st === false) {
        $e = $db->errorInfo();
        echo "ERROR: ", $e[1], " ", $e[0], " ", $e[2], "\n";
    } else {
        foreach ($st->fetchAll(PDO::FETCH_NUM) as $r) echo "ROW: ", $r[0], "\n";
    }
}
echo "ALIVE: ", one($db, "SELECT 'alive'")[0], "\n";
