<?php
// Legacy PHP pages that change the connection's character set in ways only
// the protocol shows, then send a query whose input was escaped with
// addslashes (attack: bf 27 ' OR 1=1 --) or a correctly escaped GBK text
// (legit: a character whose trail byte is 0x5c, and a quote).
//   php mysql_php_paths.php SOCKET CASE attack|legit MARKER [compress]
//   CASE pdo_native:   PDO, ATTR_EMULATE_PREPARES off: SET NAMES gbk prepared
//                      and executed (COM_STMT_PREPARE / EXECUTE), the query prepared
//   CASE pdo_emulated: the same with emulated prepares (COM_QUERY)
//   CASE change_user:  mysqli connected with charset gbk, SET NAMES utf8mb4
//                      as a query, then change_user (its collation: gbk)
//   CASE mysqli_gbk:   mysqli, SET NAMES gbk as a query
//   compress: MYSQLI_CLIENT_COMPRESS / PDO::MYSQL_ATTR_COMPRESS
[$_, $socket, $case, $what, $marker] = $argv;
$compress = ($argv[5] ?? '') === 'compress';
mysqli_report(MYSQLI_REPORT_OFF);
if ($what === 'attack') {
    $text = addslashes(hex2bin('bf27204f5220313d31202d2d20'));
    $sql = "SELECT /*$marker*/ secret FROM users WHERE name = '$text'";
} else {
    $sql = "SELECT /*$marker*/ HEX('\xbf\x5c\\'x') AS h";
}
if (str_starts_with($case, 'pdo')) {
    $db = new PDO("mysql:unix_socket=$socket;dbname=qg;charset=utf8mb4", 'root', '', [
        PDO::ATTR_EMULATE_PREPARES => $case === 'pdo_emulated',
        PDO::ATTR_ERRMODE => PDO::ERRMODE_SILENT,
        PDO::MYSQL_ATTR_COMPRESS => $compress,
    ]);
    $set = $db->prepare('SET NAMES gbk');
    if (!$set || !$set->execute())
        echo "SETUP ERROR: ", implode(' ', ($set ?: $db)->errorInfo()), "\n";
    $st = $db->prepare($sql);
    if ($st && $st->execute()) {
        foreach ($st->fetchAll(PDO::FETCH_NUM) as $r) echo "ROW: ", $r[0], "\n";
    } else {
        $e = ($st ?: $db)->errorInfo();
        echo "ERROR: ", $e[1], " ", $e[2], "\n";
    }
    $alive = $db->query("SELECT 'alive'")->fetch(PDO::FETCH_NUM)[0];
} else {
    $db = mysqli_init();
    if ($case === 'change_user')
        $db->options(MYSQLI_SET_CHARSET_NAME, 'gbk');
    $db->real_connect('localhost', 'root', '', 'qg', 0, $socket, $compress ? MYSQLI_CLIENT_COMPRESS : 0);
    if ($case === 'change_user') {
        $db->query('SET NAMES utf8mb4');
        if (!$db->change_user('root', '', 'qg'))
            echo "SETUP ERROR: ", $db->error, "\n";
    } else {
        $db->query('SET NAMES gbk');
    }
    $res = $db->query($sql);
    if ($res === false) {
        echo "ERROR: ", $db->errno, " ", $db->error, "\n";
    } else {
        foreach ($res->fetch_all() as $r) echo "ROW: ", $r[0], "\n";
    }
    $alive = $db->query("SELECT 'alive'")->fetch_row()[0];
}
echo "ALIVE: $alive\n";
