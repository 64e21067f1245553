/* test_pb_fields.c - every field number in lib/encode/pb_fields.h matches the
 * protobuf-c descriptor generated from proto/ptw_trace.proto.
 * SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>

#include "lib/encode/pb_fields.h"
#include "ptw_trace.pb-c.h"

static void check_field(const ProtobufCMessageDescriptor *d, const char *name,
			unsigned want, const char *macro)
{
	const ProtobufCFieldDescriptor *f =
		protobuf_c_message_descriptor_get_field_by_name(d, name);
	cr_assert_not_null(f, "%s: no field %s.%s", macro, d->name, name);
	cr_assert_eq(f->id, want, "%s = %u but %s.%s is %u", macro, want,
		     d->name, name, f->id);
}

static void check_enum(const ProtobufCEnumDescriptor *d, const char *name,
		       int want, const char *macro)
{
	const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value_by_name(d, name);
	cr_assert_not_null(v, "%s: no value %s in %s", macro, name, d->name);
	cr_assert_eq(v->value, want, "%s = %d but %s is %d", macro, want, name,
		     v->value);
}

#define FIELD(msg, name, macro) \
	check_field(&perfetto__protos__##msg##__descriptor, name, macro, #macro)
#define ENUMV(en, name, macro) \
	check_enum(&perfetto__protos__##en##__descriptor, name, macro, #macro)

Test(pb_fields, field_numbers_match_the_proto)
{
	FIELD(trace, "packet", PTW_F_TRACE_PACKET);
	FIELD(trace_packet, "timestamp", PTW_F_PKT_TIMESTAMP);
	FIELD(trace_packet, "timestamp_clock_id", PTW_F_PKT_TIMESTAMP_CLOCK_ID);
	FIELD(trace_packet, "clock_snapshot", PTW_F_PKT_CLOCK_SNAPSHOT);
	FIELD(trace_packet, "track_event", PTW_F_PKT_TRACK_EVENT);
	FIELD(trace_packet, "compressed_packets", PTW_F_PKT_COMPRESSED_PACKETS);
	FIELD(trace_packet, "zstd_compressed_packets", PTW_F_PKT_ZSTD_COMPRESSED_PACKETS);
	FIELD(trace_packet, "trace_stats", PTW_F_PKT_TRACE_STATS);
	FIELD(trace_stats, "buffer_stats", PTW_F_TS_BUFFER_STATS);
	FIELD(trace_stats, "writer_stats", PTW_F_TS_WRITER_STATS);
	FIELD(trace_stats__buffer_stats, "buffer_size", PTW_F_BS_BUFFER_SIZE);
	FIELD(trace_stats__buffer_stats, "bytes_written", PTW_F_BS_BYTES_WRITTEN);
	FIELD(trace_stats__buffer_stats, "bytes_overwritten", PTW_F_BS_BYTES_OVERWRITTEN);
	FIELD(trace_stats__buffer_stats, "chunks_written", PTW_F_BS_CHUNKS_WRITTEN);
	FIELD(trace_stats__buffer_stats, "chunks_overwritten", PTW_F_BS_CHUNKS_OVERWRITTEN);
	FIELD(trace_stats__buffer_stats, "trace_writer_packet_loss", PTW_F_BS_TRACE_WRITER_PACKET_LOSS);
	FIELD(trace_stats__writer_stats, "sequence_id", PTW_F_WS_SEQUENCE_ID);
	FIELD(trace_stats__writer_stats, "buffer", PTW_F_WS_BUFFER);
	FIELD(trace_packet, "track_descriptor", PTW_F_PKT_TRACK_DESCRIPTOR);
	FIELD(trace_packet, "trusted_packet_sequence_id", PTW_F_PKT_SEQUENCE_ID);
	FIELD(trace_packet, "interned_data", PTW_F_PKT_INTERNED_DATA);
	FIELD(trace_packet, "sequence_flags", PTW_F_PKT_SEQUENCE_FLAGS);
	FIELD(trace_packet, "trace_packet_defaults", PTW_F_PKT_DEFAULTS);
	FIELD(trace_packet, "previous_packet_dropped", PTW_F_PKT_PREVIOUS_PACKET_DROPPED);
	FIELD(trace_packet, "first_packet_on_sequence", PTW_F_PKT_FIRST_PACKET_ON_SEQUENCE);
	FIELD(trace_packet, "machine_id", PTW_F_PKT_MACHINE_ID);
	FIELD(trace_packet, "system_info", PTW_F_PKT_SYSTEM_INFO);
	FIELD(system_info, "utsname", PTW_F_SI_UTSNAME);
	FIELD(system_info, "machine_name", PTW_F_SI_MACHINE_NAME);
	FIELD(utsname, "sysname", PTW_F_UTS_SYSNAME);
	FIELD(utsname, "version", PTW_F_UTS_VERSION);
	FIELD(utsname, "release", PTW_F_UTS_RELEASE);
	FIELD(utsname, "machine", PTW_F_UTS_MACHINE);
	FIELD(trace_packet_defaults, "timestamp_clock_id", PTW_F_DEF_TIMESTAMP_CLOCK_ID);
	FIELD(trace_packet_defaults, "track_event_defaults", PTW_F_DEF_TRACK_EVENT_DEFAULTS);
	FIELD(track_event_defaults, "track_uuid", PTW_F_TED_TRACK_UUID);
	FIELD(clock_snapshot, "clocks", PTW_F_CS_CLOCKS);
	FIELD(clock_snapshot, "primary_trace_clock", PTW_F_CS_PRIMARY_TRACE_CLOCK);
	FIELD(clock_snapshot__clock, "clock_id", PTW_F_CLK_CLOCK_ID);
	FIELD(clock_snapshot__clock, "timestamp", PTW_F_CLK_TIMESTAMP);
	FIELD(clock_snapshot__clock, "is_incremental", PTW_F_CLK_IS_INCREMENTAL);
	FIELD(clock_snapshot__clock, "unit_multiplier_ns", PTW_F_CLK_UNIT_MULTIPLIER_NS);
	FIELD(interned_data, "event_categories", PTW_F_ID_EVENT_CATEGORIES);
	FIELD(interned_data, "event_names", PTW_F_ID_EVENT_NAMES);
	FIELD(interned_data, "debug_annotation_names", PTW_F_ID_DEBUG_ANNOTATION_NAMES);
	FIELD(interned_data, "debug_annotation_string_values", PTW_F_ID_DEBUG_ANNOTATION_STRING_VALUES);
	/* callstacks */
	FIELD(interned_data, "function_names", PTW_F_ID_FUNCTION_NAMES);
	FIELD(interned_data, "frames", PTW_F_ID_FRAMES);
	FIELD(interned_data, "callstacks", PTW_F_ID_CALLSTACKS);
	FIELD(interned_data, "build_ids", PTW_F_ID_BUILD_IDS);
	FIELD(interned_data, "mapping_paths", PTW_F_ID_MAPPING_PATHS);
	FIELD(interned_data, "source_paths", PTW_F_ID_SOURCE_PATHS);
	FIELD(interned_data, "mappings", PTW_F_ID_MAPPINGS);
	FIELD(mapping, "iid", PTW_F_MAP_IID);
	FIELD(mapping, "build_id", PTW_F_MAP_BUILD_ID);
	FIELD(mapping, "start_offset", PTW_F_MAP_START_OFFSET);
	FIELD(mapping, "start", PTW_F_MAP_START);
	FIELD(mapping, "end", PTW_F_MAP_END);
	FIELD(mapping, "load_bias", PTW_F_MAP_LOAD_BIAS);
	FIELD(mapping, "path_string_ids", PTW_F_MAP_PATH_STRING_IDS);
	FIELD(mapping, "exact_offset", PTW_F_MAP_EXACT_OFFSET);
	FIELD(frame, "iid", PTW_F_FRAME_IID);
	FIELD(frame, "function_name_id", PTW_F_FRAME_FUNCTION_NAME_ID);
	FIELD(frame, "mapping_id", PTW_F_FRAME_MAPPING_ID);
	FIELD(frame, "rel_pc", PTW_F_FRAME_REL_PC);
	FIELD(frame, "source_path_iid", PTW_F_FRAME_SOURCE_PATH_IID);
	FIELD(frame, "line_number", PTW_F_FRAME_LINE_NUMBER);
	FIELD(callstack, "iid", PTW_F_CS_IID);
	FIELD(callstack, "frame_ids", PTW_F_CS_FRAME_IDS);
	FIELD(track_event, "callstack", PTW_F_TE_CALLSTACK);
	FIELD(track_event, "callstack_iid", PTW_F_TE_CALLSTACK_IID);
	FIELD(track_event__inline_callstack, "frames", PTW_F_ICS_FRAMES);
	FIELD(track_event__inline_callstack__frame, "function_name", PTW_F_ICS_FUNCTION_NAME);
	FIELD(track_event__inline_callstack__frame, "source_file", PTW_F_ICS_SOURCE_FILE);
	FIELD(track_event__inline_callstack__frame, "line_number", PTW_F_ICS_LINE_NUMBER);
	FIELD(event_name, "iid", PTW_F_INTERN_IID);
	FIELD(event_category, "iid", PTW_F_INTERN_IID);
	FIELD(debug_annotation_name, "iid", PTW_F_INTERN_IID);
	FIELD(event_name, "name", PTW_F_INTERN_NAME);
	FIELD(event_category, "name", PTW_F_INTERN_NAME);
	FIELD(debug_annotation_name, "name", PTW_F_INTERN_NAME);
	FIELD(interned_string, "iid", PTW_F_ISTR_IID);
	FIELD(interned_string, "str", PTW_F_ISTR_STR);
	FIELD(track_event, "category_iids", PTW_F_TE_CATEGORY_IIDS);
	FIELD(track_event, "debug_annotations", PTW_F_TE_DEBUG_ANNOTATIONS);
	FIELD(track_event, "type", PTW_F_TE_TYPE);
	FIELD(track_event, "name_iid", PTW_F_TE_NAME_IID);
	FIELD(track_event, "track_uuid", PTW_F_TE_TRACK_UUID);
	FIELD(track_event, "name", PTW_F_TE_NAME);
	FIELD(track_event, "counter_value", PTW_F_TE_COUNTER_VALUE);
	FIELD(track_event, "double_counter_value", PTW_F_TE_DOUBLE_COUNTER_VALUE);
	FIELD(track_event, "flow_ids", PTW_F_TE_FLOW_IDS);
	FIELD(track_event, "terminating_flow_ids", PTW_F_TE_TERMINATING_FLOW_IDS);
	FIELD(debug_annotation, "name_iid", PTW_F_DA_NAME_IID);
	FIELD(debug_annotation, "bool_value", PTW_F_DA_BOOL_VALUE);
	FIELD(debug_annotation, "uint_value", PTW_F_DA_UINT_VALUE);
	FIELD(debug_annotation, "int_value", PTW_F_DA_INT_VALUE);
	FIELD(debug_annotation, "double_value", PTW_F_DA_DOUBLE_VALUE);
	FIELD(debug_annotation, "string_value", PTW_F_DA_STRING_VALUE);
	FIELD(debug_annotation, "pointer_value", PTW_F_DA_POINTER_VALUE);
	FIELD(debug_annotation, "name", PTW_F_DA_NAME);
	FIELD(debug_annotation, "string_value_iid", PTW_F_DA_STRING_VALUE_IID);
	FIELD(debug_annotation, "dict_entries", PTW_F_DA_DICT_ENTRIES);
	FIELD(debug_annotation, "array_values", PTW_F_DA_ARRAY_VALUES);
	FIELD(track_descriptor, "uuid", PTW_F_TD_UUID);
	FIELD(track_descriptor, "name", PTW_F_TD_NAME);
	FIELD(track_descriptor, "process", PTW_F_TD_PROCESS);
	FIELD(track_descriptor, "thread", PTW_F_TD_THREAD);
	FIELD(track_descriptor, "parent_uuid", PTW_F_TD_PARENT_UUID);
	FIELD(track_descriptor, "counter", PTW_F_TD_COUNTER);
	FIELD(track_descriptor, "child_ordering", PTW_F_TD_CHILD_ORDERING);
	FIELD(track_descriptor, "sibling_order_rank", PTW_F_TD_SIBLING_ORDER_RANK);
	FIELD(track_descriptor, "process_ordering", PTW_F_TD_PROCESS_ORDERING);
	FIELD(track_descriptor, "thread_ordering", PTW_F_TD_THREAD_ORDERING);
	FIELD(process_descriptor, "pid", PTW_F_PD_PID);
	FIELD(process_descriptor, "process_name", PTW_F_PD_PROCESS_NAME);
	FIELD(thread_descriptor, "pid", PTW_F_THD_PID);
	FIELD(thread_descriptor, "tid", PTW_F_THD_TID);
	FIELD(thread_descriptor, "thread_name", PTW_F_THD_THREAD_NAME);
	FIELD(counter_descriptor, "unit", PTW_F_CD_UNIT);
	FIELD(counter_descriptor, "type", PTW_F_CD_TYPE);
	FIELD(track_descriptor, "sibling_merge_behavior",
	      PTW_F_TD_SIBLING_MERGE_BEHAVIOR);
	FIELD(track_event, "extra_counter_values", PTW_F_TE_EXTRA_COUNTER_VALUES);
	FIELD(track_event, "extra_counter_track_uuids",
	      PTW_F_TE_EXTRA_COUNTER_TRACK_UUIDS);
	FIELD(counter_descriptor, "unit_name", PTW_F_CD_UNIT_NAME);
}

