/* version.h - the ptw version, in one place.
 * SPDX-License-Identifier: Apache-2.0
 *
 * The three numbers below are the only copy: PTW_VERSION is made from
 * them, the programs print it (ptw-convert --version, ptw-dump
 * --version), and `make install` reads them for the Version of ptw.pc. */
#ifndef PTW_VERSION_H
#define PTW_VERSION_H

#ifdef __cplusplus
extern "C" {
#endif

#define PTW_VERSION_MAJOR 0
#define PTW_VERSION_MINOR 5
#define PTW_VERSION_PATCH 0

#define PTW_VERSION_STR_(x) #x
#define PTW_VERSION_XSTR_(x) PTW_VERSION_STR_(x)

/* "MAJOR.MINOR.PATCH", a string literal ("0.3.0"). */
#define PTW_VERSION                                              \
	PTW_VERSION_XSTR_(PTW_VERSION_MAJOR) "."                 \
	PTW_VERSION_XSTR_(PTW_VERSION_MINOR) "."                 \
	PTW_VERSION_XSTR_(PTW_VERSION_PATCH)

/* The version libptw was built with (PTW_VERSION of its build), to
 * compare with the header's at run time. */
const char *ptw_version(void);

#ifdef __cplusplus
}
#endif

#endif /* PTW_VERSION_H */
