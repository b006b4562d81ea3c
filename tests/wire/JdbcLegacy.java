// A legacy JDBC program: a session setting by query, then input pasted into
// a Statement after an escaper of its own; then another query on the same
// connection.  Run as a source file: java -cp DRIVER.jar JdbcLegacy.java …
//   JdbcLegacy URL USER SETUP_SQL ESCAPER INPUT MARKER
//   ESCAPER: double (quotes doubled) | addslashes; INPUT "-": the legitimate page
// With useCompression=true in URL it first says whether the session is compressed.
import java.sql.*;

public class JdbcLegacy {
    public static void main(String[] a) throws Exception {
        String url = a[0], user = a[1], setup = a[2], escaper = a[3], input = a[4], marker = a[5];
        try (Connection c = DriverManager.getConnection(url, user, "")) {
            if (url.contains("useCompression=true")) {
                ResultSet z = c.createStatement().executeQuery("SHOW SESSION STATUS LIKE 'Compression'");
                z.next();
                System.out.println("COMPRESSION: " + z.getString(2));
            }
            c.createStatement().execute(setup);
            if (input.equals("-")) {
                PreparedStatement p = c.prepareStatement("SELECT ? || '', 1");
                if (url.startsWith("jdbc:mariadb")) p = c.prepareStatement("SELECT CONCAT(?, ''), 1");
                p.setString(1, "a'b\\c\u8868");
                ResultSet r = p.executeQuery();
                r.next();
                System.out.println("ROW: " + r.getString(1).equals("a'b\\c\u8868"));
                return;
            }
            String esc = escaper.equals("double") ? input.replace("'", "''")
                    : input.replace("\\", "\\\\").replace("'", "\\'");
            String sql = "SELECT /*" + marker + "*/ secret FROM users WHERE name = '" + esc + "'";
            try (ResultSet r = c.createStatement().executeQuery(sql)) {
                while (r.next()) System.out.println("ROW: " + r.getString(1));
            } catch (SQLException e) {
                System.out.println("ERROR: " + e.getSQLState() + " " + e.getMessage().replace('\n', ' '));
            }
            ResultSet r = c.createStatement().executeQuery("SELECT 'alive'");
            r.next();
            System.out.println("ALIVE: " + r.getString(1));
        }
    }
}
