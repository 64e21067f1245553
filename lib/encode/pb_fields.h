/* pb_fields.h - field numbers and enum values of the Perfetto messages ptw
 * writes, each with its proto field name (tests/test_pb_fields.c checks
 * every one against proto/ptw_trace.proto).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef PTW_PB_FIELDS_H
#define PTW_PB_FIELDS_H

/* Trace */
#define PTW_F_TRACE_PACKET 1 /* Trace.packet */

/* TracePacket */
#define PTW_F_PKT_TIMESTAMP 8                  /* TracePacket.timestamp */
#define PTW_F_PKT_TIMESTAMP_CLOCK_ID 58        /* TracePacket.timestamp_clock_id */
#define PTW_F_PKT_CLOCK_SNAPSHOT 6             /* TracePacket.clock_snapshot */
#define PTW_F_PKT_TRACK_EVENT 11               /* TracePacket.track_event */
#define PTW_F_PKT_COMPRESSED_PACKETS 50        /* TracePacket.compressed_packets */
#define PTW_F_PKT_ZSTD_COMPRESSED_PACKETS 133  /* TracePacket.zstd_compressed_packets */
#define PTW_F_PKT_TRACE_STATS 35               /* TracePacket.trace_stats */
#define PTW_F_PKT_TRACK_DESCRIPTOR 60          /* TracePacket.track_descriptor */
#define PTW_F_PKT_SEQUENCE_ID 10               /* TracePacket.trusted_packet_sequence_id */
#define PTW_F_PKT_INTERNED_DATA 12             /* TracePacket.interned_data */
#define PTW_F_PKT_SEQUENCE_FLAGS 13            /* TracePacket.sequence_flags */
#define PTW_F_PKT_DEFAULTS 59                  /* TracePacket.trace_packet_defaults */
#define PTW_F_PKT_PREVIOUS_PACKET_DROPPED 42   /* TracePacket.previous_packet_dropped */
#define PTW_F_PKT_FIRST_PACKET_ON_SEQUENCE 87  /* TracePacket.first_packet_on_sequence */
#define PTW_F_PKT_MACHINE_ID 98                /* TracePacket.machine_id */
#define PTW_F_PKT_SYSTEM_INFO 45               /* TracePacket.system_info */
#define PTW_F_PKT_CHROME_EVENTS 5              /* TracePacket.chrome_events */
#define PTW_F_CEB_METADATA 2                   /* ChromeEventBundle.metadata */
#define PTW_F_CM_NAME 1                        /* ChromeMetadata.name */
#define PTW_F_CM_STRING_VALUE 2                /* ChromeMetadata.string_value */
#define PTW_F_CM_INT_VALUE 4                   /* ChromeMetadata.int_value */

/* SystemInfo, Utsname */
#define PTW_F_SI_UTSNAME 1                 /* SystemInfo.utsname */
#define PTW_F_SI_MACHINE_NAME 17           /* SystemInfo.machine_name */
#define PTW_F_UTS_SYSNAME 1                /* Utsname.sysname */
#define PTW_F_UTS_VERSION 2                /* Utsname.version */
#define PTW_F_UTS_RELEASE 3                /* Utsname.release */
#define PTW_F_UTS_MACHINE 4                /* Utsname.machine */

/* TracePacket.SequenceFlags */
#define PTW_SEQ_INCREMENTAL_STATE_CLEARED 1 /* SEQ_INCREMENTAL_STATE_CLEARED */
#define PTW_SEQ_NEEDS_INCREMENTAL_STATE 2   /* SEQ_NEEDS_INCREMENTAL_STATE */

/* TracePacketDefaults */
#define PTW_F_DEF_TIMESTAMP_CLOCK_ID 58    /* TracePacketDefaults.timestamp_clock_id */
#define PTW_F_DEF_TRACK_EVENT_DEFAULTS 11  /* TracePacketDefaults.track_event_defaults */
/* TrackEventDefaults */
#define PTW_F_TED_TRACK_UUID 11            /* TrackEventDefaults.track_uuid */

/* ClockSnapshot */
#define PTW_F_CS_CLOCKS 1                  /* ClockSnapshot.clocks */
#define PTW_F_CS_PRIMARY_TRACE_CLOCK 2     /* ClockSnapshot.primary_trace_clock */
/* ClockSnapshot.Clock */
#define PTW_F_CLK_CLOCK_ID 1               /* ClockSnapshot.Clock.clock_id */
#define PTW_F_CLK_TIMESTAMP 2              /* ClockSnapshot.Clock.timestamp */
#define PTW_F_CLK_IS_INCREMENTAL 3         /* ClockSnapshot.Clock.is_incremental */
#define PTW_F_CLK_UNIT_MULTIPLIER_NS 4     /* ClockSnapshot.Clock.unit_multiplier_ns */

