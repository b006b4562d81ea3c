"""What the raw MySQL clients of tests/wire share of the protocol."""


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
