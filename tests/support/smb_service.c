/* smb_service.c - the tests' stand-in for traced reading a shared memory
 * buffer (smb_service.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/shmem/smb_abi.h"
#include "smb_service.h"

void svc_init(struct svc *s, void *mem, size_t size, uint32_t page_size)
{
	memset(s, 0, sizeof(*s));
	s->mem = mem;
	s->size = size;
	s->page_size = page_size;
}

void svc_free(struct svc *s)
{
	for (size_t i = 0; i < s->n_chunks; i++)
		free(s->chunks[i].data);
	for (size_t i = 0; i < s->n_pkts; i++)
		free(s->pkts[i].data);
	free(s->chunks);
	free(s->pkts);
	memset(s, 0, sizeof(*s));
}

static int svc_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;
	const uint8_t *p = *pp;
	for (unsigned sh = 0; sh < 64 && p < end; sh += 7) {
		uint8_t b = *p++;
		x |= (uint64_t)(b & 0x7f) << sh;
		if (!(b & 0x80)) {
			*v = x;
			*pp = p;
			return 0;
		}
	}
	return -1;
}

/* Bytes of the 'count' fragments from p (at most n), as the service sums
 * them; a drop-size fragment ends the walk. */
static size_t svc_frags_len(const uint8_t *p, size_t n, uint32_t count,
			    struct svc *s)
{
	const uint8_t *q = p, *end = p + n;
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *h = q;
		uint64_t len;
		if (svc_varint(&q, end, &len)) {
			s->abi_errors++;
			return (size_t)(h - p);
		}
		if (len == PTW_SMB_DROP_PACKET_SIZE)
			return (size_t)(q - p);
		if (len > (uint64_t)(end - q)) {
			s->abi_errors++;
			return (size_t)(h - p);
		}
		q += len;
	}
	return (size_t)(q - p);
}

/* Moves chunk 'idx' of 'page' out if it is complete: 1, else 0. */
static int svc_read_chunk(struct svc *s, uint32_t page, uint32_t idx)
{
	uint8_t *pg = s->mem + (size_t)page * s->page_size;
	_Atomic uint32_t *w = ptw_smb_page_word(pg);
	uint32_t v = atomic_load_explicit(w, memory_order_acquire);
	uint32_t layout = ptw_smb_word_layout(v);
	if (idx >= ptw_smb_layout_chunks(layout) ||
	    ptw_smb_word_state(v, idx) != PTW_SMB_COMPLETE)
		return 0;
	/* complete -> being read (2 bits from 11 to 10) */
	uint32_t nv;
	do {
		nv = v & ~((uint32_t)1 << (2 * idx));
	} while (!atomic_compare_exchange_weak_explicit(
		w, &v, nv, memory_order_acq_rel, memory_order_acquire));
	uint32_t size = ptw_smb_layout_chunk_size(s->page_size, layout);
	uint8_t *c = pg + PTW_SMB_PAGE_HDR + (size_t)idx * size;
	uint16_t pk = atomic_load_explicit(ptw_smb_packets_word(c),
					   memory_order_acquire);
	struct svc_chunk k;
	k.chunk_id = atomic_load_explicit(ptw_smb_chunk_id_word(c),
					  memory_order_relaxed);
	k.writer_id = atomic_load_explicit(ptw_smb_writer_id_word(c),
					   memory_order_relaxed);
	k.count = pk & PTW_SMB_COUNT_MASK;
	k.flags = (uint32_t)pk >> PTW_SMB_COUNT_BITS;
	k.len = svc_frags_len(c + PTW_SMB_CHUNK_HDR, size - PTW_SMB_CHUNK_HDR,
			      k.count, s);
	k.data = malloc(k.len ? k.len : 1);
	cr_assert_not_null(k.data);
	memcpy(k.data, c + PTW_SMB_CHUNK_HDR, k.len);
	if (s->n_chunks == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->chunks = realloc(s->chunks, s->cap * sizeof(*s->chunks));
		cr_assert_not_null(s->chunks);
	}
	s->chunks[s->n_chunks++] = k;
	/* Clear the header, then being read -> free; a page left with no
	 * chunk in use is cleared whole (it may be partitioned anew). */
	atomic_store_explicit(ptw_smb_writer_id_word(c), 0,
			      memory_order_relaxed);
	atomic_store_explicit(ptw_smb_chunk_id_word(c), 0,
			      memory_order_relaxed);
	atomic_store_explicit(ptw_smb_packets_word(c), 0,
			      memory_order_release);
	v = atomic_load_explicit(w, memory_order_relaxed);
	do {
		nv = v & ~((uint32_t)3 << (2 * idx));
		if (!(nv & PTW_SMB_ALL_CHUNKS))
			nv = 0;
	} while (!atomic_compare_exchange_weak_explicit(
		w, &v, nv, memory_order_acq_rel, memory_order_relaxed));
	return 1;
}

