// node-postgres on its non-blocking socket with 8 MiB queries: far more than
// a unix socket's buffer, so libuv's writes come back short or with EAGAIN.
// The clean one must reach the server whole; the attack at its end must not.
//   node node_pg_big.js   (connection from PGHOST, PGPORT, PGUSER, PGDATABASE)
const { Client } = require("pg");
(async () => {
  const c = new Client({ host: process.env.PGHOST, port: process.env.PGPORT });
  await c.connect();
  await c.query("SET standard_conforming_strings TO off");
  const big = "x".repeat(8 << 20);
  const r = await c.query("SELECT length('" + big + "') AS n, md5('" + big + "') AS m");
  console.log("BIG:", r.rows[0].n, r.rows[0].m);
  try {
    await c.query("SELECT length('" + big + "\\'') AS n, '' OR 1=1 -- '");
    console.log("ATTACK: sent");
  } catch (e) {
    console.log("ATTACK:", e.message.slice(0, 50));
  }
  const a = await c.query("SELECT 'alive' AS a");
  console.log("ALIVE:", a.rows[0].a);
  await c.end();
})();
