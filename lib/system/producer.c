/* producer.c - ProducerPort requests and the service's replies and
 * commands (producer.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include "producer.h"

#include "pbr.h"
#include "ptw/error.h"
#include "ptw/version.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The method names of ProducerPort, by enum ptw_sys_method. */
static const char *const ptw_sys_method_names[PTW_SYS_M_COUNT] = {
	"InitializeConnection", "RegisterDataSource", "UpdateDataSource",
	"CommitData",           "GetAsyncCommand",    "NotifyDataSourceStarted",
	"NotifyDataSourceStopped", "RegisterTraceWriter",
	"UnregisterTraceWriter",
};

/* Message fields (producer_port.proto, data_source_descriptor.proto,
 * track_event_descriptor.proto, data_source_config.proto,
 * commit_data_request.proto). */
enum {
	F_BIND_NAME = 1,
	F_BREPLY_SUCCESS = 1, F_BREPLY_SERVICE = 2, F_BREPLY_METHODS = 3,
	F_METHOD_ID = 1, F_METHOD_NAME = 2,
	F_INV_SERVICE = 1, F_INV_METHOD = 2, F_INV_ARGS = 3, F_INV_DROP = 4,
	F_IREPLY_SUCCESS = 1, F_IREPLY_MORE = 2, F_IREPLY_PROTO = 3,
	F_INIT_PAGE_HINT = 1, F_INIT_SIZE_HINT = 2, F_INIT_NAME = 3,
	F_INIT_SDK_VERSION = 8,
	F_DSD_NAME = 1, F_DSD_NOTIFY_STOP = 2, F_DSD_NOTIFY_START = 3,
	F_DSD_CLEAR_INCR = 4, F_DSD_TE = 6, F_DSD_ID = 7,
	F_TED_CATS = 1, F_TEC_NAME = 1, F_TEC_DESC = 2, F_TEC_TAGS = 3,
	F_CMD_START = 1, F_CMD_STOP = 2, F_CMD_SETUP_TRACING = 3,
	F_CMD_FLUSH = 5, F_CMD_SETUP_DS = 6, F_CMD_CLEAR = 7,
	F_DSC_NAME = 1, F_DSC_TARGET = 2, F_DSC_SESSION = 4, F_DSC_TE = 113,
	F_COMMIT_CHUNKS = 1, F_COMMIT_FLUSH = 3,
	F_CTM_PAGE = 1, F_CTM_CHUNK = 2, F_CTM_TARGET = 3,
};

/* The id ptw's one data source is registered with (UpdateDataSource
 * names it). */
#define PTW_SYS_DS_ID 1

/* Data source ids in one Flush or ClearIncrementalState (more are
 * refused as malformed: the service sends one per instance). */
#define PTW_SYS_MAX_IDS 256

int ptw_sys_prod_init(struct ptw_sys_prod *p, const struct ptw_sys_ops *ops,
		      void *ctx, const char *producer_name)
{
	memset(p, 0, sizeof(*p));
	p->pending_fd = -1;
	p->ops = ops;
	p->ctx = ctx;
	snprintf(p->name, sizeof(p->name), "%s", producer_name);
	if (ptw_pb_buf_init(&p->msg, 1024))
		return PTW_ERR_NOMEM;
	if (ptw_sys_ipc_init(&p->ipc)) {
		ptw_pb_buf_free(&p->msg);
		return PTW_ERR_NOMEM;
	}
	return 0;
}

void ptw_sys_prod_close(struct ptw_sys_prod *p)
{
	ptw_sys_ipc_close(&p->ipc);
	if (p->pending_fd >= 0)
		close(p->pending_fd);
	p->pending_fd = -1;
	p->state = PTW_SYS_P_CLOSED;
	memset(p->method, 0, sizeof(p->method));
	p->bind_req = p->init_req = p->async_req = 0;
}

void ptw_sys_prod_free(struct ptw_sys_prod *p)
{
	ptw_sys_prod_close(p);
	ptw_sys_ipc_free(&p->ipc);
	ptw_pb_buf_free(&p->msg);
}

