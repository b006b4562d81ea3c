<?php
// A legacy page on a compressed connection (MYSQLI_CLIENT_COMPRESS,
// PDO::MYSQL_ATTR_COMPRESS): a session change as a query (the escaper never
// learns it), then a query built with the driver's escaper or addslashes.
//   php mysql_compress.php SOCKET API SETUP ESCAPE INPUT MARKER
//   API: mysqli | pdo
//   SETUP: gbk (SET NAMES gbk) | nbe (sql_mode NO_BACKSLASH_ESCAPES added)
//   ESCAPE: real_escape_string | addslashes
//   INPUT: hex (the attack), - (a legitimate short text), big:MIB (a legitimate
//          row of MIB MiB inserted and read back: packets past 16 MiB, many frames),
//          big:MIB:HEX (the attack after MIB MiB of legitimate text)
//   SOCKET tls:PORT (mysqli): over TLS to 127.0.0.1:PORT, saying the TLS version
[$_, $socket, $api, $setup, $escape, $input, $marker] = $argv;
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
            exit(0);
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
        exit(0);
    }
    $db->setAttribute(PDO::ATTR_ERRMODE, PDO::ERRMODE_SILENT);
    return $db;
}

// The rows of $sql, or the error as the page shows it.
function rows($db, string $sql)
{
    if ($db instanceof mysqli) {
        $res = $db->query($sql);
        if ($res === false)
            return "ERROR: " . $db->errno . " " . $db->sqlstate . " " . $db->error;
        return $res === true ? [] : $res->fetch_all();
    }
    $st = $db->query($sql);
    if ($st === false) {
        $e = $db->errorInfo();
        return "ERROR: " . $e[1] . " " . $e[0] . " " . $e[2];
    }
    return $st->fetchAll(PDO::FETCH_NUM);
}

function escaped($db, string $escape, string $text)
{
    if ($escape === 'addslashes')
        return addslashes($text);
    return $db instanceof mysqli ? $db->real_escape_string($text) : substr($db->quote($text), 1, -1);
}

$db = compressed($api, $socket);
echo "COMPRESSION: ", rows($db, "SHOW SESSION STATUS LIKE 'Compression'")[0][1], "\n";
rows($db, $setup === 'gbk' ? "SET NAMES gbk"
                           : "SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')");
// GBK c4 e3, a quote and a backslash in every unit: escaped all along
function big(string $mib)
{
    return str_repeat("\xc4\xe3'\\ab" . str_repeat('x', 58), (int)$mib * 16384);
}

$big = explode(':', $input);
if ($big[0] === 'big' && count($big) === 2) {
    $text = big($big[1]);
    $esc = escaped($db, $escape, $text);
    echo "QUERY BYTES: ", strlen($esc) > 16777215 ? "past 16 MiB" : strlen($esc), "\n";
    $r = rows($db, "INSERT INTO big (v) VALUES (/*$marker*/ '$esc')");
    echo is_string($r) ? "$r\n" : "INSERTED\n";
    $r = rows($db, "SELECT v, LENGTH(v) FROM big ORDER BY id DESC LIMIT 1");
    if (is_string($r)) {
        echo "$r\n";
    } else {
        echo "READ: ", $r[0][1], " bytes, ", $r[0][0] === $text ? "as written" : "DIFFERENT", "\n";
        echo "MD5: ", md5($r[0][0]), "\n";
    }
} else {
    if ($big[0] === 'big')
        $text = big($big[1]) . hex2bin($big[2]);
    else
        $text = $input === '-' ? "\xc4\xe3'\\" : hex2bin($input); // GBK c4 e3, then ' and \
    $esc = escaped($db, $escape, $text);
    $sql = $input === '-' ? "SELECT /*$marker*/ HEX('$esc'), 1"
                          : "SELECT /*$marker*/ secret FROM users WHERE name = '$esc'";
    $r = rows($db, $sql);
    if (is_string($r))
        echo "$r\n";
    else
        foreach ($r as $row) echo "ROW: ", $row[0], "\n";
}
echo "ALIVE: ", rows($db, "SELECT 'alive'")[0][0], "\n";
echo "COMPRESSION AFTER: ", rows($db, "SHOW SESSION STATUS LIKE 'Compression'")[0][1], "\n";
