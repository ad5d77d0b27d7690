# Checks that `scaleup_docgen --check-lua` notices a wireshark/scaleup.lua that is not what its
# template and the field tables make, and that --update-lua repairs it.
#   cmake -DDOCGEN=<scaleup_docgen> -DTEMPLATE=<scaleup.lua.in> -DLUA=<scaleup.lua>
#         -DWORK_DIR=<scratch dir> -P lua_check.cmake
foreach(var DOCGEN TEMPLATE LUA WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "lua_check.cmake: -D${var}=... is required")
  endif()
endforeach()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
file(READ ${LUA} text)
file(READ ${TEMPLATE} template)

function(expect rc want what)
  if(NOT rc EQUAL want)
    message(FATAL_ERROR "${what}: expected exit ${want}, got ${rc}\n${ARGN}")
  endif()
endfunction()

# 1. The committed file passes (so that the next steps fail for the right reason).
execute_process(COMMAND ${DOCGEN} --check-lua ${TEMPLATE} ${LUA} RESULT_VARIABLE rc
                ERROR_VARIABLE err)
expect(${rc} 0 "--check-lua on ${LUA}" ${err})

# 2. A generated line changed (the SUE Ethertype the tables give): exit 1, naming the line and the
#    command that repairs it.
string(FIND "${text}" "  ethertype_sue = " at)
if(at EQUAL -1)
  message(FATAL_ERROR "${LUA}: no ethertype_sue constant among the generated tables")
endif()
string(REPLACE "  ethertype_sue = " "  ethertype_sue = 1 + " drifted "${text}")
set(copy ${WORK_DIR}/scaleup.lua)
file(WRITE ${copy} "${drifted}")
execute_process(COMMAND ${DOCGEN} --check-lua ${TEMPLATE} ${copy} RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
expect(${rc} 1 "--check-lua on a drifted copy" ${out}${err})
if(NOT "${out}${err}" MATCHES "run: scaleup_docgen --update-lua ")
  message(FATAL_ERROR "--check-lua on a drifted copy: no --update-lua hint\n${out}${err}")
endif()
if(NOT "${out}${err}" MATCHES "ethertype_sue = 1 \\+ ")
  message(FATAL_ERROR "--check-lua on a drifted copy: the changed line is not shown\n${err}")
endif()

# 3. --update-lua repairs it byte for byte.
execute_process(COMMAND ${DOCGEN} --update-lua ${TEMPLATE} ${copy} RESULT_VARIABLE rc
                ERROR_VARIABLE err)
expect(${rc} 0 "--update-lua on the drifted copy" ${err})
file(READ ${copy} repaired)
if(NOT repaired STREQUAL text)
  message(FATAL_ERROR "--update-lua did not restore the generated file")
endif()

# 4. The template changed (its Lua, not the tables): the committed file no longer passes.
set(edited ${WORK_DIR}/scaleup.lua.in)
file(WRITE ${edited} "${template}-- one more line\n")
execute_process(COMMAND ${DOCGEN} --check-lua ${edited} ${LUA} RESULT_VARIABLE rc
                ERROR_VARIABLE err)
expect(${rc} 1 "--check-lua after the template changed" ${err})

# 5. A template without the marker line the tables take the place of: exit 2.
set(bare ${WORK_DIR}/bare.lua.in)
file(WRITE ${bare} "-- no generated tables here\n")
execute_process(COMMAND ${DOCGEN} --check-lua ${bare} ${LUA} RESULT_VARIABLE rc ERROR_VARIABLE err)
expect(${rc} 2 "--check-lua with a template without its marker" ${err})
