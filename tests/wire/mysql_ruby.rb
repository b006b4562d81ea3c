# A legacy Ruby program on the mysql2 gem (libmariadb, asynchronous
# mysql_send_query + mysql_read_query_result): SET NAMES as a query, then a
# query whose input was escaped byte-wise; then another query on the same
# connection.   ruby mysql_ruby.rb SOCKET CHARSET INPUT_HEX MARKER
require "mysql2"
socket, charset, hex, marker = ARGV
c = Mysql2::Client.new(socket: socket, username: "root", database: "qg", encoding: "utf8mb4")
c.query("SET NAMES #{charset}")
input = [hex].pack("H*").force_encoding("BINARY")
esc = input.gsub("\\") { "\\\\" }.gsub("'") { "\\'" }
sql = "SELECT /*#{marker}*/ secret FROM users WHERE name = '".b + esc + "'".b
begin
  c.query(sql).each { |r| puts "ROW: #{r['secret']}" }
rescue Mysql2::Error => e
  puts "ERROR: #{e.error_number} #{e.message}"
end
begin
  puts "ALIVE: " + c.query("SELECT 'alive' AS a").first["a"]
rescue Mysql2::Error => e
  puts "DEAD: #{e.message}"
end