Test(pb_fields, enum_values_match_the_proto)
{
	ENUMV(trace_packet__sequence_flags, "SEQ_INCREMENTAL_STATE_CLEARED",
	      PTW_SEQ_INCREMENTAL_STATE_CLEARED);
	ENUMV(trace_packet__sequence_flags, "SEQ_NEEDS_INCREMENTAL_STATE",
	      PTW_SEQ_NEEDS_INCREMENTAL_STATE);
	ENUMV(track_descriptor__child_tracks_ordering, "EXPLICIT",
	      PTW_CHILD_ORDERING_EXPLICIT);
	ENUMV(builtin_clock, "BUILTIN_CLOCK_BOOTTIME", PTW_CLOCK_BOOTTIME);
	ENUMV(builtin_clock, "BUILTIN_CLOCK_REALTIME", PTW_CLOCK_REALTIME);
	ENUMV(builtin_clock, "BUILTIN_CLOCK_TRACE_FILE", PTW_CLOCK_TRACE_FILE);
	ENUMV(track_event__type, "TYPE_SLICE_BEGIN", PTW_TE_TYPE_SLICE_BEGIN);
	ENUMV(track_event__type, "TYPE_SLICE_END", PTW_TE_TYPE_SLICE_END);
	ENUMV(track_event__type, "TYPE_INSTANT", PTW_TE_TYPE_INSTANT);
	ENUMV(track_event__type, "TYPE_COUNTER", PTW_TE_TYPE_COUNTER);
	ENUMV(track_descriptor__child_tracks_ordering, "EXPLICIT",
	      PTW_TD_ORDERING_EXPLICIT);
	ENUMV(track_descriptor__process_ordering, "PROCESS_ORDERING_EXPLICIT",
	      PTW_PROCESS_ORDERING_EXPLICIT);
	ENUMV(track_descriptor__thread_ordering, "THREAD_ORDERING_EXPLICIT",
	      PTW_THREAD_ORDERING_EXPLICIT);
	ENUMV(track_descriptor__sibling_merge_behavior,
	      "SIBLING_MERGE_BEHAVIOR_NONE", PTW_TD_SIBLING_MERGE_NONE);
	ENUMV(counter_descriptor__builtin_counter_type,
	      "COUNTER_THREAD_TIME_NS", PTW_CD_TYPE_THREAD_TIME_NS);
	/* Sequence-scoped clocks are 64..127 (ClockSnapshot.Clock docs). */
	cr_assert(PTW_CLOCK_SEQ_INCR >= 64 && PTW_CLOCK_SEQ_INCR <= 127);
	cr_assert(PTW_CLOCK_SEQ_ABS >= 64 && PTW_CLOCK_SEQ_ABS <= 127);
}
