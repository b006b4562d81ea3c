<?php
// Search by city prefix, GBK, standard_conforming_strings on: addslashes()
// output goes into an E'' literal, where backslashes still escape.
require __DIR__ . '/common.php';
$db = db_connect('GBK', true);
$city = isset($_GET['city']) ? $_GET['city'] : '';
show_rows($db, "SELECT id, name, city FROM users WHERE city LIKE E'" . addslashes($city) . "%' ORDER BY id", 'GBK');
