<?php
// Search by exact name, gbk chosen with SET NAMES, escaped with mysqli's
// real_escape_string (which still escapes for utf8mb4).
require __DIR__ . '/my_common.php';
$db = my_connect('gbk');
$name = isset($_GET['name']) ? $_GET['name'] : '';
my_show_rows($db, "SELECT id, name, city FROM users WHERE name = '" . $db->real_escape_string($name) . "' ORDER BY id", 'GBK');
