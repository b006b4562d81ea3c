"""What the raw MySQL clients of tests/wire share of the protocol."""
import struct


def lenenc(body, offset):
    """The length-encoded integer at body[offset]: (value, offset after it);
    value None for 0xfb (NULL in a row)."""
    first = body[offset]
    if first < 0xfb:
        return first, offset + 1
    if first == 0xfb:
        return None, offset + 1
    size = {0xfc: 2, 0xfd: 3, 0xfe: 8}[first]
    return int.from_bytes(body[offset + 1:offset + 1 + size], "little"), offset + 1 + size


def packet_io(sock):
    """recv_exact(n), packet() -> (seq, payload) and send(seq, payload) on
    sock: the packets of a raw client."""
    def recv_exact(n):
        out = b""
        while len(out) < n:
            chunk = sock.recv(n - len(out))
            if not chunk:
                raise SystemExit("EOF from the server")
            out += chunk
        return out

    def packet():
        header = recv_exact(4)
        length = header[0] | header[1] << 8 | header[2] << 16
        return header[3], recv_exact(length)

    def send(seq, payload):
        sock.sendall(struct.pack("<I", len(payload))[:3] + bytes([seq]) + payload)

    return recv_exact, packet, send
