// node mysql2 (a non-blocking socket, session tracking asked for) after a
// statement whose effect on sql_mode only the server knows: a SET of it run
// by EXECUTE of a statement prepared from a variable (MariaDB reports no
// sql_mode by default, and the status bits after an EXECUTE are not the
// mode's word).
//   node node_mysql2_probe.js SOCKET attack|legit MARKER
// attack: x' OR 1=1 -- escaped by the program's addslashes, in a SELECT of
// the secrets (under NO_BACKSLASH_ESCAPES the quote ends the literal);
// legit: UTF-8 text with a backslash, written for NO_BACKSLASH_ESCAPES.
// Each answer is printed; then the connection still answers.
const mysql = require("mysql2/promise");
const [socketPath, what, marker] = process.argv.slice(2);
(async () => {
  const c = await mysql.createConnection({ socketPath, user: "root", database: "qg",
                                            charset: "utf8mb4" });
  const run = async (sql, label) => {
    try {
      const [rows] = await c.query(sql);
      console.log(label || "OK:", JSON.stringify(rows.length === undefined ? rows.affectedRows : rows));
    } catch (e) {
      console.log("ERROR:", e.errno, e.message);
    }
  };
  await run("SET @t = 'SET sql_mode = ''NO_BACKSLASH_ESCAPES'''");
  await run("PREPARE s FROM @t");
  await run("EXECUTE s");
  if (what === "attack") {
    const addslashes = (s) => s.replace(/\\/g, "\\\\").replace(/'/g, "\\'");
    await run("SELECT /*" + marker + "*/ secret FROM users WHERE name = '" +
              addslashes("x' OR 1=1 -- ") + "'", "RESULT:");
  } else {
    await run("SELECT /*" + marker + "*/ HEX('caf\u00e9 \\ \u8868') AS h", "RESULT:");
  }
  await run("SELECT 'alive' AS a", "ALIVE:");
  await c.end();
})();