/* A protocol error: counted, noted, and the connection fails. */
static int ptw_sys_bad(struct ptw_sys_prod *p, const char *why)
{
	p->protocol_errors++;
	p->why = why;
	if (!p->ipc.failed)
		p->ipc.failed = EPROTO;
	return -1;
}

int ptw_sys_prod_connect(struct ptw_sys_prod *p, const char *path)
{
	ptw_sys_prod_close(p);
	int e = ptw_sys_ipc_connect(&p->ipc, path);
	if (e)
		return e;
	struct ptw_pb_buf *m = &p->msg;
	ptw_pb_buf_reset(m);
	ptw_pb_append_string_field(m, F_BIND_NAME, "ProducerPort");
	p->bind_req = ++p->next_req;
	p->state = PTW_SYS_P_BINDING;
	if (m->oom ||
	    ptw_sys_ipc_send(&p->ipc, p->bind_req, PTW_SYS_F_BIND, m->data,
			     m->len)) {
		int err = p->ipc.failed ? p->ipc.failed : ENOMEM;
		ptw_sys_prod_close(p);
		return err;
	}
	return 0;
}

/* InvokeMethod of 'method' with args 'args' (n bytes); *req_out gets the
 * request id (may be NULL). 0 or -1. */
static int ptw_sys_invoke(struct ptw_sys_prod *p, int method,
			  const uint8_t *args, size_t n, int drop_reply,
			  uint64_t *req_out)
{
	if (!p->method[method])
		return 0; /* an older service without it: nothing to send */
	struct ptw_pb_buf inv;
	if (ptw_pb_buf_init(&inv, n + 32))
		return ptw_sys_bad(p, "out of memory");
	ptw_pb_append_varint_field(&inv, F_INV_SERVICE, p->service_id);
	ptw_pb_append_varint_field(&inv, F_INV_METHOD, p->method[method]);
	ptw_pb_append_bytes_field(&inv, F_INV_ARGS, args, n);
	if (drop_reply)
		ptw_pb_append_varint_field(&inv, F_INV_DROP, 1);
	uint64_t req = ++p->next_req;
	int rc = inv.oom ? -1
			 : ptw_sys_ipc_send(&p->ipc, req, PTW_SYS_F_INVOKE,
					    inv.data, inv.len);
	ptw_pb_buf_free(&inv);
	if (req_out)
		*req_out = req;
	return rc;
}

static int ptw_sys_send_init(struct ptw_sys_prod *p)
{
	struct ptw_pb_buf *m = &p->msg;
	ptw_pb_buf_reset(m);
	if (p->smb_page_hint)
		ptw_pb_append_varint_field(m, F_INIT_PAGE_HINT, p->smb_page_hint);
	if (p->smb_size_hint)
		ptw_pb_append_varint_field(m, F_INIT_SIZE_HINT, p->smb_size_hint);
	ptw_pb_append_string_field(m, F_INIT_NAME, p->name);
	ptw_pb_append_string_field(m, F_INIT_SDK_VERSION, "ptw " PTW_VERSION);
	if (m->oom)
		return ptw_sys_bad(p, "out of memory");
	p->state = PTW_SYS_P_INIT;
	return ptw_sys_invoke(p, PTW_SYS_M_INIT, m->data, m->len, 0,
			      &p->init_req);
}

