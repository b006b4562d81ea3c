<?php
// Legitimate statements escaped by PHP's own escapers and sent through its
// own drivers: pg_escape_string and pg_escape_literal with pg_query
// (libpq), mysqli_real_escape_string after mysqli_set_charset (mysqlnd,
// which the shim's wire front guards).  The values come from drivers.py
// ("drivers.py values", on stdin); every statement must come back byte for
// byte (as the server gives each value back when sent as a parameter), and one the shim blocks ("quoteguard" in the error) counts as
// blocked.  Prints "driver NAME ENCODING MODE sent N blocked N wrong N
// other N" per driver and setting, as drivers.py does, and writes each
// escaped literal with its value (hex) to DIR/escaped-NAME-ENCODING-MODE.txt
// for measure_rule --verify.
//
// usage: php drivers.php pg|mysql DIR < values
// env:   PGHOST PGPORT PGUSER PGDATABASE (pg), QG_MY_SOCKET (mysql)

$dialect = $argv[1];
$out_dir = $argv[2];
$templates = [];
$counters = [];
$examples = [];
$conn = null;
$escaped_files = [];

function note(&$c, $kind, $what)
{
    global $examples;
    $c[$kind]++;
    if (count($examples) < 6) {
        $examples[] = "$kind: " . substr($what, 0, 300);
    }
}

// The values the statement's result must hold, in its order (drivers.py's
// ordered_result), and the ones it holds: byte strings, compared as such.
function expected_and_got($tpl, $values, $rows)
{
    if (strpos($tpl, "UNION ALL") !== false) {
        $want = array_slice($values, 0, 3);
        $got = array_map(fn($r) => $r[0], $rows);
        sort($want, SORT_STRING);
        sort($got, SORT_STRING);
        return [$want, $got];
    }
    if (strpos($tpl, "AS a WHERE") !== false) {
        return [[$values[0]], array_map(fn($r) => $r[0], $rows)];
    }
    return [$values, $rows ? $rows[0] : []];
}

// The value as the server gives it back when sent as a parameter: where
// the encoding has two codes for one character (SJIS's NEC and IBM
// extensions), the server's conversion answers with one of them.
function server_roundtrip($dialect, $conn, $v)
{
    if ($dialect === "pg") {
        $res = pg_query_params($conn, 'SELECT $1::text', [$v]);
        return $res === false ? null : pg_fetch_row($res)[0];
    }
    $st = mysqli_prepare($conn, "SELECT ?");
    mysqli_stmt_bind_param($st, "s", $v);
    mysqli_stmt_execute($st);
    $r = mysqli_fetch_row(mysqli_stmt_get_result($st));
    mysqli_stmt_close($st);
    return $r[0];
}

function connect_setting($dialect, $enc, $mode)
{
    if ($dialect === "pg") {
        $scs = substr($mode, 4);
        $c = pg_connect(sprintf("host=%s port=%s user=%s dbname=%s options='-c standard_conforming_strings=%s -c escape_string_warning=off'",
                                getenv("PGHOST"), getenv("PGPORT"), getenv("PGUSER"), getenv("PGDATABASE"), $scs),
                        PGSQL_CONNECT_FORCE_NEW);
        if (!$c || pg_set_client_encoding($c, $enc) !== 0) {
            fwrite(STDERR, "cannot connect or set $enc\n");
            exit(2);
        }
        return $c;
    }
    mysqli_report(MYSQLI_REPORT_OFF);
    $c = mysqli_connect("localhost", "root", "", "", 0, getenv("QG_MY_SOCKET"));
    $sql_mode = ["default" => "", "NBE" => "NO_BACKSLASH_ESCAPES", "ANSI_QUOTES" => "ANSI_QUOTES"][$mode];
    if (!$c || !mysqli_set_charset($c, $enc) || !mysqli_query($c, "SET SESSION sql_mode = '$sql_mode'")) {
        fwrite(STDERR, "cannot connect or set $enc $mode\n");
        exit(2);
    }
    return $c;
}

function escaped_file($name, $enc, $mode)
{
    global $escaped_files, $out_dir;
    $key = "$name-$enc-" . preg_replace('/^scs=/', '', $mode);
    if (!isset($escaped_files[$key])) {
        $escaped_files[$key] = fopen("$out_dir/escaped-$key.txt", "w");
    }
    return $escaped_files[$key];
}

$enc = $mode = null;
$n = 0;
while (($line = fgets(STDIN)) !== false) {
    $f = explode(" ", rtrim($line, "\n"));
    if ($f[0] === "template") {
        $templates[(int)$f[1]] = hex2bin($f[2]);
        continue;
    }
    if ($f[0] === "setting") {
        [, $enc, $mode] = $f;
        $conn = connect_setting($dialect, $enc, $mode);
        continue;
    }
    $tpl = $templates[(int)$f[1]];
    $values = array_map(fn($h) => $h === "-" ? "" : hex2bin($h), array_slice($f, 3));
    if ($dialect === "pg") {
        $name = $n++ % 2 ? "pg_escape_literal" : "pg_escape_string";
        $lits = array_map(fn($v) => $name === "pg_escape_literal" ? pg_escape_literal($conn, $v)
                                                                   : "'" . pg_escape_string($conn, $v) . "'", $values);
    } else {
        $name = "mysqli_real_escape_string";
        $lits = array_map(fn($v) => "'" . mysqli_real_escape_string($conn, $v) . "'", $values);
    }
    $file = escaped_file($name, $enc, $mode);
    for ($i = 0; $i < 2 && $i < count($values); $i++) {
        fwrite($file, bin2hex($values[$i]) . " " . bin2hex($lits[$i]) . "\n");
    }
    $sql = preg_replace_callback('/\{(\d)\}/', fn($m) => $lits[(int)$m[1]], $tpl);
    $key = "$name $enc $mode";
    $counters[$key] ??= ["sent" => 0, "blocked" => 0, "wrong" => 0, "other" => 0];
    $counters[$key]["sent"]++;
    $rows = [];
    if ($dialect === "pg") {
        $res = @pg_query($conn, $sql);
        if ($res === false) {
            $msg = pg_last_error($conn);
        } else {
            while (($r = pg_fetch_row($res)) !== false) {
                $rows[] = $r;
            }
        }
    } else {
        $res = mysqli_query($conn, $sql);
        if ($res === false) {
            $msg = mysqli_error($conn);
        } else {
            while (($r = mysqli_fetch_row($res)) !== null) {
                $rows[] = $r;
            }
        }
    }
    if ($res === false) {
        note($counters[$key], strpos($msg, "quoteguard") !== false ? "blocked" : "other", "$msg | " . bin2hex($sql));
        continue;
    }
    [$want, $got] = expected_and_got($tpl, $values, $rows);
    if ($want !== $got) {
        $stored = array_map(fn($v) => server_roundtrip($dialect, $conn, $v), $values);
        [$want, $got] = expected_and_got($tpl, $stored, $rows);
    }
    if ($want !== $got) {
        note($counters[$key], "wrong", bin2hex($sql));
    }
}
foreach ($counters as $key => $c) {
    printf("driver %s sent %d blocked %d wrong %d other %d\n", $key, $c["sent"], $c["blocked"], $c["wrong"], $c["other"]);
}
foreach ($examples as $e) {
    print("#   $e\n");
}
