#!/bin/sh
# readme-example.sh HEADING LANG - prints the first ```LANG block after the
# line HEADING of README.md (run from the source tree): the examples the
# install checks build exactly as the README shows them.
# SPDX-License-Identifier: Apache-2.0
awk -v h="$1" -v l="$2" '$0 == h {f = 1} f && $0 == "```" l {p = 1; next}
	p && /^```/ {exit} p' README.md
