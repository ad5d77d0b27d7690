# A region of a text file between two marker lines, for the checks that hold a block of
# README.md equal to what the build has (readme_snippet.cmake, examples/firmware/readme_sizes.cmake).
#
# marked_region(FILE BEGIN END HEAD BODY TAIL): in FILE, the first line holding BEGIN and the
# next line after it holding END; BODY gets the lines strictly between them, HEAD everything
# through the BEGIN line, TAIL everything from the start of the END line (HEAD BODY TAIL is the
# file). A missing marker is a fatal error naming the file.
function(marked_region file begin end head body tail)
  file(READ "${file}" text)
  string(FIND "${text}" "${begin}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${file}: no \"${begin}\" marker")
  endif()
  string(SUBSTRING "${text}" ${at} -1 rest)
  string(FIND "${rest}" "\n" eol)
  if(eol EQUAL -1)
    message(FATAL_ERROR "${file}: nothing after the \"${begin}\" marker")
  endif()
  math(EXPR at "${at} + ${eol} + 1")
  string(SUBSTRING "${text}" 0 ${at} h)
  string(SUBSTRING "${text}" ${at} -1 rest)
  string(FIND "${rest}" "${end}" stop)
  if(stop EQUAL -1)
    message(FATAL_ERROR "${file}: no \"${end}\" marker after \"${begin}\"")
  endif()
  # Back to the start of the END marker's line.
  string(SUBSTRING "${rest}" 0 ${stop} b)
  string(FIND "${b}" "\n" last_eol REVERSE)
  math(EXPR keep "${last_eol} + 1")
  string(SUBSTRING "${rest}" 0 ${keep} b)
  string(SUBSTRING "${rest}" ${keep} -1 t)
  set(${head} "${h}" PARENT_SCOPE)
  set(${body} "${b}" PARENT_SCOPE)
  set(${tail} "${t}" PARENT_SCOPE)
endfunction()
