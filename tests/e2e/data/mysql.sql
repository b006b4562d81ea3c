-- The Perl MySQL application's data (utf8mb4), loaded through the mariadb client without the shim.
SET NAMES utf8mb4;
CREATE DATABASE shop CHARACTER SET utf8mb4;
USE shop;
CREATE TABLE users (
    id   INT PRIMARY KEY,
    name VARCHAR(64) NOT NULL,
    city VARCHAR(64) NOT NULL
);
INSERT INTO users VALUES
    (1, 'alice',   'Paris'),
    (2, '中文',    '北京'),
    (3, '日本',    '東京'),
    (4, 'o''brien', 'Dublin'),
    (5, 'ソ',      'St. John''s');
CREATE TABLE secrets (
    id     INT PRIMARY KEY,
    owner  VARCHAR(64) NOT NULL,
    secret VARCHAR(64) NOT NULL
);
INSERT INTO secrets VALUES (1, 'admin', 'qg-e2e-flag-5d1c0a');