size_t svc_commit(struct svc *s, const struct ptw_smb_commit *c, size_t n)
{
	size_t read = 0;
	for (size_t i = 0; i < n; i++) {
		if (c[i].page >= s->size / s->page_size) {
			s->abi_errors++;
			continue;
		}
		if (svc_read_chunk(s, c[i].page, c[i].chunk))
			read++;
		else
			s->abi_errors++;
	}
	return read;
}

size_t svc_scan(struct svc *s)
{
	size_t read = 0;
	for (uint32_t p = 0; p < s->size / s->page_size; p++)
		for (uint32_t i = 0; i < 14; i++)
			read += (size_t)svc_read_chunk(s, p, i);
	return read;
}

size_t svc_drain(struct svc *s, struct ptw_smb *smb)
{
	struct ptw_smb_commit c[64];
	size_t n, read = 0;
	while ((n = ptw_smb_take_commits(smb, c, 64)) > 0)
		read += svc_commit(s, c, n);
	return read;
}

/* ---- reassembly --------------------------------------------------------- */

static void svc_emit(struct svc *s, uint32_t writer, const uint8_t *p,
		     size_t n)
{
	if (s->n_pkts == s->pkts_cap) {
		s->pkts_cap = s->pkts_cap ? s->pkts_cap * 2 : 256;
		s->pkts = realloc(s->pkts, s->pkts_cap * sizeof(*s->pkts));
		cr_assert_not_null(s->pkts);
	}
	struct svc_packet *k = &s->pkts[s->n_pkts++];
	k->writer_id = writer;
	k->data = malloc(n ? n : 1);
	cr_assert_not_null(k->data);
	memcpy(k->data, p, n);
	k->len = n;
}

static int svc_cmp_chunk(const void *a, const void *b)
{
	const struct svc_chunk *x = *(const struct svc_chunk *const *)a;
	const struct svc_chunk *y = *(const struct svc_chunk *const *)b;
	if (x->writer_id != y->writer_id)
		return x->writer_id < y->writer_id ? -1 : 1;
	return x->chunk_id < y->chunk_id ? -1 : x->chunk_id > y->chunk_id;
}

void svc_reassemble(struct svc *s)
{
	for (size_t i = 0; i < s->n_pkts; i++)
		free(s->pkts[i].data);
	s->n_pkts = 0;
	const struct svc_chunk **v = calloc(s->n_chunks + 1, sizeof(*v));
	cr_assert_not_null(v);
	for (size_t i = 0; i < s->n_chunks; i++)
		v[i] = &s->chunks[i];
	qsort(v, s->n_chunks, sizeof(*v), svc_cmp_chunk);
	uint8_t *part = NULL; /* a packet begun in an earlier chunk */
	size_t part_len = 0;
	int have_part = 0;
	for (size_t i = 0; i < s->n_chunks; i++) {
		const struct svc_chunk *c = v[i];
		int same = i > 0 && v[i - 1]->writer_id == c->writer_id;
		if (same && c->chunk_id != v[i - 1]->chunk_id + 1)
			s->chunk_gaps++;
		if (!same || c->chunk_id != v[i - 1]->chunk_id + 1)
			have_part = 0;
		const uint8_t *p = c->data, *end = c->data + c->len;
		for (uint32_t f = 0; f < c->count; f++) {
			uint64_t len;
			if (p >= end || svc_varint(&p, end, &len))
				break;
			if (len == PTW_SMB_DROP_PACKET_SIZE) {
				s->writer_drops++;
				have_part = 0;
				break;
			}
			int cont = f == 0 && (c->flags & PTW_SMB_FIRST_CONTINUES);
			int more = f + 1 == c->count &&
				   (c->flags & PTW_SMB_LAST_CONTINUES);
			if (cont && !have_part) {
				s->orphans++;
			} else if (cont || more) {
				if (!cont)
					part_len = 0;
				part = realloc(part, part_len + len + 1);
				cr_assert_not_null(part);
				memcpy(part + part_len, p, len);
				part_len += len;
				if (!more)
					svc_emit(s, c->writer_id, part,
						 part_len);
			} else {
				svc_emit(s, c->writer_id, p, len);
			}
			have_part = more && (!cont || have_part);
			p += len;
		}
	}
	free(part);
	free(v);
}

