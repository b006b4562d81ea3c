/* MySQL's compressed protocol, followed (src/wire/wire_compress.c).
 *
 * Once both sides agreed CLIENT_COMPRESS (zlib) and the login OK came, each
 * direction is a sequence of frames: a 7-byte header — the payload's length
 * (3 bytes, little-endian), a sequence number, the length the payload
 * inflates to (3 bytes; 0: the payload is stored as it is) — then the
 * payload, a zlib stream of its own.  The frames' contents, joined, are the
 * ordinary packet stream: a packet may span frames, a frame may hold
 * several packets.
 *
 * Client to server: frames are held until the packet stream inside them is
 * at rest (nothing of it held: every query in them whole and decided); their
 * packets are read, checked and replaced exactly as uncompressed ones
 * (qg_wire_packets_write).  When nothing was replaced, the held frames go as
 * the client wrote them, byte for byte.  Otherwise as many frames go, with
 * the same sequence numbers, stored, carrying the packet stream as it must
 * reach the server (each at most as long as the frame it stands for
 * inflated, the last taking what is over; empty ones last): the server
 * counts frames to number its answer, and the client checks that number.
 * The bytes that complete a group of frames count as written once the
 * frames are in the kernel, as for a held query (wire_stream.h).
 *
 * Server to client: frames are inflated as their bytes arrive, cut anywhere
 * across reads, and their contents observed as packets; the bytes the
 * client reads are not changed.
 *
 * A payload that does not inflate to what its header says (corrupt, short,
 * long, trailing bytes) ends the tracking (QG_WIRE_UNREAD_INFLATE), as does
 * a group of held frames larger than QG_WIRE_Z_GROUP_MAX or a replacement
 * the frames cannot carry (QG_WIRE_UNREAD_STREAM): the connection is then
 * refused, or passed, as any connection that is not read.
 */
#ifndef QG_WIRE_COMPRESS_H
#define QG_WIRE_COMPRESS_H

#define ZLIB_CONST
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include "wire_stream.h"

/* The zlib functions the wire front calls, as the front loaded them. */
struct qg_wire_zlib {
    int (*inflate_init)(z_stream *zs, const char *version, int stream_size); /* inflateInit_ */
    int (*inflate)(z_stream *zs, int flush);
    int (*inflate_reset)(z_stream *zs);
    int (*inflate_end)(z_stream *zs);
};

#define QG_WIRE_Z_HEADER 7u
/* The most a group of held frames may take: a query held whole
 * (QG_WIRE_HOLD_MAX) in frames no smaller than stored, and a frame more. */
#define QG_WIRE_Z_GROUP_MAX ((size_t)QG_WIRE_HOLD_MAX + (1u << 24) + (size_t)2 * QG_WIRE_Z_HEADER)

/* One direction's inflater, made on first use. */
typedef struct qg_wire_inflater {
    z_stream zs;
    bool ready;
} qg_wire_inflater;

typedef struct qg_wire_z qg_wire_z;
struct qg_wire_z {
    /* client to server */
    qg_wire_buf raw;      /* the group's frames as written, the last perhaps partial */
    size_t frame_at;      /* where that last frame begins in raw */
    qg_wire_buf frames;   /* each whole frame of the group: its number, inflated length (3) */
    qg_wire_buf plain;    /* a frame inflated */
    qg_wire_buf sent;     /* the packet stream's bytes that go on for the group */
    uint64_t plain_total; /* the group's bytes inflated */
    bool changed;         /* a query in the group was replaced */
    qg_wire_buf owed;     /* frames due to the kernel before `covers` more client bytes count */
    size_t owed_done;
    size_t covers;
    qg_wire_inflater out_z;
    /* server to client */
    uint8_t in_hdr[QG_WIRE_Z_HEADER];
    uint8_t in_hdr_len;
    uint32_t in_left;  /* payload bytes of the frame still to come */
    uint32_t in_plain; /* what it inflates to (0: stored) */
    uint32_t in_out;   /* what it inflated to so far */
    bool in_ended;     /* its zlib stream ended */
    uint8_t *in_chunk;
    qg_wire_inflater in_z;
};

/* Client bytes held in compressed frames, or frames owed to the kernel. */
bool qg_wire_z_holds(const qg_wire_conn *c);

#endif
