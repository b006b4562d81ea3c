<?php
// The home page: every user, in UTF-8; takes no input.
require __DIR__ . '/common.php';
$db = db_connect('UTF8', true);
show_rows($db, "SELECT id, name, city FROM users ORDER BY id", 'UTF-8');