/* BindServiceReply: the service id and the method ids by name. */
static int ptw_sys_on_bind(struct ptw_sys_prod *p, const uint8_t *d, size_t n)
{
	struct ptw_sys_pbr r;
	struct ptw_sys_pbf f;
	int ok = 0, st;
	ptw_sys_pbr_init(&r, d, n);
	while ((st = ptw_sys_pbr_next(&r, &f)) > 0) {
		if (f.num == F_BREPLY_SUCCESS && f.wt == 0) {
			ok = f.v != 0;
		} else if (f.num == F_BREPLY_SERVICE && f.wt == 0) {
			p->service_id = (uint32_t)f.v;
		} else if (f.num == F_BREPLY_METHODS && f.wt == 2) {
			struct ptw_sys_pbr mr;
			struct ptw_sys_pbf mf;
			uint32_t id = 0;
			const uint8_t *name = NULL;
			size_t name_len = 0;
			int ms;
			ptw_sys_pbr_init(&mr, f.data, f.len);
			while ((ms = ptw_sys_pbr_next(&mr, &mf)) > 0) {
				if (mf.num == F_METHOD_ID && mf.wt == 0)
					id = (uint32_t)mf.v;
				else if (mf.num == F_METHOD_NAME && mf.wt == 2) {
					name = mf.data;
					name_len = mf.len;
				}
			}
			if (ms < 0)
				return ptw_sys_bad(p, "malformed method in BindServiceReply");
			for (int i = 0; name && i < PTW_SYS_M_COUNT; i++)
				if (strlen(ptw_sys_method_names[i]) == name_len &&
				    memcmp(ptw_sys_method_names[i], name, name_len) == 0)
					p->method[i] = id;
		}
	}
	if (st < 0)
		return ptw_sys_bad(p, "malformed BindServiceReply");
	if (!ok)
		return ptw_sys_bad(p, "the service refused to bind ProducerPort");
	if (!p->method[PTW_SYS_M_INIT] || !p->method[PTW_SYS_M_REGISTER] ||
	    !p->method[PTW_SYS_M_ASYNC] || !p->method[PTW_SYS_M_COMMIT])
		return ptw_sys_bad(p, "ProducerPort lacks a method ptw needs");
	return ptw_sys_send_init(p);
}

/* A string list entry of a TrackEventConfig. */
static int ptw_sys_strs_add(struct ptw_sys_strs *l, const struct ptw_sys_pbf *f)
{
	if (f->wt != 2 || l->n >= sizeof(l->s) / sizeof(l->s[0]) ||
	    f->len > UINT16_MAX)
		return -1;
	l->s[l->n] = (const char *)f->data;
	l->len[l->n++] = (uint16_t)f->len;
	return 0;
}

int ptw_sys_te_parse(const uint8_t *raw, size_t len, struct ptw_sys_te_cfg *c)
{
	memset(c, 0, sizeof(*c));
	struct ptw_sys_pbr r;
	struct ptw_sys_pbf f;
	int st;
	ptw_sys_pbr_init(&r, raw, len);
	while ((st = ptw_sys_pbr_next(&r, &f)) > 0) {
		struct ptw_sys_strs *l = f.num == 1   ? &c->dis_cat
					 : f.num == 2 ? &c->en_cat
					 : f.num == 3 ? &c->dis_tag
					 : f.num == 4 ? &c->en_tag
						      : NULL;
		if (l && ptw_sys_strs_add(l, &f))
			return -1;
	}
	return st < 0 ? -1 : 0;
}

/* DataSourceConfig: 0 with *ds filled and *mine set if it names ptw's
 * data source; -1 if malformed. */
static int ptw_sys_parse_dsc(const uint8_t *d, size_t n, struct ptw_sys_ds *ds,
			     int *mine)
{
	struct ptw_sys_pbr r;
	struct ptw_sys_pbf f;
	int st;
	*mine = 0;
	ptw_sys_pbr_init(&r, d, n);
	while ((st = ptw_sys_pbr_next(&r, &f)) > 0) {
		if (f.num == F_DSC_NAME && f.wt == 2)
			*mine = f.len == strlen(PTW_SYS_DS_NAME) &&
				memcmp(f.data, PTW_SYS_DS_NAME, f.len) == 0;
		else if (f.num == F_DSC_TARGET && f.wt == 0)
			ds->target_buffer = (uint32_t)f.v;
		else if (f.num == F_DSC_SESSION && f.wt == 0)
			ds->session_id = f.v;
		else if (f.num == F_DSC_TE && f.wt == 2) {
			ds->te_raw = f.data;
			ds->te_len = f.len;
		}
	}
	struct ptw_sys_te_cfg te;
	if (st < 0 || ptw_sys_te_parse(ds->te_raw, ds->te_len, &te))
		return -1;
	return 0;
}

