-- The application's data, loaded as UTF-8 before each scenario (never through the shim).
-- Every name and city is representable in GBK and in SJIS, so every page can show every row.
CREATE TABLE users (
    id   integer PRIMARY KEY,
    name text NOT NULL,
    city text NOT NULL
);
INSERT INTO users VALUES
    (1, 'alice',   'Paris'),
    (2, '中文',    '北京'),
    (3, '日本',    '東京'),
    (4, 'o''brien', 'Dublin'),
    (5, 'bob',     'C:\temp');

-- What an attacker is after: no page ever shows this table.
CREATE TABLE secrets (
    id     integer PRIMARY KEY,
    owner  text NOT NULL,
    secret text NOT NULL
);
INSERT INTO secrets VALUES (1, 'admin', 'qg-e2e-flag-5d1c0a');
