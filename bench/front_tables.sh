# The table the mixed corpus of bench/bench_front.c reads and updates
# (qg_bench: 1,000 rows of id and text), in the PostgreSQL and the MariaDB
# server of tests/lib/pg.sh and mariadb.sh; MariaDB's in database "bench".
front_tables_pg() {
    pg_psql -c "CREATE TABLE qg_bench (id int PRIMARY KEY, c text NOT NULL);
                INSERT INTO qg_bench SELECT g, repeat('x', 20) FROM generate_series(1, 1000) g" \
        >/dev/null
}
front_tables_my() {
    my_sql -e "CREATE DATABASE bench; USE bench;
               CREATE TABLE qg_bench (id INT PRIMARY KEY, c VARCHAR(255) NOT NULL) CHARACTER SET utf8mb4;
               INSERT INTO qg_bench SELECT seq, REPEAT('x', 20) FROM seq_1_to_1000"
}