/* SetupDataSource / StartDataSource {new_instance_id, config}. */
static int ptw_sys_on_start(struct ptw_sys_prod *p, const uint8_t *d, size_t n,
			    int start)
{
	struct ptw_sys_ds ds;
	memset(&ds, 0, sizeof(ds));
	struct ptw_sys_pbr r;
	struct ptw_sys_pbf f;
	int st, mine = 0, have_cfg = 0;
	ptw_sys_pbr_init(&r, d, n);
	while ((st = ptw_sys_pbr_next(&r, &f)) > 0) {
		if (f.num == 1 && f.wt == 0)
			ds.id = f.v;
		else if (f.num == 2 && f.wt == 2) {
			if (ptw_sys_parse_dsc(f.data, f.len, &ds, &mine))
				return ptw_sys_bad(p, "malformed DataSourceConfig");
			have_cfg = 1;
		}
	}
	if (st < 0 || !ds.id || !have_cfg)
		return ptw_sys_bad(p, "malformed Setup/StartDataSource");
	if (!mine)
		return ptw_sys_bad(p, "a data source ptw did not register");
	if (start) {
		p->ops->start(p->ctx, &ds);
		/* registered with will_notify_on_start */
		return ptw_sys_prod_started(p, ds.id);
	}
	return 0; /* the instance is set up at its start */
}

/* Flush / ClearIncrementalState: the repeated data_source_ids (field 1,
 * packed or not), and the flush's request_id (field 2). */
static int ptw_sys_on_ids(struct ptw_sys_prod *p, const uint8_t *d, size_t n,
			  int flush)
{
	uint64_t ids[PTW_SYS_MAX_IDS], req = 0;
	size_t n_ids = 0;
	struct ptw_sys_pbr r;
	struct ptw_sys_pbf f;
	int st;
	ptw_sys_pbr_init(&r, d, n);
	while ((st = ptw_sys_pbr_next(&r, &f)) > 0) {
		if (f.num == 1 && f.wt == 0) {
			if (n_ids == PTW_SYS_MAX_IDS)
				return ptw_sys_bad(p, "too many data source ids");
			ids[n_ids++] = f.v;
		} else if (f.num == 1 && f.wt == 2) {
			struct ptw_sys_pbr pr;
			uint64_t v;
			ptw_sys_pbr_init(&pr, f.data, f.len);
			while (pr.p < pr.end) {
				if (ptw_sys_pbr_varint(&pr, &v) ||
				    n_ids == PTW_SYS_MAX_IDS)
					return ptw_sys_bad(p, "malformed data source ids");
				ids[n_ids++] = v;
			}
		} else if (flush && f.num == 2 && f.wt == 0) {
			req = f.v;
		}
	}
	if (st < 0)
		return ptw_sys_bad(p, "malformed Flush/ClearIncrementalState");
	if (flush)
		p->ops->flush(p->ctx, req, ids, n_ids);
	else
		p->ops->clear(p->ctx, ids, n_ids);
	return p->ipc.failed ? -1 : 0;
}

static int ptw_sys_on_setup_tracing(struct ptw_sys_prod *p, const uint8_t *d,
				    size_t n)
{
	struct ptw_sys_pbr r;
	struct ptw_sys_pbf f;
	int st;
	uint64_t page_kb = 0;
	ptw_sys_pbr_init(&r, d, n);
	while ((st = ptw_sys_pbr_next(&r, &f)) > 0)
		if (f.num == 1 && f.wt == 0)
			page_kb = f.v;
	if (st < 0)
		return ptw_sys_bad(p, "malformed SetupTracing");
	int fd = p->pending_fd;
	p->pending_fd = -1;
	if (fd < 0)
		return ptw_sys_bad(p, "SetupTracing without a shared memory fd");
	/* the ABI's pages: a multiple of 4 KiB up to 256 KiB */
	if (page_kb < 4 || page_kb > 256 || page_kb % 4) {
		close(fd);
		return ptw_sys_bad(p, "SetupTracing with an invalid page size");
	}
	if (p->ops->setup_smb(p->ctx, fd, (uint32_t)page_kb * 1024u))
		return ptw_sys_bad(p, "the shared memory buffer was refused");
	return 0;
}