/* BuiltinClock and the sequence-scoped clocks ptw declares */
#define PTW_CLOCK_REALTIME 1    /* BUILTIN_CLOCK_REALTIME */
#define PTW_CLOCK_BOOTTIME 6    /* BUILTIN_CLOCK_BOOTTIME */
#define PTW_CLOCK_TRACE_FILE 11 /* BUILTIN_CLOCK_TRACE_FILE */
#define PTW_CLOCK_SEQ_INCR 64   /* sequence clock, incremental (deltas) */
#define PTW_CLOCK_SEQ_ABS 65    /* sequence clock, absolute (backwards ts) */

/* InternedData */
#define PTW_F_ID_EVENT_CATEGORIES 1        /* InternedData.event_categories */
#define PTW_F_ID_EVENT_NAMES 2             /* InternedData.event_names */
#define PTW_F_ID_DEBUG_ANNOTATION_NAMES 3  /* InternedData.debug_annotation_names */
#define PTW_F_ID_DEBUG_ANNOTATION_STRING_VALUES 29 /* InternedData.debug_annotation_string_values */
/* InternedData: callstacks (profile_common.proto) */
#define PTW_F_ID_FUNCTION_NAMES 5          /* InternedData.function_names */
#define PTW_F_ID_FRAMES 6                  /* InternedData.frames */
#define PTW_F_ID_CALLSTACKS 7              /* InternedData.callstacks */
#define PTW_F_ID_BUILD_IDS 16              /* InternedData.build_ids */
#define PTW_F_ID_MAPPING_PATHS 17          /* InternedData.mapping_paths */
#define PTW_F_ID_SOURCE_PATHS 18           /* InternedData.source_paths */
#define PTW_F_ID_MAPPINGS 19               /* InternedData.mappings */
#define PTW_F_MAP_IID 1                    /* Mapping.iid */
#define PTW_F_MAP_BUILD_ID 2               /* Mapping.build_id (iid) */
#define PTW_F_MAP_START_OFFSET 3           /* Mapping.start_offset */
#define PTW_F_MAP_START 4                  /* Mapping.start */
#define PTW_F_MAP_END 5                    /* Mapping.end */
#define PTW_F_MAP_LOAD_BIAS 6              /* Mapping.load_bias */
#define PTW_F_MAP_PATH_STRING_IDS 7        /* Mapping.path_string_ids */
#define PTW_F_MAP_EXACT_OFFSET 8           /* Mapping.exact_offset */
#define PTW_F_FRAME_IID 1                  /* Frame.iid */
#define PTW_F_FRAME_FUNCTION_NAME_ID 2     /* Frame.function_name_id */
#define PTW_F_FRAME_MAPPING_ID 3           /* Frame.mapping_id */
#define PTW_F_FRAME_REL_PC 4               /* Frame.rel_pc */
#define PTW_F_FRAME_SOURCE_PATH_IID 5      /* Frame.source_path_iid */
#define PTW_F_FRAME_LINE_NUMBER 6          /* Frame.line_number */
#define PTW_F_CS_IID 1                     /* Callstack.iid */
#define PTW_F_CS_FRAME_IDS 2               /* Callstack.frame_ids */
#define PTW_F_ID_SOURCE_LOCATIONS 4        /* InternedData.source_locations */
#define PTW_F_ID_LOG_MESSAGE_BODY 20       /* InternedData.log_message_body */
/* SourceLocation (iid = 1 as above) */
#define PTW_F_SL_FILE_NAME 2               /* SourceLocation.file_name */
#define PTW_F_SL_FUNCTION_NAME 3           /* SourceLocation.function_name */
#define PTW_F_SL_LINE_NUMBER 4             /* SourceLocation.line_number */
/* LogMessageBody: iid = 1, body = 2 (as EventName) */
/* LogMessage */
#define PTW_F_LM_SOURCE_LOCATION_IID 1     /* LogMessage.source_location_iid */
#define PTW_F_LM_BODY_IID 2                /* LogMessage.body_iid */
#define PTW_F_LM_PRIO 3                    /* LogMessage.prio */
/* EventCategory, EventName, DebugAnnotationName: iid = 1, name = 2 */
#define PTW_F_INTERN_IID 1                 /* EventName.iid (and EventCategory, DebugAnnotationName) */
#define PTW_F_INTERN_NAME 2                /* EventName.name (and EventCategory, DebugAnnotationName) */
/* InternedString */
#define PTW_F_ISTR_IID 1                   /* InternedString.iid */
#define PTW_F_ISTR_STR 2                   /* InternedString.str */

