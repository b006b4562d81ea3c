<?php
// A PHP mysqli point select, the way a page runs it: the id pasted into the
// text (real_escape_string) and sent with $db->query, the row fetched.
//   php bench_mysqli.php SOCKET QUERIES [WARMUP]
// SOCKET "tls:PORT": over TLS to 127.0.0.1:PORT instead (the server's
// certificate not verified); "z:PATH": the unix socket PATH, compressed
// (MYSQLI_CLIENT_COMPRESS).
// Prints "mysqli_point_select WALL_NS CPU_NS" a query: the loop's wall time
// and PHP's own CPU time (user + system) over it, after WARMUP (500)
// warm-up queries (the connection is made before).
[$_, $socket, $queries] = $argv;
$warmup = (int)($argv[3] ?? 500);
mysqli_report(MYSQLI_REPORT_OFF);
if (strncmp($socket, 'tls:', 4) === 0) {
    $db = mysqli_init();
    $db->real_connect('127.0.0.1', 'root', '', 'bench', (int)substr($socket, 4), null,
                      MYSQLI_CLIENT_SSL | MYSQLI_CLIENT_SSL_DONT_VERIFY_SERVER_CERT);
} elseif (strncmp($socket, 'z:', 2) === 0) {
    $db = mysqli_init();
    $db->real_connect('localhost', 'root', '', 'bench', 0, substr($socket, 2), MYSQLI_CLIENT_COMPRESS);
} else {
    $db = new mysqli('localhost', 'root', '', 'bench', 0, $socket);
}
if ($db->connect_errno) {
    fwrite(STDERR, "bench_mysqli: cannot connect: $db->connect_error\n");
    exit(1);
}
$run = function ($n) use ($db) {
    for ($i = 0; $i < $n; $i++) {
        $id = (string)(1 + ($i * 7919) % 10000);
        $res = $db->query("SELECT c FROM sbtest WHERE id = '" . $db->real_escape_string($id) . "'");
        if ($res === false || $res->fetch_row() === null) {
            fwrite(STDERR, "bench_mysqli: $db->error\n");
            exit(1);
        }
        $res->free();
    }
};
$cpu = function () {
    $u = getrusage();
    return ($u['ru_utime.tv_sec'] + $u['ru_stime.tv_sec']) * 1e9 + ($u['ru_utime.tv_usec'] + $u['ru_stime.tv_usec']) * 1e3;
};
$run($warmup);
$t = hrtime(true);
$c = $cpu();
$run((int)$queries);
printf("mysqli_point_select %.0f %.0f\n", (hrtime(true) - $t) / $queries, ($cpu() - $c) / $queries);
