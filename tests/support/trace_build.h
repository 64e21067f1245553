/* trace_build.h - hand-built trace bytes for tests, valid or not.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Encodes TracePackets field by field with the library's encoder
 * (pb.h), so a test can produce exactly the bytes it wants to feed the
 * reader, including rule violations the writer never produces. Field
 * numbers are Perfetto's (see proto/ptw_trace.proto). Allocation failure
 * fails the Criterion test.
 *
 *     struct ptw_tb b;
 *     ptw_tb_init(&b);
 *     ptw_tb_begin(&b);                   // a TracePacket
 *     ptw_tb_varint(&b, 10, 2);           //   trusted_packet_sequence_id
 *     ptw_tb_varint(&b, 13, 1);           //   sequence_flags = CLEARED
 *     ptw_tb_open(&b, 11);                //   track_event {
 *     ptw_tb_varint(&b, 9, 3);            //     type = INSTANT
 *     ptw_tb_close(&b);                   //   }
 *     uint64_t off = ptw_tb_end(&b);      // record offset in b.out
 *     ... ptw_trace_load_mem(b.out.data, b.out.len, ...) ...
 *     ptw_tb_free(&b); */
#ifndef PTW_TRACE_BUILD_H
#define PTW_TRACE_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "lib/encode/pb.h"

#define PTW_TB_MAX_DEPTH 16

struct ptw_tb {
	struct ptw_pb_buf out;  /* the file so far */
	struct ptw_pb_buf pkt;  /* the packet being built */
	size_t marks[PTW_TB_MAX_DEPTH];
	int depth;
};

void ptw_tb_init(struct ptw_tb *b);
void ptw_tb_free(struct ptw_tb *b);

/* Starts a packet. */
void ptw_tb_begin(struct ptw_tb *b);
/* Appends the packet as a Trace.packet record (0x0A, length, bytes) and
 * returns the offset of the record in b->out. */
uint64_t ptw_tb_end(struct ptw_tb *b);
/* The packet's bytes without the record header (to compress them, or to
 * wrap them by hand); resets the packet. */
void ptw_tb_take(struct ptw_tb *b, struct ptw_pb_buf *into);

void ptw_tb_varint(struct ptw_tb *b, uint32_t field, uint64_t v);
void ptw_tb_int64(struct ptw_tb *b, uint32_t field, int64_t v);
void ptw_tb_fixed64(struct ptw_tb *b, uint32_t field, uint64_t v);
void ptw_tb_double(struct ptw_tb *b, uint32_t field, double v);
void ptw_tb_string(struct ptw_tb *b, uint32_t field, const char *s);
void ptw_tb_bytes(struct ptw_tb *b, uint32_t field, const void *p, size_t n);
/* Nested message: open writes the tag, close its length. */
void ptw_tb_open(struct ptw_tb *b, uint32_t field);
void ptw_tb_close(struct ptw_tb *b);

/* Common fragments. */
void ptw_tb_seq(struct ptw_tb *b, uint32_t seq, uint32_t flags);
/* Starts a packet on 'seq' with SEQ_NEEDS_INCREMENTAL_STATE and timestamp
 * 'ts' (a delta when the sequence's default clock is incremental). */
void ptw_tb_begin_on(struct ptw_tb *b, uint32_t seq, uint64_t ts);
/* Writes a whole packet that starts 'seq': CLEARED, defaults (clock,
 * track) and a snapshot (ptw_tb_clock64) at 'snapshot_ts'. */
void ptw_tb_start_seq(struct ptw_tb *b, uint32_t seq, uint32_t clock,
		      uint64_t track, uint64_t snapshot_ts);
/* interned_data { <table> { iid, name } } for table 1 (categories),
 * 2 (event names) or 3 (debug annotation names) */
void ptw_tb_interned(struct ptw_tb *b, uint32_t table, uint64_t iid,
		     const char *name);
/* track_descriptor variants */
void ptw_tb_process_track(struct ptw_tb *b, uint64_t uuid, int32_t pid,
			  const char *name);
void ptw_tb_thread_track(struct ptw_tb *b, uint64_t uuid, int32_t pid,
			 int64_t tid, const char *name);
void ptw_tb_counter_track(struct ptw_tb *b, uint64_t uuid, uint64_t parent,
			  const char *name);
/* clock_snapshot { BOOTTIME=ts, 64=ts incremental } primary BOOTTIME */
void ptw_tb_clock64(struct ptw_tb *b, uint64_t ts);
/* trace_packet_defaults { timestamp_clock_id=clock, track_uuid=track } */
void ptw_tb_defaults(struct ptw_tb *b, uint32_t clock, uint64_t track);

/* Compresses 'raw' (concatenated records) with zlib (gzip != 0: gzip
 * framing; level 6) into a compressed_packets record appended to b->out;
 * returns its offset. */
uint64_t ptw_tb_compressed(struct ptw_tb *b, const void *raw, size_t n,
			   int gzip);

#endif /* PTW_TRACE_BUILD_H */
