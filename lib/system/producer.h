/* producer.h - the producer side of Perfetto's ProducerPort service
 * (google/perfetto protos/perfetto/ipc/producer_port.proto) over one IPC
 * connection (ipc.h): bind "ProducerPort", InitializeConnection,
 * RegisterDataSource("track_event") with its TrackEventDescriptor, the
 * GetAsyncCommand stream, and the calls ptw answers it with. Private to
 * lib/system; one thread uses a producer.
 * SPDX-License-Identifier: Apache-2.0
 *
 * The service's commands reach the owner through struct ptw_sys_ops,
 * called from ptw_sys_prod_dispatch. Anything malformed or unexpected in
 * what the service sends (a frame that does not parse, a reply to no
 * request, a refused bind, an fd where none belongs) counts in
 * 'protocol_errors' and fails the connection: the owner closes it and
 * connects again later; nothing from the socket is trusted further than
 * the bounds of the frame it came in. */
#ifndef PTW_SYS_PRODUCER_H
#define PTW_SYS_PRODUCER_H

#include <stddef.h>
#include <stdint.h>

#include "ipc.h"

/* The data source ptw registers (what a TraceConfig names). */
#define PTW_SYS_DS_NAME "track_event"

/* A string list of a TrackEventConfig, pointing into the bytes it was
 * parsed from (ptw_sys_te_parse). */
struct ptw_sys_strs {
	const char *s[64];
	uint16_t len[64];
	uint32_t n;            /* entries kept (more are refused) */
};

/* TrackEventConfig (protos/perfetto/config/track_event/
 * track_event_config.proto) as far as ptw uses it. */
struct ptw_sys_te_cfg {
	struct ptw_sys_strs dis_cat, en_cat, dis_tag, en_tag;
};

/* A data source instance's config (DataSourceConfig). */
struct ptw_sys_ds {
	uint64_t id;             /* new_instance_id */
	uint32_t target_buffer;
	uint64_t session_id;     /* tracing_session_id */
	const uint8_t *te_raw;   /* TrackEventConfig bytes (valid during
				  * the callback only: copy them) */
	size_t te_len;
};

struct ptw_sys_ops {
	/* The connection is initialized: the owner registers its data
	 * source now (ptw_sys_prod_register). */
	void (*ready)(void *ctx);
	/* SetupTracing: the service's shared memory buffer (the owner takes
	 * 'fd'), its page size in bytes. Returns 0, or non-zero to refuse
	 * it (the connection then fails). */
	int (*setup_smb)(void *ctx, int fd, uint32_t page_size);
	/* StartDataSource of an instance of ptw's data source. */
	void (*start)(void *ctx, const struct ptw_sys_ds *ds);
	/* StopDataSource: the owner answers with ptw_sys_prod_stopped. */
	void (*stop)(void *ctx, uint64_t id);
	/* Flush of 'ids' (of any producer's data sources): the owner
	 * answers with a CommitData carrying 'request_id'. */
	void (*flush)(void *ctx, uint64_t request_id, const uint64_t *ids,
		      size_t n);
	/* ClearIncrementalState for 'ids'. */
	void (*clear)(void *ctx, const uint64_t *ids, size_t n);
};

enum ptw_sys_prod_state {
	PTW_SYS_P_CLOSED = 0,
	PTW_SYS_P_BINDING,     /* BindService sent */
	PTW_SYS_P_INIT,        /* InitializeConnection sent */
	PTW_SYS_P_READY,       /* registered; commands flow */
};

enum ptw_sys_method {
	PTW_SYS_M_INIT = 0,
	PTW_SYS_M_REGISTER,
	PTW_SYS_M_UPDATE,
	PTW_SYS_M_COMMIT,
	PTW_SYS_M_ASYNC,
	PTW_SYS_M_STARTED,
	PTW_SYS_M_STOPPED,
	PTW_SYS_M_REG_WRITER,
	PTW_SYS_M_UNREG_WRITER,
	PTW_SYS_M_COUNT
};

struct ptw_sys_prod {
	struct ptw_sys_ipc ipc;
	int state;               /* enum ptw_sys_prod_state */
	uint64_t next_req;
	uint64_t bind_req, init_req, async_req;
	uint32_t service_id;
	uint32_t method[PTW_SYS_M_COUNT]; /* 0: the service lacks it */
	int pending_fd;          /* fd received, not yet claimed */
	uint64_t protocol_errors;
	const char *why;         /* what the last protocol error was */
	const struct ptw_sys_ops *ops;
	void *ctx;
	struct ptw_pb_buf msg;   /* a request being built */
	uint32_t smb_size_hint, smb_page_hint;
	char name[128];          /* producer_name */
};

int ptw_sys_prod_init(struct ptw_sys_prod *p, const struct ptw_sys_ops *ops,
		      void *ctx, const char *producer_name);
void ptw_sys_prod_free(struct ptw_sys_prod *p);

/* Connects to 'path' and sends BindService. 0 or an errno (no service). */
int ptw_sys_prod_connect(struct ptw_sys_prod *p, const char *path);
void ptw_sys_prod_close(struct ptw_sys_prod *p);

/* Handles every complete frame received (after ptw_sys_ipc_io): may call
 * the ops. 0, or -1 when the connection failed (close and retry). */
int ptw_sys_prod_dispatch(struct ptw_sys_prod *p);

/* The categories ptw registers: 'n' of them, names[i] with descs[i] and
 * tags[i] (a comma-separated list; either may be NULL). Sent as
 * RegisterDataSource once ready, as UpdateDataSource after. Returns 0 or
 * -1 (the connection failed). */
struct ptw_sys_cat_decl {
	const char *name, *desc, *tags;
};
int ptw_sys_prod_register(struct ptw_sys_prod *p, int update,
			  const struct ptw_sys_cat_decl *cats, size_t n);

/* CommitData: chunks (page, chunk, target_buffer) triples, and
 * 'flush_id' when answering a flush (0: none). 0 or -1. */
struct ptw_sys_chunk_ref {
	uint32_t page, chunk, target_buffer;
};
int ptw_sys_prod_commit(struct ptw_sys_prod *p,
			const struct ptw_sys_chunk_ref *chunks, size_t n,
			uint64_t flush_id);
/* RegisterTraceWriter (added) or UnregisterTraceWriter. 0 or -1. */
int ptw_sys_prod_trace_writer(struct ptw_sys_prod *p, uint32_t writer_id,
			      uint32_t target_buffer, int added);
int ptw_sys_prod_started(struct ptw_sys_prod *p, uint64_t id);
int ptw_sys_prod_stopped(struct ptw_sys_prod *p, uint64_t id);

/* Parses TrackEventConfig bytes into *c (pointing into them). 0, or -1
 * if malformed. */
int ptw_sys_te_parse(const uint8_t *raw, size_t len, struct ptw_sys_te_cfg *c);

/* Does the TrackEventConfig enable 'cat' (len bytes, one category, not a
 * group), whose declared tags are 'tags' (comma-separated, or NULL)? As
 * the Perfetto SDK decides (catcfg.c). */
int ptw_sys_te_enabled(const struct ptw_sys_te_cfg *c, const char *cat,
		       size_t len, const char *tags);

#endif /* PTW_SYS_PRODUCER_H */
