# TLS for the throwaway servers (sourced by pg.sh and mariadb.sh).
#
#   qg_tls_cert DIR OWNER   writes DIR/server.crt and DIR/server.key, a
#                           self-signed certificate for localhost that the
#                           server user OWNER can read (clients do not verify)
#   qg_free_tcp_port        prints a TCP port on 127.0.0.1 that is free now

qg_tls_cert() {
    local dir=$1 owner=$2
    command -v openssl >/dev/null || { echo "tls.sh: no openssl command" >&2; return 1; }
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -subj /CN=localhost -keyout "$dir/server.key" -out "$dir/server.crt" \
        >"$dir/openssl.log" 2>&1 || { cat "$dir/openssl.log" >&2; return 1; }
    chmod 600 "$dir/server.key"
    chown "$owner" "$dir/server.key" "$dir/server.crt"
}

qg_free_tcp_port() {
    python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}
