<?php
// Search by exact name, GBK, standard_conforming_strings off: the 2006 pattern.
require __DIR__ . '/common.php';
$db = db_connect('GBK', false);
$name = isset($_GET['name']) ? $_GET['name'] : '';
show_rows($db, "SELECT id, name, city FROM users WHERE name = '" . addslashes($name) . "' ORDER BY id", 'GBK');
