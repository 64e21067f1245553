/* unload_b.c - test plugin B (tests/test_tracer_unload.c): the body of
 * unload_plugin.h with the prefix "B.".
 * SPDX-License-Identifier: Apache-2.0 */
#define UNLOAD_PLUGIN_PREFIX "B"
#include "unload_plugin.h"
