// PostgreSQL over node's own TLS (its built-in OpenSSL, whose records node
// writes to the socket itself): SSLRequest, then TLS, the StartupMessage and
// one query; prints the row, or the error that ended the connection.
//   node node_pg_tls.js HOST PORT USER DATABASE MARKER
const net = require("net");
const tls = require("tls");
const [host, port, user, database, marker] = process.argv.slice(2);

function message(type, body) {
  const head = Buffer.alloc(type ? 5 : 4);
  if (type) head.write(type);
  head.writeInt32BE(body.length + 4, type ? 1 : 0);
  return Buffer.concat([head, body]);
}

const raw = net.connect(Number(port), host, () => {
  const request = Buffer.alloc(8);
  request.writeInt32BE(8, 0);
  request.writeInt32BE(80877103, 4);
  raw.write(request);
});
raw.on("error", (e) => console.log("ERROR:", e.code));
raw.once("data", (answer) => {
  if (answer.toString() !== "S") return console.log("ERROR: the server refused TLS");
  const s = tls.connect({ socket: raw, rejectUnauthorized: false }, () => {
    const params = Buffer.from(`user\0${user}\0database\0${database}\0\0`);
    const version = Buffer.alloc(4);
    version.writeInt32BE(196608);
    s.write(message(null, Buffer.concat([version, params])));
    s.write(message("Q", Buffer.from(`SELECT /*${marker}*/ 'node_' || 42\0`)));
  });
  let pending = Buffer.alloc(0);
  s.on("data", (d) => {
    pending = Buffer.concat([pending, d]);
    while (pending.length >= 5 && pending.length >= 1 + pending.readInt32BE(1)) {
      const type = pending.toString("latin1", 0, 1), len = pending.readInt32BE(1);
      if (type === "D") console.log("ROW:", pending.toString("latin1", 11, 1 + len));
      if (type === "E") console.log("SERVER ERROR:", pending.toString("latin1", 5, 1 + len));
      pending = pending.subarray(1 + len);
      if (type === "Z" && s.queried) return s.end();
      if (type === "Z") s.queried = true;
    }
  });
  s.on("error", (e) => {
    console.log("TLS ERROR:", e.code || e.message);
    raw.destroy(); // as drivers do: the connection is given up
  });
});
