// A legacy node-postgres program: standard_conforming_strings off, and an
// escaper of its own that only doubles quotes.
//   node node_pg.js INPUT MARKER   (connection from PGHOST, PGPORT, PGUSER, PGDATABASE)
//   INPUT "-" runs the legitimate page instead.
const { Client } = require("pg");
const [input, marker] = process.argv.slice(2);
(async () => {
  const c = new Client({ host: process.env.PGHOST, port: process.env.PGPORT });
  await c.connect();
  await c.query("SET standard_conforming_strings TO off");
  if (input === "-") {
    const text = "a'b\\c\u8868";
    const r = await c.query("SELECT $1::text AS p, " + c.escapeLiteral(text) + " AS l", [text]);
    console.log("ROW:", r.rows[0].p === text, r.rows[0].l === text);
    await c.end();
    return;
  }
  const sql = "SELECT /*" + marker + "*/ secret FROM users WHERE name = '" + input.replace(/'/g, "''") + "'";
  try {
    const r = await c.query(sql);
    for (const row of r.rows) console.log("ROW:", row.secret);
  } catch (e) {
    console.log("ERROR:", e.code, e.message);
  }
  const r = await c.query("SELECT 'alive' AS a");
  console.log("ALIVE:", r.rows[0].a);
  await c.end();
})();
