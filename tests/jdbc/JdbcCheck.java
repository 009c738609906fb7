/*
 * The Flight SQL JDBC driver (org.apache.arrow:flight-sql-jdbc-driver) as a
 * real peer of `knut serve`: the DatabaseMetaData calls DBeaver and Tableau
 * make when they open a connection, a query, and a PreparedStatement with
 * INTEGER, DECIMAL and TIMESTAMP parameters. Prints one line per fact in a
 * fixed order; tests/integration/test_serve_jdbc.py compares the lines with
 * what the server says through pyarrow. Run with the driver on the class
 * path: java -cp DRIVER.jar JdbcCheck.java URL
 */
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.List;
import java.util.TimeZone;

public class JdbcCheck {
    static String s(Object o) {
        return o == null ? "null" : o.toString();
    }

    /* Every row of a metadata result set, the named columns joined by '|'. */
    static void rows(String what, ResultSet rs, String... cols) throws SQLException {
        List<String> out = new ArrayList<>();
        while (rs.next()) {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < cols.length; i++) {
                if (i > 0)
                    b.append('|');
                b.append(s(rs.getObject(cols[i])));
            }
            out.add(b.toString());
        }
        rs.close();
        System.out.println(what + " " + out.size());
        for (String r : out)
            System.out.println("  " + r);
    }

    static void result(String what, ResultSet rs) throws SQLException {
        ResultSetMetaData md = rs.getMetaData();
        StringBuilder h = new StringBuilder();
        for (int i = 1; i <= md.getColumnCount(); i++)
            h.append(i > 1 ? "|" : "").append(md.getColumnName(i)).append(':')
                .append(md.getColumnTypeName(i)).append(':')
                .append(md.getCatalogName(i)).append('.').append(md.getSchemaName(i))
                .append('.').append(md.getTableName(i));
        System.out.println(what + " columns " + h);
        int n = 0;
        List<String> out = new ArrayList<>();
        while (rs.next()) {
            StringBuilder b = new StringBuilder();
            for (int i = 1; i <= md.getColumnCount(); i++)
                b.append(i > 1 ? "|" : "").append(s(rs.getObject(i)));
            out.add(b.toString());
            n++;
        }
        rs.close();
        System.out.println(what + " rows " + n);
        for (String r : out)
            System.out.println("  " + r);
    }

    public static void main(String[] args) throws Exception {
        /* Timestamps without a zone come back as local wall clocks: fix the
         * zone so the printed values do not depend on the machine. */
        TimeZone.setDefault(TimeZone.getTimeZone("UTC"));
        try (Connection c = DriverManager.getConnection(args[0])) {
            DatabaseMetaData md = c.getMetaData();
            System.out.println("product " + md.getDatabaseProductName() + " "
                               + md.getDatabaseProductVersion());
            System.out.println("quote " + md.getIdentifierQuoteString());
            System.out.println("readonly " + md.isReadOnly());
            String kw = md.getSQLKeywords();
            System.out.println("keywords " + (kw == null ? "null" : kw.split(",").length));
            System.out.println("keywords-pragma " + (kw != null && kw.toLowerCase().contains("pragma")));
            rows("catalogs", md.getCatalogs(), "TABLE_CAT");
            rows("schemas", md.getSchemas(), "TABLE_CATALOG", "TABLE_SCHEM");
            rows("tabletypes", md.getTableTypes(), "TABLE_TYPE");
            rows("tables", md.getTables(null, "main", "%", null), "TABLE_CAT", "TABLE_SCHEM",
                 "TABLE_NAME", "TABLE_TYPE");
            rows("columns", md.getColumns(null, "main", "people", "%"), "COLUMN_NAME",
                 "DATA_TYPE", "TYPE_NAME", "COLUMN_SIZE", "DECIMAL_DIGITS", "NULLABLE",
                 "ORDINAL_POSITION");
            rows("primarykeys", md.getPrimaryKeys(null, "main", "people"), "TABLE_NAME",
                 "COLUMN_NAME", "KEY_SEQ");
            rows("importedkeys", md.getImportedKeys(null, "main", "people"), "FKTABLE_NAME");
            rows("typeinfo", md.getTypeInfo(), "TYPE_NAME", "DATA_TYPE");

            try (Statement st = c.createStatement()) {
                result("query", st.executeQuery(
                           "SELECT id, name, paid, seen FROM people ORDER BY id"));
            }
            try (PreparedStatement ps = c.prepareStatement(
                     "SELECT id, name, paid, seen FROM people "
                     + "WHERE id >= ? AND paid > ? AND seen < ? ORDER BY id")) {
                ps.setInt(1, 1);
                ps.setBigDecimal(2, new BigDecimal("-10.50"));
                ps.setTimestamp(3, Timestamp.valueOf("2026-06-01 00:00:00"));
                result("prepared", ps.executeQuery());
                ps.setInt(1, 2);
                ps.setBigDecimal(2, new BigDecimal("-10.50"));
                ps.setTimestamp(3, Timestamp.valueOf("2027-01-01 00:00:00"));
                result("prepared2", ps.executeQuery());
            }
            try (Statement st = c.createStatement()) {
                st.executeQuery("SELECT * FROM no_such_table");
                System.out.println("error none");
            } catch (SQLException e) {
                System.out.println("error " + (e.getMessage().contains("no_such_table")));
            }
        }
    }
}