/* ---- trace file -------------------------------------------------------- */

uint8_t *svc_put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static void svc_record(FILE *f, const uint8_t *a, size_t an, const uint8_t *b,
		       size_t bn)
{
	uint8_t h[16], *q = h;
	*q++ = 0x0a; /* Trace.packet */
	q = svc_put_varint(q, an + bn);
	cr_assert_eq(fwrite(h, 1, (size_t)(q - h), f), (size_t)(q - h));
	cr_assert_eq(fwrite(a, 1, an, f), an);
	if (bn)
		cr_assert_eq(fwrite(b, 1, bn, f), bn);
}

void svc_write_trace(const struct svc *s, const char *path, uint32_t seq_base,
		     int stats)
{
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f, "cannot create %s", path);
	uint32_t max_writer = 0;
	for (size_t i = 0; i < s->n_pkts; i++) {
		uint8_t seq[8], *q = seq;
		*q++ = 10 << 3; /* trusted_packet_sequence_id */
		q = svc_put_varint(q, s->pkts[i].writer_id + seq_base);
		svc_record(f, s->pkts[i].data, s->pkts[i].len, seq,
			   (size_t)(q - seq));
		if (s->pkts[i].writer_id > max_writer)
			max_writer = s->pkts[i].writer_id;
	}
	if (stats) {
		/* TraceStats { buffer_stats {buffer_size}, writer_stats
		 * {sequence_id, buffer 0} per writer } on sequence 1. */
		size_t cap = 64 + 16 * (size_t)max_writer;
		uint8_t *b = malloc(cap), *q = b;
		cr_assert_not_null(b);
		*q++ = 1 << 3 | 2; /* buffer_stats */
		*q++ = 3;
		*q++ = 12 << 3;    /* buffer_size */
		q = svc_put_varint(q, 1u << 20);
		b[1] = (uint8_t)(q - b - 2);
		for (uint32_t w = 1; w <= max_writer; w++) {
			uint8_t ws[16], *r = ws;
			*r++ = 1 << 3; /* sequence_id */
			r = svc_put_varint(r, w + seq_base);
			*r++ = 4 << 3; /* buffer */
			*r++ = 0;
			q = svc_put_varint(q, 18 << 3 | 2); /* writer_stats */
			*q++ = (uint8_t)(r - ws);
			memcpy(q, ws, (size_t)(r - ws));
			q += r - ws;
		}
		uint8_t pk[16], *r = pk;
		*r++ = 10 << 3; /* trusted_packet_sequence_id 1 */
		*r++ = 1;
		r = svc_put_varint(r, 35 << 3 | 2); /* trace_stats */
		r = svc_put_varint(r, (uint64_t)(q - b));
		uint8_t *all = malloc((size_t)(r - pk) + (size_t)(q - b));
		cr_assert_not_null(all);
		memcpy(all, pk, (size_t)(r - pk));
		memcpy(all + (r - pk), b, (size_t)(q - b));
		svc_record(f, all, (size_t)(r - pk) + (size_t)(q - b), NULL, 0);
		free(all);
		free(b);
	}
	cr_assert_eq(fclose(f), 0);
}
