/* The checks the C ABI's test programs share: a failed one is reported and counted in
 * `failures`, and the program goes on. */
#ifndef SCALEUP_CAPI_TESTS_CHECK_H
#define SCALEUP_CAPI_TESTS_CHECK_H

#include <stdio.h>
#include <string.h>

extern int failures;

#define CHECK(cond)                                              \
  do {                                                           \
    if (!(cond)) {                                               \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                \
    }                                                            \
  } while (0)

/* A string of an error (pointer and length) equals a C string. */
static inline int same(const char* s, size_t n, const char* want) {
  return s && n == strlen(want) && memcmp(s, want, n) == 0;
}

/* transport.c */
void test_go_back_n(void);
void test_endpoint(void);
void test_instance(void);

#endif
