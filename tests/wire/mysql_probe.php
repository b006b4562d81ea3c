<?php
// PHP mysqli after statements whose effect on the connection's state only
// the server knows (the same cases as mysql_probe.py).
//   php mysql_probe.php SOCKET var attack|legit MARKER
//   php mysql_probe.php SOCKET names-default MARKER
//   php mysql_probe.php SOCKET restore DB DUMPFILE
//   php mysql_probe.php SOCKET diag
// Each answer is printed with what mysqli reports of it (affected rows,
// insert id, warning count, info); then the connection still answers.
// SOCKET tls:PORT: over TLS to 127.0.0.1:PORT (mysql_connect.php);
// compress:SOCKET: the unix socket with MYSQLI_CLIENT_COMPRESS.
require __DIR__ . '/mysql_connect.php';
[$_, $socket, $mode] = $argv;
mysqli_report(MYSQLI_REPORT_OFF);
if (strncmp($socket, 'compress:', 9) === 0) {
    $db = mysqli_init();
    $db->real_connect('localhost', 'root', '', 'qg', 0, substr($socket, 9), MYSQLI_CLIENT_COMPRESS);
    echo "COMPRESSION: ", $db->query("SHOW SESSION STATUS LIKE 'Compression'")->fetch_row()[1], "\n";
} else {
    $db = qg_mysqli_connect($socket);
}
$db->set_charset('utf8mb4');

function run(mysqli $db, string $sql, string $label = 'OK:'): void
{
    $res = $db->query($sql);
    if ($res === false) {
        echo "ERROR: {$db->errno} {$db->error}\n";
        return;
    }
    $rows = $res === true ? [] : $res->fetch_all(MYSQLI_NUM);
    echo $label, ' ', $db->affected_rows, ' ', $db->insert_id, ' ', $db->warning_count, ' ',
        $db->info ?? '-', ' ', json_encode($rows), "\n";
}

if ($mode === 'var') {
    [, , , $what, $marker] = $argv;
    run($db, "SET @v = 'gbk'");
    run($db, 'SET character_set_client = @v');
    if ($what === 'attack') {
        $text = addslashes(hex2bin('bf27204f5220313d31202d2d20'));
        run($db, "SELECT /*$marker*/ secret FROM users WHERE name = '$text'", 'RESULT:');
    } else {
        run($db, "SELECT /*$marker*/ HEX('\xbf\x5c\\'x') AS h", 'RESULT:');
    }
} elseif ($mode === 'names-default') {
    $marker = $argv[3];
    run($db, 'SET NAMES gbk');
    run($db, 'SET NAMES DEFAULT');
    $text = $db->real_escape_string("caf\u{e9} \u{8868} \u{4e2d} 'q' \\ \"d\" \u{1f600}");
    run($db, "SELECT /*$marker*/ HEX('$text') AS h", 'RESULT:');
} elseif ($mode === 'restore') {
    [, , , $name, $path] = $argv;
    $db->select_db($name);
    $statements = $errors = 0;
    $pending = '';
    foreach (file($path) as $line) {
        if ($pending === '' && (str_starts_with($line, '--') || trim($line) === '')) {
            continue;
        }
        $pending .= $line;
        if (str_ends_with(rtrim($pending), ';')) {
            $statements++;
            $res = $db->query(rtrim($pending));
            if ($res === false) {
                $errors++;
                echo "ERROR: {$db->errno} ", substr($db->error, 0, 200), "\n";
            } elseif ($res !== true) {
                $res->free();
            }
            $pending = '';
        }
    }
    echo "RESTORED: $statements statements, $errors errors\n";
} elseif ($mode === 'diag') {
    run($db, 'CREATE TEMPORARY TABLE d (id INT AUTO_INCREMENT PRIMARY KEY, b VARCHAR(4))');
    run($db, "SET sql_mode = ''");
    run($db, "INSERT INTO d (b) VALUES ('a'), ('b'), ('c'), ('d'), ('e')");
    run($db, 'SET @v = @@character_set_client');
    run($db, 'SELECT SQL_CALC_FOUND_ROWS id FROM d ORDER BY id LIMIT 2');
    run($db, 'SET character_set_client = @v');
    run($db, "INSERT INTO d (b) VALUES ('\u{e9}t\u{e9} long'), ('\u{e0}')", 'INSERT:');
    run($db, 'SELECT ROW_COUNT(), FOUND_ROWS(), LAST_INSERT_ID(), @@warning_count', 'AFTER:');
    run($db, 'SHOW WARNINGS', 'WARNINGS:');
    run($db, "INSERT INTO d (b) VALUES ('truncated here')");
    run($db, 'SET character_set_client = @v');
    run($db, "SELECT '\u{e9}' AS e, @@warning_count", 'SELECT:');
    run($db, 'SHOW WARNINGS', 'WARNINGS:');
    run($db, "UPDATE d SET b = 'z' WHERE id <= 3", 'UPDATE:');
    run($db, 'SET character_set_client = @v');
    run($db, "UPDATE d SET b = '\u{fc}' WHERE id = 2", 'UPDATE:');
    run($db, 'SELECT ROW_COUNT(), FOUND_ROWS(), LAST_INSERT_ID()', 'AFTER:');
}
run($db, "SELECT 'alive'", 'ALIVE:');