/* One GetAsyncCommandResponse. */
static int ptw_sys_on_command(struct ptw_sys_prod *p, const uint8_t *d, size_t n)
{
	struct ptw_sys_pbr r;
	struct ptw_sys_pbf f;
	int st, rc = 0;
	ptw_sys_pbr_init(&r, d, n);
	while (rc == 0 && (st = ptw_sys_pbr_next(&r, &f)) > 0) {
		if (f.wt != 2)
			continue;
		switch (f.num) {
		case F_CMD_SETUP_TRACING:
			rc = ptw_sys_on_setup_tracing(p, f.data, f.len);
			break;
		case F_CMD_SETUP_DS:
			rc = ptw_sys_on_start(p, f.data, f.len, 0);
			break;
		case F_CMD_START:
			rc = ptw_sys_on_start(p, f.data, f.len, 1);
			break;
		case F_CMD_STOP: {
			struct ptw_sys_pbr sr;
			struct ptw_sys_pbf sf;
			uint64_t id = 0;
			int ss;
			ptw_sys_pbr_init(&sr, f.data, f.len);
			while ((ss = ptw_sys_pbr_next(&sr, &sf)) > 0)
				if (sf.num == 1 && sf.wt == 0)
					id = sf.v;
			if (ss < 0)
				return ptw_sys_bad(p, "malformed StopDataSource");
			p->ops->stop(p->ctx, id);
			rc = p->ipc.failed ? -1 : 0;
			break;
		}
		case F_CMD_FLUSH:
			rc = ptw_sys_on_ids(p, f.data, f.len, 1);
			break;
		case F_CMD_CLEAR:
			rc = ptw_sys_on_ids(p, f.data, f.len, 0);
			break;
		default:
			break; /* a newer command: ignored, as the SDK does */
		}
	}
	if (rc == 0 && st < 0)
		return ptw_sys_bad(p, "malformed GetAsyncCommandResponse");
	return rc;
}

static int ptw_sys_on_reply(struct ptw_sys_prod *p, uint64_t req,
			    const uint8_t *d, size_t n)
{
	struct ptw_sys_pbr r;
	struct ptw_sys_pbf f;
	int st, ok = 0, more = 0;
	const uint8_t *reply = NULL;
	size_t reply_len = 0;
	ptw_sys_pbr_init(&r, d, n);
	while ((st = ptw_sys_pbr_next(&r, &f)) > 0) {
		if (f.num == F_IREPLY_SUCCESS && f.wt == 0)
			ok = f.v != 0;
		else if (f.num == F_IREPLY_MORE && f.wt == 0)
			more = f.v != 0;
		else if (f.num == F_IREPLY_PROTO && f.wt == 2) {
			reply = f.data;
			reply_len = f.len;
		}
	}
	if (st < 0)
		return ptw_sys_bad(p, "malformed InvokeMethodReply");
	if (req == p->init_req && p->state == PTW_SYS_P_INIT) {
		if (!ok)
			return ptw_sys_bad(p, "InitializeConnection refused");
		/* the command stream first, then the owner registers its
		 * data source, as the SDK does: the service drops a
		 * SetupDataSource or StartDataSource due before the
		 * producer's GetAsyncCommand (producer_ipc_service.cc; only
		 * SetupTracing, which brings the SMB, waits for it), and a
		 * session running at the registration starts it at once */
		p->state = PTW_SYS_P_READY;
		if (ptw_sys_invoke(p, PTW_SYS_M_ASYNC, NULL, 0, 0, &p->async_req))
			return -1;
		p->ops->ready(p->ctx);
		return p->ipc.failed ? -1 : 0;
	}
	if (req == p->async_req && p->state == PTW_SYS_P_READY) {
		if (!ok || !more)
			return ptw_sys_bad(p, "the command stream ended");
		return ptw_sys_on_command(p, reply ? reply : (const uint8_t *)"",
					  reply_len);
	}
	if (req == 0 || req > p->next_req)
		return ptw_sys_bad(p, "a reply to no request");
	if (!ok && p->state == PTW_SYS_P_READY)
		p->protocol_errors++; /* e.g. a refused registration: counted */
	return 0;
}

