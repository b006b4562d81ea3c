// A JDBC program on MariaDB Connector/J, which asks for session tracking:
// it calls a procedure that runs SET NAMES gbk and a SELECT (the SELECT's
// end reports gbk from inside the procedure; the server gives the caller
// utf8mb4 back when it returns, unreported), then sends UTF-8 text: a
// character whose last byte is 0xbf, an escaped quote; the server's HEX of
// it is printed.  Then the connection again.
// Run as a source file: java -cp DRIVER.jar JdbcRoutine.java URL MARKER
import java.sql.*;

public class JdbcRoutine {
    public static void main(String[] a) throws Exception {
        String url = a[0], marker = a[1];
        try (Connection c = DriverManager.getConnection(url, "root", "")) {
            Statement s = c.createStatement();
            s.execute("CALL p_gbk()");
            while (s.getMoreResults() || s.getUpdateCount() != -1) {
            }
            try (ResultSet r = s.executeQuery("SELECT /*" + marker + "*/ HEX('\u4e3f\\'x')")) {
                while (r.next()) System.out.println("ROW: " + r.getString(1));
            } catch (SQLException e) {
                System.out.println("ERROR: " + e.getSQLState() + " " + e.getMessage().replace('\n', ' '));
            }
            ResultSet r = s.executeQuery("SELECT 'alive'");
            r.next();
            System.out.println("ALIVE: " + r.getString(1));
        }
    }
}
