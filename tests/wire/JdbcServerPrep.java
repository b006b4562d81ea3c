// A legacy JDBC program on MariaDB Connector/J with server-side prepared
// statements (useServerPrepStmts=true: COM_STMT_PREPARE / COM_STMT_EXECUTE):
// sql_mode changed by a prepared statement whose new value only the server
// knows, then a statement prepared from text whose input was escaped by
// addslashes (attack: ' OR 1=1 --), or by doubling quotes, as
// NO_BACKSLASH_ESCAPES wants (legit: a'b\c); then the connection again.
// Run as a source file: java -cp DRIVER.jar JdbcServerPrep.java URL attack|legit MARKER
import java.sql.*;

public class JdbcServerPrep {
    public static void main(String[] a) throws Exception {
        String url = a[0], what = a[1], marker = a[2];
        try (Connection c = DriverManager.getConnection(url, "root", "")) {
            c.prepareStatement("SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')")
                    .execute();
            String sql = what.equals("attack")
                    ? "SELECT /*" + marker + "*/ secret FROM users WHERE name = '"
                            + "' OR 1=1 -- ".replace("\\", "\\\\").replace("'", "\\'") + "'"
                    : "SELECT /*" + marker + "*/ 'a''b\\c'";
            try (ResultSet r = c.prepareStatement(sql).executeQuery()) {
                while (r.next()) System.out.println("ROW: " + r.getString(1));
            } catch (SQLException e) {
                System.out.println("ERROR: " + e.getSQLState() + " " + e.getMessage().replace('\n', ' '));
            }
            ResultSet r = c.prepareStatement("SELECT 'alive'").executeQuery();
            r.next();
            System.out.println("ALIVE: " + r.getString(1));
        }
    }
}