/* One IPCFrame. */
static int ptw_sys_on_frame(struct ptw_sys_prod *p, const uint8_t *d, size_t n)
{
	struct ptw_sys_pbr r;
	struct ptw_sys_pbf f;
	uint64_t req = 0;
	const uint8_t *body = NULL;
	size_t body_len = 0;
	uint32_t kind = 0;
	int st;
	ptw_sys_pbr_init(&r, d, n);
	while ((st = ptw_sys_pbr_next(&r, &f)) > 0) {
		if (f.num == PTW_SYS_F_REQUEST_ID && f.wt == 0) {
			req = f.v;
		} else if (f.num >= PTW_SYS_F_BIND &&
			   f.num <= PTW_SYS_F_REQUEST_ERROR && f.wt == 2) {
			kind = f.num;
			body = f.data;
			body_len = f.len;
		}
	}
	if (st < 0 || !kind)
		return ptw_sys_bad(p, "malformed IPC frame");
	switch (kind) {
	case PTW_SYS_F_BIND_REPLY:
		if (req != p->bind_req || p->state != PTW_SYS_P_BINDING)
			return ptw_sys_bad(p, "an unexpected BindServiceReply");
		return ptw_sys_on_bind(p, body, body_len);
	case PTW_SYS_F_INVOKE_REPLY:
		if (p->state < PTW_SYS_P_INIT)
			return ptw_sys_bad(p, "a reply before binding");
		return ptw_sys_on_reply(p, req, body, body_len);
	case PTW_SYS_F_REQUEST_ERROR:
		return ptw_sys_bad(p, "the service reported a request error");
	default:
		return ptw_sys_bad(p, "a frame a client never receives");
	}
}

int ptw_sys_prod_dispatch(struct ptw_sys_prod *p)
{
	const uint8_t *frame;
	size_t len;
	int fd, got;
	while (!p->ipc.failed &&
	       (got = ptw_sys_ipc_frame(&p->ipc, &frame, &len, &fd)) > 0) {
		if (fd >= 0) {
			/* kept until SetupTracing claims it (the SDK keeps
			 * the last one received too) */
			if (p->pending_fd >= 0) {
				close(p->pending_fd);
				p->protocol_errors++;
			}
			p->pending_fd = fd;
		}
		if (ptw_sys_on_frame(p, frame, len))
			return -1;
	}
	return p->ipc.failed ? -1 : 0;
}

