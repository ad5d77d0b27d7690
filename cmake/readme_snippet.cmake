# Checks that a fenced code block of README.md is, line for line, the marked region of the
# example that ctest builds and runs, so the README shows code that is known to work.
#   README.md:  <!-- snippet: PATH -->, a ```cpp block, <!-- end snippet -->
#   PATH:       the lines between "// README: begin" and "// README: end"
# MAX_LINES bounds the block (what the README promises). MUTATE=1 changes one line of the
# example's region first: the comparison must then fail (a test of this check).
#
# cmake -DREADME=... -DSOURCE_DIR=... -DSNIPPET=PATH [-DMAX_LINES=N] [-DMUTATE=1]
#       -P readme_snippet.cmake

cmake_minimum_required(VERSION 3.25)

foreach(var README SOURCE_DIR SNIPPET)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "readme_snippet.cmake: -D${var}=... is required")
  endif()
endforeach()

include(${CMAKE_CURRENT_LIST_DIR}/marked_region.cmake)

marked_region("${README}" "<!-- snippet: ${SNIPPET} -->" "<!-- end snippet -->" _ block _)
if(NOT block MATCHES "^```cpp\n(.*)```\n$")
  message(FATAL_ERROR "${README}: the snippet of ${SNIPPET} is not one ```cpp block")
endif()
set(block "${CMAKE_MATCH_1}")
marked_region("${SOURCE_DIR}/${SNIPPET}" "// README: begin" "// README: end" _ code _)

if(MUTATE)
  string(REGEX REPLACE "\n([^\n]*)\n" "\n\\1 // changed\n" code "${code}")
endif()

if(NOT block STREQUAL code)
  file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/readme_block.txt" "${block}")
  file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/example_region.txt" "${code}")
  message(FATAL_ERROR "README.md's snippet differs from ${SNIPPET}'s marked region:\n"
                      "  diff ${CMAKE_CURRENT_BINARY_DIR}/readme_block.txt "
                      "${CMAKE_CURRENT_BINARY_DIR}/example_region.txt")
endif()

if(DEFINED MAX_LINES)
  string(REGEX MATCHALL "\n" newlines "${code}")
  list(LENGTH newlines lines)
  if(lines GREATER MAX_LINES)
    message(FATAL_ERROR "${SNIPPET}: ${lines} lines, more than the ${MAX_LINES} promised")
  endif()
endif()
message(STATUS "${SNIPPET}: README.md shows it line for line")
