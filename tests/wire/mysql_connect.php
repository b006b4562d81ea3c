<?php
// The test pages' connections: to the unix socket SOCKET, or with
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

function qg_pdo_connect(string $socket, string $charset): PDO
{
    if (strncmp($socket, 'tls:', 4) !== 0)
        return new PDO("mysql:unix_socket=$socket;dbname=qg;charset=$charset", 'root', '');
    // PDO_mysql turns TLS on when a TLS attribute is given
    $db = new PDO('mysql:host=127.0.0.1;port=' . substr($socket, 4) . ";dbname=qg;charset=$charset",
                  'root', '', [PDO::MYSQL_ATTR_SSL_CIPHER => 'DEFAULT',
                               PDO::MYSQL_ATTR_SSL_VERIFY_SERVER_CERT => false]);
    echo "TLS: ", $db->query("SHOW SESSION STATUS LIKE 'Ssl_version'")->fetch(PDO::FETCH_NUM)[1], "\n";
    return $db;
}
