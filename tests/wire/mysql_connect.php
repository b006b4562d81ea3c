<?php
// The test pages' mysqli connection: to the unix socket SOCKET, or with
// "tls:PORT" over TLS to 127.0.0.1:PORT (the test server's self-signed
// certificate is not verified), saying which TLS version the server sees.
function qg_mysqli_connect(string $socket): mysqli
{
    if (strncmp($socket, 'tls:', 4) !== 0)
        return new mysqli('localhost', 'root', '', 'qg', 0, $socket);
    $db = mysqli_init();
    $db->real_connect('127.0.0.1', 'root', '', 'qg', (int)substr($socket, 4), null,
                      MYSQLI_CLIENT_SSL | MYSQLI_CLIENT_SSL_DONT_VERIFY_SERVER_CERT);
    echo "TLS: ", $db->query("SHOW SESSION STATUS LIKE 'Ssl_version'")->fetch_row()[1], "\n";
    return $db;
}