int ptw_sys_prod_register(struct ptw_sys_prod *p, int update,
			  const struct ptw_sys_cat_decl *cats, size_t n)
{
	if (p->state != PTW_SYS_P_READY)
		return 0;
	struct ptw_pb_buf *m = &p->msg;
	ptw_pb_buf_reset(m);
	size_t dsd = ptw_pb_begin_nested(m, 1); /* data_source_descriptor */
	ptw_pb_append_string_field(m, F_DSD_NAME, PTW_SYS_DS_NAME);
	ptw_pb_append_varint_field(m, F_DSD_ID, PTW_SYS_DS_ID);
	ptw_pb_append_varint_field(m, F_DSD_NOTIFY_STOP, 1);
	ptw_pb_append_varint_field(m, F_DSD_NOTIFY_START, 1);
	ptw_pb_append_varint_field(m, F_DSD_CLEAR_INCR, 1);
	size_t ted = ptw_pb_begin_nested(m, F_DSD_TE);
	for (size_t i = 0; i < n; i++) {
		size_t c = ptw_pb_begin_nested(m, F_TED_CATS);
		ptw_pb_append_string_field(m, F_TEC_NAME, cats[i].name);
		if (cats[i].desc && *cats[i].desc)
			ptw_pb_append_string_field(m, F_TEC_DESC, cats[i].desc);
		for (const char *t = cats[i].tags; t && *t;) {
			size_t len = strcspn(t, ",");
			if (len)
				ptw_pb_append_bytes_field(m, F_TEC_TAGS, t, len);
			t += len + (t[len] == ',');
		}
		ptw_pb_end_nested(m, c);
	}
	ptw_pb_end_nested(m, ted);
	ptw_pb_end_nested(m, dsd);
	if (m->oom)
		return ptw_sys_bad(p, "out of memory");
	return ptw_sys_invoke(p, update ? PTW_SYS_M_UPDATE : PTW_SYS_M_REGISTER,
			      m->data, m->len, 0, NULL);
}

int ptw_sys_prod_commit(struct ptw_sys_prod *p,
			const struct ptw_sys_chunk_ref *chunks, size_t n,
			uint64_t flush_id)
{
	if (p->state != PTW_SYS_P_READY)
		return 0;
	struct ptw_pb_buf *m = &p->msg;
	ptw_pb_buf_reset(m);
	for (size_t i = 0; i < n; i++) {
		size_t c = ptw_pb_begin_nested(m, F_COMMIT_CHUNKS);
		ptw_pb_append_varint_field(m, F_CTM_PAGE, chunks[i].page);
		ptw_pb_append_varint_field(m, F_CTM_CHUNK, chunks[i].chunk);
		ptw_pb_append_varint_field(m, F_CTM_TARGET, chunks[i].target_buffer);
		ptw_pb_end_nested(m, c);
	}
	if (flush_id)
		ptw_pb_append_varint_field(m, F_COMMIT_FLUSH, flush_id);
	if (m->oom)
		return ptw_sys_bad(p, "out of memory");
	return ptw_sys_invoke(p, PTW_SYS_M_COMMIT, m->data, m->len, 0, NULL);
}

static int ptw_sys_notify(struct ptw_sys_prod *p, int method, uint64_t id)
{
	if (p->state != PTW_SYS_P_READY)
		return 0;
	struct ptw_pb_buf *m = &p->msg;
	ptw_pb_buf_reset(m);
	ptw_pb_append_varint_field(m, 1, id);
	if (m->oom)
		return ptw_sys_bad(p, "out of memory");
	return ptw_sys_invoke(p, method, m->data, m->len, 0, NULL);
}

int ptw_sys_prod_started(struct ptw_sys_prod *p, uint64_t id)
{
	return ptw_sys_notify(p, PTW_SYS_M_STARTED, id);
}

int ptw_sys_prod_stopped(struct ptw_sys_prod *p, uint64_t id)
{
	return ptw_sys_notify(p, PTW_SYS_M_STOPPED, id);
}

int ptw_sys_prod_trace_writer(struct ptw_sys_prod *p, uint32_t writer_id,
			      uint32_t target_buffer, int added)
{
	if (p->state != PTW_SYS_P_READY)
		return 0;
	struct ptw_pb_buf *m = &p->msg;
	ptw_pb_buf_reset(m);
	ptw_pb_append_varint_field(m, 1, writer_id);
	if (added)
		ptw_pb_append_varint_field(m, 2, target_buffer);
	if (m->oom)
		return ptw_sys_bad(p, "out of memory");
	return ptw_sys_invoke(p, added ? PTW_SYS_M_REG_WRITER
				       : PTW_SYS_M_UNREG_WRITER,
			      m->data, m->len, 1, NULL);
}