/* TrackEvent */
#define PTW_F_TE_CATEGORY_IIDS 3           /* TrackEvent.category_iids */
#define PTW_F_TE_DEBUG_ANNOTATIONS 4       /* TrackEvent.debug_annotations */
#define PTW_F_TE_TYPE 9                    /* TrackEvent.type */
#define PTW_F_TE_NAME_IID 10               /* TrackEvent.name_iid */
#define PTW_F_TE_TRACK_UUID 11             /* TrackEvent.track_uuid */
#define PTW_F_TE_NAME 23                   /* TrackEvent.name */
#define PTW_F_TE_CATEGORIES 22             /* TrackEvent.categories */
#define PTW_F_TE_COUNTER_VALUE 30          /* TrackEvent.counter_value */
#define PTW_F_TE_EXTRA_COUNTER_VALUES 12   /* TrackEvent.extra_counter_values */
#define PTW_F_TE_EXTRA_COUNTER_TRACK_UUIDS 31 /* TrackEvent.extra_counter_track_uuids */
#define PTW_F_TE_DOUBLE_COUNTER_VALUE 44   /* TrackEvent.double_counter_value */
#define PTW_F_TE_FLOW_IDS 47               /* TrackEvent.flow_ids */
#define PTW_F_TE_TERMINATING_FLOW_IDS 48   /* TrackEvent.terminating_flow_ids */
#define PTW_F_TE_LEGACY_EVENT 6            /* TrackEvent.legacy_event */
#define PTW_F_TE_CALLSTACK 55              /* TrackEvent.callstack (inline) */
#define PTW_F_TE_CALLSTACK_IID 56          /* TrackEvent.callstack_iid */
#define PTW_F_ICS_FRAMES 1                 /* InlineCallstack.frames */
#define PTW_F_ICS_FUNCTION_NAME 1          /* InlineCallstack.Frame.function_name */
#define PTW_F_ICS_SOURCE_FILE 2            /* InlineCallstack.Frame.source_file */
#define PTW_F_ICS_LINE_NUMBER 3            /* InlineCallstack.Frame.line_number */
#define PTW_F_TE_LOG_MESSAGE 21            /* TrackEvent.log_message */
#define PTW_F_TE_SOURCE_LOCATION_IID 34    /* TrackEvent.source_location_iid */
/* TrackEvent.LegacyEvent */
#define PTW_F_LE_PHASE 2                   /* LegacyEvent.phase */
#define PTW_F_LE_DURATION_US 3             /* LegacyEvent.duration_us */
#define PTW_F_LE_INSTANT_EVENT_SCOPE 14    /* LegacyEvent.instant_event_scope */
#define PTW_LE_SCOPE_GLOBAL 1              /* InstantEventScope.SCOPE_GLOBAL */
#define PTW_LE_SCOPE_PROCESS 2             /* InstantEventScope.SCOPE_PROCESS */
#define PTW_F_LE_UNSCOPED_ID 6             /* LegacyEvent.unscoped_id */
#define PTW_F_LE_LOCAL_ID 10               /* LegacyEvent.local_id */
#define PTW_F_LE_BIND_ID 8                 /* LegacyEvent.bind_id */
#define PTW_F_LE_BIND_TO_ENCLOSING 12      /* LegacyEvent.bind_to_enclosing */
#define PTW_F_LE_FLOW_DIRECTION 13         /* LegacyEvent.flow_direction */
/* TrackEvent.Type */
#define PTW_TE_TYPE_SLICE_BEGIN 1 /* TYPE_SLICE_BEGIN */
#define PTW_TE_TYPE_SLICE_END 2   /* TYPE_SLICE_END */
#define PTW_TE_TYPE_INSTANT 3     /* TYPE_INSTANT */
#define PTW_TE_TYPE_COUNTER 4     /* TYPE_COUNTER */

/* DebugAnnotation */
#define PTW_F_DA_NAME_IID 1                /* DebugAnnotation.name_iid */
#define PTW_F_DA_BOOL_VALUE 2              /* DebugAnnotation.bool_value */
#define PTW_F_DA_UINT_VALUE 3              /* DebugAnnotation.uint_value */
#define PTW_F_DA_INT_VALUE 4               /* DebugAnnotation.int_value */
#define PTW_F_DA_DOUBLE_VALUE 5            /* DebugAnnotation.double_value */
#define PTW_F_DA_STRING_VALUE 6            /* DebugAnnotation.string_value */
#define PTW_F_DA_POINTER_VALUE 7           /* DebugAnnotation.pointer_value */
#define PTW_F_DA_NAME 10                   /* DebugAnnotation.name */
#define PTW_F_DA_DICT_ENTRIES 11           /* DebugAnnotation.dict_entries */
#define PTW_F_DA_ARRAY_VALUES 12           /* DebugAnnotation.array_values */
#define PTW_F_DA_STRING_VALUE_IID 17       /* DebugAnnotation.string_value_iid */

