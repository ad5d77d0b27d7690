// The library's version, and the language it needs. Every header that includes no other scaleup
// header includes this one first, so a translation unit compiled with an older standard stops at
// the first scaleup header with a message that says why, instead of failing somewhere inside
// (g++ 12 without -std=c++20: "'span' in namespace 'std' does not name a template type").
#pragma once

#if defined(_MSVC_LANG) && _MSVC_LANG > __cplusplus
#define SCALEUP_CPLUSPLUS _MSVC_LANG
#else
#define SCALEUP_CPLUSPLUS __cplusplus
#endif

#if SCALEUP_CPLUSPLUS < 202002L
#error "scaleup needs C++20: compile with -std=c++20 or later (pkg-config --cflags scaleup has it)"
// A missing include is fatal in every compiler: nothing after the message above is compiled.
#include <scaleup_needs_cxx20>
#endif

#define SCALEUP_VERSION_MAJOR 0
#define SCALEUP_VERSION_MINOR 1
#define SCALEUP_VERSION_PATCH 0
