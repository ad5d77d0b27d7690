# Checks that README.md's firmware size table is the one the build measured (sizes.txt, written
# by measure_sizes.cmake when the image is linked), or with UPDATE=1 writes it there.
#   README.md: <!-- firmware sizes: begin -->, a ``` block holding the table, <!-- firmware sizes: end -->
# MUTATE=1 changes one figure of the measured table first: the check must then fail (a test of
# this check).
#
# cmake -DREADME=README.md -DSIZES=build/examples/firmware/cortex_m4/sizes.txt [-DUPDATE=1]
#       [-DMUTATE=1] -P examples/firmware/readme_sizes.cmake

cmake_minimum_required(VERSION 3.25)

foreach(var README SIZES)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "readme_sizes.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT EXISTS "${SIZES}")
  message(FATAL_ERROR "${SIZES} does not exist: build the target example_firmware_cortex_m4")
endif()

include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/marked_region.cmake)
marked_region("${README}" "<!-- firmware sizes: begin -->" "<!-- firmware sizes: end -->"
              head shown tail)

file(READ "${SIZES}" table)
if(MUTATE)
  # The image's text size, one more.
  if(NOT table MATCHES "\n *([0-9]+)([^\n]*firmware\\.elf)")
    message(FATAL_ERROR "${SIZES}: no line for firmware.elf")
  endif()
  math(EXPR more "${CMAKE_MATCH_1} + 1")
  string(REPLACE "${CMAKE_MATCH_1}${CMAKE_MATCH_2}" "${more}${CMAKE_MATCH_2}" table "${table}")
endif()
set(want "```\n${table}```\n")

if(UPDATE)
  if(NOT shown STREQUAL want)
    file(WRITE "${README}" "${head}${want}${tail}")
    message(STATUS "${README}: the firmware size table is now the measured one")
  endif()
  return()
endif()
if(NOT shown STREQUAL want)
  message(FATAL_ERROR
    "README.md's firmware size table differs from what this build measured (${SIZES}).\n"
    "The measured table:\n${table}"
    "Write it into README.md with:\n"
    "  cmake -DREADME=${README} -DSIZES=${SIZES} -DUPDATE=1 -P ${CMAKE_CURRENT_LIST_FILE}\n"
    "(the figures are arm-none-eabi-gcc's: another version of the toolchain gives others).")
endif()
message(STATUS "README.md's firmware size table is the one this build measured")