/* TrackDescriptor */
#define PTW_F_TD_UUID 1                    /* TrackDescriptor.uuid */
#define PTW_F_TD_NAME 2                    /* TrackDescriptor.name */
#define PTW_F_TD_PROCESS 3                 /* TrackDescriptor.process */
#define PTW_F_TD_THREAD 4                  /* TrackDescriptor.thread */
#define PTW_F_TD_PARENT_UUID 5             /* TrackDescriptor.parent_uuid */
#define PTW_F_TD_COUNTER 8                 /* TrackDescriptor.counter */
#define PTW_F_TD_CHILD_ORDERING 11         /* TrackDescriptor.child_ordering */
#define PTW_F_TD_SIBLING_ORDER_RANK 12     /* TrackDescriptor.sibling_order_rank */
#define PTW_F_TD_SIBLING_MERGE_BEHAVIOR 15 /* TrackDescriptor.sibling_merge_behavior */
#define PTW_TD_SIBLING_MERGE_NONE 2        /* SIBLING_MERGE_BEHAVIOR_NONE */
#define PTW_F_TD_PROCESS_ORDERING 19       /* TrackDescriptor.process_ordering (uuid 0) */
#define PTW_F_TD_THREAD_ORDERING 20        /* TrackDescriptor.thread_ordering (uuid 0) */
/* TrackDescriptor.ChildTracksOrdering */
#define PTW_CHILD_ORDERING_EXPLICIT 3      /* EXPLICIT: by sibling_order_rank */
/* TrackDescriptor.ChildTracksOrdering */
#define PTW_TD_ORDERING_EXPLICIT 3         /* EXPLICIT */
/* TrackDescriptor.ProcessOrdering / ThreadOrdering */
#define PTW_PROCESS_ORDERING_EXPLICIT 1    /* PROCESS_ORDERING_EXPLICIT */
#define PTW_THREAD_ORDERING_EXPLICIT 1     /* THREAD_ORDERING_EXPLICIT */

/* ProcessDescriptor */
#define PTW_F_PD_PID 1                     /* ProcessDescriptor.pid */
#define PTW_F_PD_PROCESS_NAME 6            /* ProcessDescriptor.process_name */
/* ThreadDescriptor */
#define PTW_F_THD_PID 1                    /* ThreadDescriptor.pid */
#define PTW_F_THD_TID 2                    /* ThreadDescriptor.tid */
#define PTW_F_THD_THREAD_NAME 5            /* ThreadDescriptor.thread_name */
/* CounterDescriptor */
#define PTW_F_CD_TYPE 1                    /* CounterDescriptor.type */
#define PTW_CD_TYPE_THREAD_TIME_NS 1       /* COUNTER_THREAD_TIME_NS */
#define PTW_F_CD_UNIT 3                    /* CounterDescriptor.unit */
#define PTW_F_CD_UNIT_NAME 6               /* CounterDescriptor.unit_name */

/* TraceStats (what the tracer reports: loss, ring-buffer figures) */
#define PTW_F_TS_BUFFER_STATS 1                /* TraceStats.buffer_stats */
#define PTW_F_TS_WRITER_STATS 18               /* TraceStats.writer_stats */
#define PTW_F_BS_BUFFER_SIZE 12                /* BufferStats.buffer_size */
#define PTW_F_BS_BYTES_WRITTEN 1               /* BufferStats.bytes_written */
#define PTW_F_BS_BYTES_OVERWRITTEN 13          /* BufferStats.bytes_overwritten */
#define PTW_F_BS_CHUNKS_WRITTEN 2              /* BufferStats.chunks_written */
#define PTW_F_BS_CHUNKS_OVERWRITTEN 3          /* BufferStats.chunks_overwritten */
#define PTW_F_BS_TRACE_WRITER_PACKET_LOSS 19   /* BufferStats.trace_writer_packet_loss */
#define PTW_F_WS_SEQUENCE_ID 1                 /* WriterStats.sequence_id */
#define PTW_F_WS_BUFFER 4                      /* WriterStats.buffer */

#endif /* PTW_PB_FIELDS_H */
