# Checks that `scaleup_docgen --check` notices drift in a copy of docs/wire-format.md.
#   cmake -DDOCGEN=<scaleup_docgen> -DDOC=<wire-format.md> -DWORK_DIR=<scratch dir> -P docgen_check.cmake
foreach(var DOCGEN DOC WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "docgen_check.cmake: -D${var}=... is required")
  endif()
endforeach()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(copy ${WORK_DIR}/wire-format.md)

file(READ ${DOC} text)
set(begin_marker "<!-- BEGIN GENERATED: field tables -->")
string(FIND "${text}" "${begin_marker}" begin_at)
if(begin_at EQUAL -1)
  message(FATAL_ERROR "${DOC} has no BEGIN GENERATED marker")
endif()

# Alter one generated line: the first "Seed: " line after the BEGIN marker.
string(SUBSTRING "${text}" 0 ${begin_at} head)
string(SUBSTRING "${text}" ${begin_at} -1 tail)
string(FIND "${tail}" "\nSeed: " seed_at)
if(seed_at EQUAL -1)
  message(FATAL_ERROR "${DOC}: no \"Seed: \" line in the generated region")
endif()
string(SUBSTRING "${tail}" 0 ${seed_at} tail_a)
math(EXPR rest_at "${seed_at} + 7")
string(SUBSTRING "${tail}" ${rest_at} -1 tail_b)
file(WRITE ${copy} "${head}${tail_a}\nSeed: drifted ${tail_b}")

# 1. The unmodified file passes (so that step 2 fails for the right reason).
execute_process(COMMAND ${DOCGEN} --check ${DOC} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "--check on ${DOC}: expected exit 0, got ${rc}\n${err}")
endif()

# 2. The drifted copy fails with exit 1, naming the fix.
execute_process(COMMAND ${DOCGEN} --check ${copy} RESULT_VARIABLE rc ERROR_VARIABLE err
                OUTPUT_VARIABLE out)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "--check on the drifted copy: expected exit 1, got ${rc}\n${out}${err}")
endif()
if(NOT "${out}${err}" MATCHES "run: scaleup_docgen --update")
  message(FATAL_ERROR "--check on the drifted copy: message lacks the --update hint\n${err}")
endif()
if(NOT "${out}${err}" MATCHES "Seed: drifted")
  message(FATAL_ERROR "--check on the drifted copy: message does not show the changed line\n${err}")
endif()

# 3. --update repairs it, leaving the rest of the file alone.
execute_process(COMMAND ${DOCGEN} --update ${copy} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "--update on the drifted copy: expected exit 0, got ${rc}\n${err}")
endif()
file(READ ${copy} repaired)
if(NOT repaired STREQUAL text)
  message(FATAL_ERROR "--update on the drifted copy did not restore the original file")
endif()

# 4. No markers: exit 2.
set(bare ${WORK_DIR}/no-markers.md)
file(WRITE ${bare} "# no generated region here\n")
execute_process(COMMAND ${DOCGEN} --check ${bare} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "--check on a file without markers: expected exit 2, got ${rc}\n${err}")
endif()
