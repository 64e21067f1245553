/* unload_a.c - test plugin A (tests/test_tracer_unload.c): the body of
 * unload_plugin.h with the prefix "A.".
 * SPDX-License-Identifier: Apache-2.0 */
#define UNLOAD_PLUGIN_PREFIX "A"
#include "unload_plugin.h"
