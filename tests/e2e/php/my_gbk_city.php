<?php
// Users by city, gbk chosen with SET NAMES, escaped with addslashes.
require __DIR__ . '/my_common.php';
$db = my_connect('gbk');
$city = isset($_GET['city']) ? $_GET['city'] : '';
my_show_rows($db, "SELECT id, name, city FROM users WHERE city = '" . addslashes($city) . "' ORDER BY id", 'GBK');
