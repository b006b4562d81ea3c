<?php
// Profile by name, Shift_JIS (set with SET NAMES), standard_conforming_strings on, E'' literal.
require __DIR__ . '/common.php';
$db = db_connect('UTF8', true);
pg_query($db, "SET NAMES 'SJIS'");
$name = isset($_GET['name']) ? $_GET['name'] : '';
show_rows($db, "SELECT id, name, city FROM users WHERE name = E'" . addslashes($name) . "'", 'Shift_JIS');
