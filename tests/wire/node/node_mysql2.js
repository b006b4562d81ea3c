// A legacy node mysql2 program: the session switched to NO_BACKSLASH_ESCAPES
// by a query, and input escaped by the program's own addslashes (mysql2's
// escape() follows the server's flags itself).
//   node node_mysql2.js SOCKET INPUT MARKER   (INPUT "-": the legitimate page)
const mysql = require("mysql2/promise");
const [socketPath, input, marker] = process.argv.slice(2);
(async () => {
  const c = await mysql.createConnection({ socketPath, user: "root", database: "qg" });
  await c.query("SET sql_mode = 'NO_BACKSLASH_ESCAPES'");
  if (input === "-") {
    const [rows] = await c.query("SELECT HEX(?) AS p, HEX(" + c.escape("plain text") + ") AS e",
                                 ["a'b\\c\u8868"]);
    console.log("ROW:", rows[0].p, rows[0].e);
    const [prep] = await c.execute("SELECT ? AS v", ["a'b\\c"]);
    console.log("PREPARED:", prep[0].v);
    await c.end();
    return;
  }
  const addslashes = (s) => s.replace(/\\/g, "\\\\").replace(/'/g, "\\'");
  const sql = "SELECT /*" + marker + "*/ secret FROM users WHERE name = '" + addslashes(input) + "'";
  try {
    const [rows] = await c.query(sql);
    for (const row of rows) console.log("ROW:", row.secret);
  } catch (e) {
    console.log("ERROR:", e.errno, e.sqlState, e.message);
  }
  const [rows] = await c.query("SELECT 'alive' AS a");
  console.log("ALIVE:", rows[0].a);
  await c.end();
})();
