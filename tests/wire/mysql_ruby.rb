# A legacy Ruby program on the mysql2 gem (libmariadb, asynchronous
# mysql_send_query + mysql_read_query_result): SET NAMES as a query, then a
# query whose input was escaped byte-wise; then another query on the same
# connection.   ruby mysql_ruby.rb SOCKET CHARSET INPUT_HEX MARKER
# SOCKET tls:PORT: over TLS to 127.0.0.1:PORT, the certificate not verified.
require "mysql2"
socket, charset, hex, marker = ARGV
where = if socket.start_with?("tls:")
          { host: "127.0.0.1", port: socket[4..].to_i, sslcipher: "DEFAULT" } # any TLS option turns TLS on
        else
          { socket: socket }
        end
c = Mysql2::Client.new(username: "root", database: "qg", encoding: "utf8mb4", **where)
if socket.start_with?("tls:")
  puts "TLS: " + c.query("SHOW SESSION STATUS LIKE 'Ssl_version'").first["Value"]
end
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
